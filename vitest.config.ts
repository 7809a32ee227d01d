import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    projects: ['packages/contract', 'packages/testkit', 'apps/server', 'apps/web', 'apps/device-sim', 'e2e'],
    pool: 'forks',
    maxWorkers: 2,
  },
});
