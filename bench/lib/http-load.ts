/**
 * A closed-loop HTTP load with microsecond latencies (autocannon rounds to whole milliseconds): `clients`
 * keep-alive connections, each sending its next request when the previous one is answered.
 */
import { Agent, request } from 'node:http';
import { percentile } from './report';

export interface LoadRequest {
  method: 'GET' | 'POST';
  path: string;
  headers?: Record<string, string>;
  body?: (index: number) => unknown;
}

export interface LoadResult {
  requests: number;
  perSecond: number;
  /** Milliseconds. */
  p50: number;
  p99: number;
  failed: number;
}

function once(base: URL, agent: Agent, spec: LoadRequest, index: number): Promise<number> {
  const body = spec.body ? JSON.stringify(spec.body(index)) : undefined;
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: base.hostname,
        port: base.port,
        path: spec.path,
        method: spec.method,
        agent,
        headers: {
          ...spec.headers,
          ...(body ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } : {}),
        },
      },
      (res) => {
        res.resume();
        res.once('end', () => resolve(res.statusCode ?? 0));
        res.once('error', reject);
      },
    );
    req.once('error', reject);
    req.end(body);
  });
}

export async function httpLoad(
  url: string,
  spec: LoadRequest,
  options: { clients: number; seconds: number },
): Promise<LoadResult> {
  const base = new URL(url);
  const agent = new Agent({ keepAlive: true, maxSockets: options.clients });
  const latencies: number[] = [];
  let failed = 0;
  let index = 0;
  const started = performance.now();
  const deadline = started + options.seconds * 1000;
  await Promise.all(
    Array.from({ length: options.clients }, async () => {
      while (performance.now() < deadline) {
        const sent = performance.now();
        const status = await once(base, agent, spec, index++);
        latencies.push(performance.now() - sent);
        if (status < 200 || status >= 300) failed++;
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  agent.destroy();
  latencies.sort((a, b) => a - b);
  return {
    requests: latencies.length,
    perSecond: latencies.length / elapsed,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    failed,
  };
}
