import { defineProject } from 'vitest/config';

export default defineProject({ test: { name: 'device-sim', include: ['src/**/*.test.ts'] } });
