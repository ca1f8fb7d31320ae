import {defineConfig} from 'vitest/config'

// Tests spawn real processes; keep parallelism modest on small machines.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'test/**/*.test.tsx'],
    // Kernel modules imported by a test read Runs as every entry point does: with the executors installed.
    setupFiles: ['test/setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    maxWorkers: 2,
    fileParallelism: true,
  },
})
