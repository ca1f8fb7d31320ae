/** Where this package is installed, found by walking up from the running module to its package.json. */
import {existsSync} from 'node:fs'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'

let cached: string | undefined

export function packageRoot(): string {
  if (cached) return cached
  let dir = dirname(fileURLToPath(import.meta.url))
  while (!existsSync(join(dir, 'package.json')) || !existsSync(join(dir, 'bin', 'actors'))) {
    const up = dirname(dir)
    if (up === dir) throw new Error('actors: cannot find the package root (package.json with bin/actors)')
    dir = up
  }
  cached = dir
  return dir
}

/** The bundled supervisor entry point started for every Run. */
export function supervisorScript(): string {
  return join(packageRoot(), 'dist', 'supervisor.cjs')
}

/** The worker thread of a large index rebuild (src/boot/index-worker.ts; history/index-rebuild.ts). */
export function indexWorkerScript(): string {
  return join(packageRoot(), 'dist', 'index-worker.cjs')
}

/** The directory holding the `actors` executable, put on every Run's PATH so nested `actors run` resolves. */
export function binDir(): string {
  return join(packageRoot(), 'bin')
}
