import { type RuntimeConfig, runtimeConfigSchema } from '@lendlock/contract';

export const CONFIG_URL = '/config.json';

/** `GET /config.json`: the runtime configuration, so one build serves any deployment. */
export async function loadRuntimeConfig(fetchFn: typeof fetch = globalThis.fetch): Promise<RuntimeConfig> {
  const response = await fetchFn(CONFIG_URL, { cache: 'no-store', headers: { Accept: 'application/json' } });
  if (!response.ok) throw new Error(`${CONFIG_URL} answered ${response.status}`);
  return runtimeConfigSchema.parse(await response.json());
}
