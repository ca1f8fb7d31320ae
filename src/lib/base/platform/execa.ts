/**
 * execa, loaded the first time a child process is started off the hot paths:
 * it lives in dist/execa.cjs (built from ./execa-bundle.ts), not in the
 * bundles every command starts with. Evaluating it costs about 40 ms and
 * 10 MB, as much again as Node's own start, so the launch
 * (src/lib/kernel/executors/local.ts starting the supervisor) and the supervisor
 * (src/lib/services/supervisor/supervise.ts starting the command) keep
 * node:child_process: `run -- CMD`, inspect, wait and every live Run never
 * evaluate it (the README, Layout).
 */
import {join} from 'node:path'
import {loadBundle} from './bundles.js'
import {nodeModule} from './builtins.js'
import {packageRoot} from './package-root.js'

/** What dist/execa.cjs (./execa-bundle.ts) exports of execa. */
export type Execa = typeof import('./execa-bundle.js')

let execa: Execa | undefined

/**
 * The execa functions of ./execa-bundle.ts, loading dist/execa.cjs on first
 * use. From the sources (the tests) too: execa is ES modules only, which
 * Node 20 cannot require(), and the tests build dist/ first.
 */
export function execaLibrary(): Execa {
  execa ??= loadBundle<Execa>('execa', () =>
    nodeModule().createRequire(import.meta.url)(join(packageRoot(), 'dist', 'execa.cjs')),
  )
  return execa
}
