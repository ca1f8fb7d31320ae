import {defineConfig} from 'vitest/config'

// Tests spawn real processes; keep parallelism modest on small machines.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'test/**/*.test.tsx'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    maxWorkers: 2,
    fileParallelism: true,
  },
})
