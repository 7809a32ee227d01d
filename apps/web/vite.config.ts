import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

/** The API server the dev server forwards to (`npm run dev:server` listens on 8080). */
const apiTarget = process.env.LENDLOCK_API ?? 'http://localhost:8080';

export default defineConfig({
  plugins: [react()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    // The server's CSP allows `script-src 'self'` only: no inline module-preload polyfill.
    modulePreload: { polyfill: false },
    sourcemap: true,
  },
  server: {
    proxy: Object.fromEntries(
      ['/api', '/keyapi', '/config.json', '/healthz'].map((path) => [path, { target: apiTarget }]),
    ),
  },
});
