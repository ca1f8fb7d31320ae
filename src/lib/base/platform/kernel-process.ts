/**
 * Whether a live process runs this kernel: Node (this very binary, or the
 * `node` first on PATH) running this install's `bin/actors` or its
 * supervisor (`dist/supervisor.cjs`) as its script, or a supervisor that
 * has renamed itself having written its end, with nothing injected
 * (NODE_OPTIONS, LD_PRELOAD). Every lock of a Run's state dir and the
 * supervision host's lock are taken by such a process; a lock kept by
 * anything else is nobody's to wait for: pid 1's identity written into a
 * `.lock` by a Run, or a lookalike a Run started (`node -e … dist/cli.cjs`,
 * a copy of `tail` named `node`). A Run can start a genuine one itself:
 * this tells the kernel from anything else, and end-first.ts bounds how
 * long a genuine holder is waited for.
 */
import {readFileSync, realpathSync, statSync} from 'node:fs'
import {delimiter, join, resolve} from 'node:path'
import {packageRoot} from './package-root.js'
import {envValue, environOf} from './process-environ.js'

/**
 * The variables that would run code of someone's choosing in a process that
 * passes for the kernel: an adopting supervisor and the supervision host are
 * started without them (executors/local.ts, host-client.ts), and a process
 * of the kernel's scripts that has one is a stand-in.
 */
export const INJECTING_ENV = ['NODE_OPTIONS', 'LD_PRELOAD'] as const

/**
 * What a supervisor renames its process to once it has written its Run's end
 * (supervisor/supervise.ts): its command line no longer names the Run, so a
 * wait need not wait out its exit. It may still hold a lock for a moment.
 */
export const ENDED_SUPERVISOR_TITLE = 'actors-supervisor: ended'

/**
 * What a supervisor the kernel starts for others (an adopter, the supervision
 * host) is started without, and what proves a process of that script a
 * stand-in: besides INJECTING_ENV, the loader's audit libraries and an
 * OpenSSL configuration, which Node reads at start (an engine it names is a
 * library loaded into the process). Not asked of every kernel process: a
 * user's own OPENSSL_CONF must not make their CLI a stranger to a lock.
 */
export const SUPERVISOR_INJECTING_ENV = [
  ...INJECTING_ENV,
  'LD_AUDIT',
  'OPENSSL_CONF',
  'OPENSSL_ENGINES',
  'OPENSSL_MODULES',
] as const

/**
 * The only variables the supervision host is started with (host-client.ts),
 * and the only ones a host a launcher hands a Run to may have: what locates
 * the user and the state root, the locale and the kernel's own settings.
 * Anything else could change what Node or a library it loads does at start
 * (a list of what to refuse is never complete: LD_AUDIT, OPENSSL_CONF, ...);
 * a hosted command's environment is its launcher's, never the host's.
 */
const HOST_ENV = /^(PATH|PWD|HOME|USER|LOGNAME|SHELL|TMPDIR|TZ|LANG|LANGUAGE|LC_[A-Z_]+|ACTORS_[A-Z0-9_]+)$/

/** `env` with only the variables a supervision host is started with (HOST_ENV). */
export function hostEnvironment(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(env).filter(([name]) => HOST_ENV.test(name)))
}

/** The variables of `env` that no supervision host the kernel starts has (HOST_ENV), sorted. */
export function variablesNoHostHas(env: NodeJS.ProcessEnv): string[] {
  return Object.keys(env)
    .filter((name) => !HOST_ENV.test(name))
    .sort()
}

export function runsThisKernel(pid: number): boolean {
  let args: string[]
  let cwd: string
  try {
    if (!isKnownNode(statSync(`/proc/${pid}/exe`))) return false
    args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')
    cwd = realpathSync(`/proc/${pid}/cwd`)
  } catch {
    return false
  }
  if (args[0] !== ENDED_SUPERVISOR_TITLE && !runsAKernelScript(args, cwd)) return false
  const environ = environOf(pid)
  return environ !== undefined && INJECTING_ENV.every((name) => envValue(environ, name) === undefined)
}

/** Whether command line `args` (of a process working in `cwd`) runs one of the kernel's scripts. */
function runsAKernelScript(args: string[], cwd: string): boolean {
  const script = args[1]
  if (!script || script.startsWith('-')) return false
  try {
    return kernelScripts().includes(realpathSync(resolve(cwd, script)))
  } catch {
    return false
  }
}

let scripts: string[] | undefined

function kernelScripts(): string[] {
  const root = realpathSync(packageRoot())
  scripts ??= [join(root, 'bin', 'actors'), join(root, 'dist', 'supervisor.cjs')]
  return scripts
}

/**
 * Whether live process `pid` runs Node (isKnownNode): the least any process
 * of the kernel does. A lock named for one that does not (pid 1, a `sleep`)
 * was taken by nobody, whatever else is known of it.
 */
export function runsNode(pid: number): boolean {
  try {
    return isKnownNode(statSync(`/proc/${pid}/exe`))
  } catch {
    return false
  }
}

let nodes: Array<{dev: number; ino: number}> | undefined

/** Whether `exe` is this process's Node binary or the `node` first on PATH (a kernel started by `#!/usr/bin/env node`). */
function isKnownNode(exe: {dev: number; ino: number}): boolean {
  nodes ??= [process.execPath, onPath('node')].flatMap((file) => {
    try {
      const stat = file ? statSync(file) : undefined
      return stat ? [{dev: stat.dev, ino: stat.ino}] : []
    } catch {
      return []
    }
  })
  return nodes.some((node) => node.dev === exe.dev && node.ino === exe.ino)
}

/** The first executable named `name` on this process's PATH. */
function onPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (!dir) continue
    try {
      const file = join(dir, name)
      if (statSync(file).isFile()) return file
    } catch {}
  }
  return undefined
}
