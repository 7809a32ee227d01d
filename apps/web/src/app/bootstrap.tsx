/**
 * Start-up: runtime config → envelope codec → stored session → render. The expiry timer, the
 * 'Authorization Failed' handling and other tabs' sign-in/out all go through the one session store.
 * Loaded by main.tsx once zod is configured.
 */
import { createWebEnvelopeCodec, MESSAGES } from '@lendlock/contract';
import { QueryClient } from '@tanstack/react-query';
import { setNonce } from 'get-nonce';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { createApiClient } from '../api/client';
import { readStyleNonce } from '../lib/cspNonce';
import { App } from './App';
import { loadRuntimeConfig } from './config';
import { createAppRouter } from './router';
import { createSessionActivity } from './session/activity';
import { watchSessionExpiry } from './session/expiry';
import { createSessionStore, EXPIRY_STORAGE_KEY, SESSION_STORAGE_KEY } from './session/store';

/** Starts the console in `root`; when that fails (e.g. /config.json unreachable) says so in the page. */
export async function start(root: HTMLElement): Promise<void> {
  try {
    await startConsole(root);
  } catch (error) {
    console.error('Lendlock console failed to start', error);
    root.textContent = MESSAGES.loginNetworkFailure;
  }
}

async function startConsole(root: HTMLElement): Promise<void> {
  // The style tags that Mantine's modals inject (react-remove-scroll, through get-nonce) carry the CSP nonce.
  const nonce = readStyleNonce(document);
  if (nonce) setNonce(nonce);
  const config = await loadRuntimeConfig();
  const codec = await createWebEnvelopeCodec(config.envelopeKey);
  const sessions = createSessionStore({ codec, storage: window.localStorage });
  const activity = createSessionActivity(window.localStorage);
  await sessions.load();

  const router = createAppRouter();
  // On 'Authorization Failed' the client has already cleared the session; home then sends a signed-out
  // user to /login.
  const api = createApiClient({
    config,
    codec,
    sessions,
    onAuthorizationFailed: () => void router.navigate('/'),
    activity,
  });
  watchSessionExpiry(sessions, {
    intervalMs: config.sessionCheckIntervalMs,
    onExpired: () => void router.navigate('/login', { replace: true }),
  });
  // Signing in or out in another tab changes this tab too.
  window.addEventListener('storage', (event) => {
    if (event.key === null || event.key === SESSION_STORAGE_KEY || event.key === EXPIRY_STORAGE_KEY) {
      void sessions.load();
    }
  });

  const queryClient = new QueryClient({
    defaultOptions: { queries: { retry: 1, refetchOnWindowFocus: false } },
  });
  createRoot(root).render(
    <StrictMode>
      <App
        services={{ config, sessions, api, activity }}
        router={router}
        queryClient={queryClient}
        styleNonce={readStyleNonce(document)}
      />
    </StrictMode>,
  );
}
