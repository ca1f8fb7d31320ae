/**
 * Whether a live process runs this kernel: Node running this install's
 * `bin/actors` or one of its bundles (`dist/*.cjs`: the supervisor, the
 * host, the fast paths). Every lock of a Run's state dir is taken by such a
 * process; a lock kept by anything else (pid 1's identity written into a
 * `.lock` by a Run) is nobody's to wait for.
 */
import {readFileSync, readlinkSync, realpathSync} from 'node:fs'
import {basename, join, resolve, sep} from 'node:path'
import {packageRoot} from './package-root.js'

/** Arguments looked at for the script (Node's own options come first). */
const SCRIPT_ARGS_LOOKED_AT = 4

export function runsThisKernel(pid: number): boolean {
  let args: string[]
  let cwd: string
  try {
    // Node's binary is `node` (`nodejs` on some distributions): a shell renamed by `exec -a` is still a shell here.
    if (!basename(readlinkSync(`/proc/${pid}/exe`)).startsWith('node')) return false
    args = readFileSync(`/proc/${pid}/cmdline`, 'utf8')
      .split('\0')
      .slice(1, 1 + SCRIPT_ARGS_LOOKED_AT)
    cwd = readlinkSync(`/proc/${pid}/cwd`)
  } catch {
    return false
  }
  const root = realRoot()
  const ours = (path: string) => path === join(root, 'bin', 'actors') || path.startsWith(join(root, 'dist') + sep)
  return args.some((arg) => {
    if (arg === '' || arg.startsWith('-')) return false
    try {
      return ours(realpathSync(resolve(cwd, arg)))
    } catch {
      return false
    }
  })
}

let cachedRoot: string | undefined

function realRoot(): string {
  cachedRoot ??= realpathSync(packageRoot())
  return cachedRoot
}
