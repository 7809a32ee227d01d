import { fileURLToPath } from 'node:url';
import { defineProject } from 'vitest/config';

/** Browser tests against the built console served by a real server (see support/server.ts). */
export default defineProject({
  root: fileURLToPath(new URL('.', import.meta.url)),
  test: {
    name: 'e2e',
    include: ['**/*.test.ts'],
    exclude: ['**/node_modules/**'],
    environment: 'node',
    testTimeout: 60_000,
    hookTimeout: 120_000,
    globalSetup: ['./globalSetup.ts'],
    fileParallelism: false,
  },
});
