// Bundle the CLI and the supervisor with esbuild for fast start-up.
// ink and react stay external: they load (from node_modules) only on the TTY path.
import {build} from 'esbuild'
import {rmSync} from 'node:fs'

rmSync('dist', {recursive: true, force: true})
await build({
  entryPoints: {cli: 'src/cli.ts', supervisor: 'src/supervisor.ts'},
  outdir: 'dist',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  sourcemap: false,
  minify: true,
  legalComments: 'none',
  external: ['typescript', 'ts-node', 'ink', 'react', 'react/jsx-runtime', 'react-devtools-core', 'ink-testing-library'],
  chunkNames: 'chunks/[name]-[hash]',
  // Bundled CommonJS dependencies (oclif) still call require() for Node built-ins.
  banner: {js: "import {createRequire as __actorsRequire} from 'node:module'; const require = __actorsRequire(import.meta.url);"},
  // Views are .tsx (tsconfig: react-jsx); the automatic runtime imports react/jsx-runtime, kept external above.
  jsx: 'automatic',
  logLevel: 'warning',
})
