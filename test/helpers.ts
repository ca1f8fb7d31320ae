/**
 * Shared test plumbing: a fresh state root per test, the real CLI run as a
 * child process (`bin/actors`, built by `npm test` first), and polling for
 * conditions on real files and processes.
 */
import {spawnSync} from 'node:child_process'
import {execa} from 'execa'
import {
  chmodSync,
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import {tmpdir} from 'node:os'
import {join, resolve} from 'node:path'
import {afterEach} from 'vitest'
import {randomUUID} from 'node:crypto'
import {RUN_SCHEMA} from '../src/lib/base/records/run.js'
import {LINEAGE_VARS} from '../src/lib/kernel/runs/lineage.js'
import {writeJsonAtomic} from '../src/lib/base/platform/state-files.js'
import {isActorsError, type ActorsError} from '../src/lib/base/platform/errors.js'
import {discoverCgroupBases} from '../src/lib/kernel/containment/cgroup-fs.js'
import {unitsDir} from '../src/lib/kernel/containment/cgroup-unit.js'
import {homeKey} from '../src/lib/kernel/containment/index.js'
import {TEST_SLURM_CONF} from './slurm-cluster.js'

export const ROOT = resolve(import.meta.dirname, '..')
export const BIN = join(ROOT, 'bin', 'actors')

/** A new empty temp directory, removed by the returned cleanup. */
export function tempDir(prefix = 'actors-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix))
}

/**
 * Remove a temp dir. A supervisor finishing its last writes (the state root's
 * doorbell is rung after result.json) can briefly re-populate it, so retry.
 */
/** A copy of the installed CLI (in a temp dir) without the named dist bundles, and their code caches; remove it with removeDir. */
export function packageWithout(bundles: string[]): string {
  const pkg = tempDir('actors-pkg-')
  for (const part of ['bin', 'dist', 'recipes', 'package.json'])
    cpSync(join(ROOT, part), join(pkg, part), {recursive: true})
  symlinkSync(join(ROOT, 'node_modules'), join(pkg, 'node_modules'))
  for (const bundle of bundles) {
    rmSync(join(pkg, 'dist', `${bundle}.cjs`))
    rmSync(join(pkg, 'dist', `${bundle}.cache`), {force: true})
  }
  return pkg
}

/**
 * A copy of the installed CLI that any user can read (dirs 0755, files 0644, bin/actors 0755), for tests that
 * run it as another user: the checkout itself may sit where that user cannot read (a clone under /root).
 * The bundles need nothing from node_modules outside a terminal (ink and react only). Remove it with removeDir.
 */
export function packageReadableByAll(): string {
  const pkg = packageWithout([])
  const open = (path: string) => {
    const stat = lstatSync(path)
    if (stat.isSymbolicLink()) return
    chmodSync(path, stat.isDirectory() || stat.mode & 0o100 ? 0o755 : 0o644)
    if (stat.isDirectory()) for (const name of readdirSync(path)) open(join(path, name))
  }
  open(pkg)
  return pkg
}

/**
 * Whether this process may run Node as user nobody (root, and this Node's binary is one that user may execute: a
 * Node installed under /root is not). Tests that run as another user skip when it says no.
 */
export function nobodyRunsNode(): boolean {
  return (
    process.getuid?.() === 0 &&
    spawnSync('setpriv', ['--reuid=nobody', '--regid=nogroup', '--clear-groups', process.execPath, '-e', '0'], {
      cwd: '/',
      timeout: 30_000,
    }).status === 0
  )
}

export function removeDir(dir: string): void {
  for (let attempt = 0; ; attempt++) {
    try {
      rmSync(dir, {recursive: true, force: true, maxRetries: 5, retryDelay: 20})
      return
    } catch (error) {
      if (attempt >= 20) throw error
      spawnSync('sleep', ['0.1'])
    }
  }
}

/**
 * A `home()` that makes a fresh state root on each call (named `prefix...`);
 * every one is removed, its live Runs killed, after each test.
 */
export function homesPerTest(prefix: string): () => string {
  let homes: string[] = []
  afterEach(() => {
    for (const dir of homes) removeHome(dir)
    homes = []
  })
  return () => {
    const dir = tempDir(prefix)
    homes.push(dir)
    return dir
  }
}

/** A fresh state root with a `recipes/` folder holding `files` (file name → YAML text). */
export function homeWithRecipes(files: Record<string, string>): {home: string; recipes: string} {
  const home = tempDir()
  const recipes = join(home, 'recipes')
  mkdirSync(recipes)
  for (const [name, text] of Object.entries(files)) writeFileSync(join(recipes, name), text)
  return {home, recipes}
}

/** Write a sine tone with sox (the real audio the music tests play); throws naming sox's complaint when it fails. */
export function writeTone(
  file: string,
  seconds: number,
  hz: number,
  format: {rate: number; channels: number} = {rate: 22050, channels: 2},
): string {
  const r = spawnSync(
    'sox',
    [
      '-n',
      '-r',
      String(format.rate),
      '-c',
      String(format.channels),
      file,
      'synth',
      String(seconds),
      'sine',
      String(hz),
    ],
    {
      encoding: 'utf8',
    },
  )
  if (r.status !== 0) throw new Error(`sox failed writing ${file}: ${r.stderr || r.error?.message}`)
  return file
}

/**
 * End every live Run of a test's state root, then remove it. Live Runs are
 * killed through `actors control RUN kill` (the product's own path); anything
 * still running afterwards that was started for this root (every CLI child of
 * a test carries ACTORS_HOME=<home>, and supervisors, commands and players
 * inherit it) is SIGKILLed, so a failing test leaks no supervisor or sleep.
 */
export function removeHome(home: string): void {
  for (const id of existsSync(join(home, 'runs')) ? readdirSync(join(home, 'runs')) : []) {
    try {
      if (['running', 'paused', 'queued'].includes(readJson(join(home, 'runs', id, 'run.json')).status))
        actors(home, ['control', id, 'kill'])
    } catch {}
  }
  killProcessesOfHome(home)
  removeCgroupsOfHome(home)
  removeDir(home)
}

/**
 * Remove the (now empty) cgroups the root's Runs left when their supervisors were killed outright (SPEC: Containment),
 * deepest first: a parent Run's cgroup holds its children's (`<run>/actors/<key>/<child>`), and rmdir takes only a
 * cgroup with none below it.
 */
function removeCgroupsOfHome(home: string): void {
  const bases = discoverCgroupBases()
  if (!bases) return
  for (const base of [bases.unified, ...Object.values(bases.v1)])
    if (base) removeCgroupTree(unitsDir(base, homeKey(home)))
}

/** rmdir `dir` and every cgroup below it, deepest first; one that still holds a process stays (and so do those above). */
function removeCgroupTree(dir: string): void {
  let children: string[]
  try {
    children = readdirSync(dir, {withFileTypes: true})
      .filter((e) => e.isDirectory())
      .map((e) => join(dir, e.name))
  } catch {
    return
  }
  for (const child of children) removeCgroupTree(child)
  try {
    rmdirSync(dir)
  } catch {}
}

/** The two containments a trust or containment case runs under: cgroup (where this machine can make one) and tracked. */
export const CONTAINMENT_MODES = [
  {mode: 'cgroup', env: {ACTORS_CONTAINMENT: 'cgroup'}, skip: discoverCgroupBases() === null},
  {mode: 'tracked', env: {ACTORS_CONTAINMENT: 'tracked'}, skip: false},
] as const

/** Pids of live processes (other than this one) whose environment says ACTORS_HOME=<home>. */
export function processesOfHome(home: string): number[] {
  const marker = Buffer.from(`\0ACTORS_HOME=${home}\0`)
  const found: number[] = []
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry)
    if (!Number.isInteger(pid) || pid === process.pid || !processAlive(pid)) continue
    try {
      // A leading NUL so the marker matches a whole variable, even the first one.
      if (Buffer.concat([Buffer.from([0]), readFileSync(`/proc/${pid}/environ`)]).indexOf(marker) >= 0) found.push(pid)
    } catch {}
  }
  return found
}

/** SIGKILL every process started for `home` until none is left (a dying supervisor may still be starting one). */
function killProcessesOfHome(home: string): void {
  for (let round = 0; round < 20; round++) {
    const pids = processesOfHome(home)
    if (pids.length === 0) return
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL')
      } catch {}
    }
    spawnSync('sleep', ['0.05'])
  }
}

export interface CliResult {
  code: number | null
  stdout: string
  stderr: string
  /** stdout parsed as JSON (when it parses). */
  json: any
}

/** Environment for the CLI: isolated home, no inherited lineage, CI on (no Ink). */
export function cliEnv(home: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  // SLURM_CONF: the private test cluster only (test/slurm-cluster.ts), never a machine's own.
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ACTORS_HOME: home,
    CI: 'true',
    NO_COLOR: '1',
    SLURM_CONF: TEST_SLURM_CONF,
  }
  for (const name of [...LINEAGE_VARS, 'ACTORS_RECIPES']) delete env[name]
  return {...env, ...extra}
}

function parseJson(text: string): any {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/** Run `actors ARGS` synchronously. */
export function actors(
  home: string,
  args: string[],
  options: {env?: NodeJS.ProcessEnv; cwd?: string; input?: string; timeout?: number} = {},
): CliResult {
  const r = spawnSync(process.execPath, [BIN, ...args], {
    env: cliEnv(home, options.env),
    cwd: options.cwd ?? ROOT,
    input: options.input ?? '',
    encoding: 'utf8',
    timeout: options.timeout ?? 30_000,
  })
  return {code: r.status, stdout: r.stdout, stderr: r.stderr, json: parseJson(r.stdout)}
}

/** Run `actors ARGS` asynchronously (for concurrency tests); never rejects, like the sync form. */
export async function actorsAsync(
  home: string,
  args: string[],
  options: {env?: NodeJS.ProcessEnv; cwd?: string} = {},
): Promise<CliResult> {
  const r = await execa(process.execPath, [BIN, ...args], {
    env: cliEnv(home, options.env),
    extendEnv: false,
    cwd: options.cwd ?? ROOT,
    stdin: 'ignore',
    reject: false,
    stripFinalNewline: false,
  })
  return {code: r.exitCode ?? null, stdout: r.stdout, stderr: r.stderr, json: parseJson(r.stdout)}
}

/** `actors ARGS` with umask 000, as a careless shell would run it. */
export function actorsUmask000(h: string, args: string[]): {code: number | null; stdout: string; stderr: string} {
  const r = spawnSync('sh', ['-c', 'umask 000; exec "$0" "$@"', process.execPath, BIN, ...args], {
    env: cliEnv(h),
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 30_000,
  })
  return {code: r.status, stdout: r.stdout, stderr: r.stderr}
}

/** Poll `check` until it returns a truthy value (or throw after `timeoutMs`). */
export async function waitFor<T>(
  check: () => T | undefined | false | null,
  timeoutMs = 10_000,
  what = 'condition',
): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    let value: T | undefined | false | null
    try {
      value = check()
    } catch {
      value = undefined
    }
    if (value) return value
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs}ms waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 25))
  }
}

export function readJson(file: string): any {
  return JSON.parse(readFileSync(file, 'utf8'))
}

/** Whether a pid is alive and not a zombie. */
export function processAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z'
  } catch {
    return false
  }
}

/** The state letter of a process (R, S, T, Z...), or undefined when gone. */
/** A token nobody else uses, `prefix` first: the command lines of a test's processes carry it (see survivors). */
export function uniqueToken(prefix: string): string {
  return `${prefix}${process.pid}x${Math.floor(Math.random() * 1e9)}`
}

/** Whether `file` is a symbolic link (false when missing). */
export function isLink(file: string): boolean {
  try {
    return lstatSync(file).isSymbolicLink()
  } catch {
    return false
  }
}

/** Live (non-zombie) pids whose command line contains `text`. */
export function survivors(text: string): number[] {
  const found: number[] = []
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry)
    if (!Number.isInteger(pid) || pid === process.pid) continue
    try {
      if (processState(pid) === 'Z') continue
      if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').includes(text)) found.push(pid)
    } catch {}
  }
  return found
}

/** The parent pid of `pid` (field 4 of /proc/<pid>/stat), or undefined once it is gone. */
export function parentOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
  } catch {
    return undefined
  }
}

export function processState(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3)
  } catch {
    return undefined
  }
}

/**
 * Wait until the Run is terminal and return its result.json. The supervisor
 * writes result.json first and then mirrors the ending into run.json, so wait
 * for both: a caller may then read (or rewrite) run.json without racing that
 * last write.
 */
export async function waitForResult(stateDir: string, timeoutMs = 15_000): Promise<any> {
  return waitFor(
    () => {
      const result = readJson(join(stateDir, 'result.json'))
      const meta = readJson(join(stateDir, 'run.json'))
      return meta.run_instance_id === result.run_instance_id && meta.status === result.status && result
    },
    timeoutMs,
    `result.json in ${stateDir}, mirrored in run.json`,
  )
}

/**
 * Write a finished Run's run.json and result.json directly (kernel writer,
 * kernel schema), as if launched and ended at `ended`: for tests that need
 * hundreds of finished Runs without launching hundreds of processes on a
 * 2-core machine. `meta` and `result` add or override fields; returns the state dir.
 */
export function writeFinishedRun(
  home: string,
  id: string,
  options: {ended?: string; status?: string; meta?: Record<string, unknown>; result?: Record<string, unknown>} = {},
): string {
  const dir = join(home, 'runs', id)
  mkdirSync(dir, {recursive: true})
  const instance = randomUUID()
  const ended = options.ended ?? new Date().toISOString()
  const status = options.status ?? 'done'
  const exitCode = status === 'done' ? 0 : 1
  writeJsonAtomic(join(dir, 'run.json'), {
    schema: RUN_SCHEMA,
    run: id,
    run_instance_id: instance,
    recipe: null,
    recipe_file: null,
    values: {},
    argv: ['true'],
    plan: {mode: 'single', steps: [['true']]},
    cwd: home,
    env: {},
    created_at: ended,
    started_at: ended,
    ended_at: ended,
    status,
    owner: 'default',
    root: id,
    depth: 0,
    control: [],
    notification: 'normal',
    retry: 1,
    kill_grace_ms: 5000,
    exit_code: exitCode,
    duration_ms: 5,
    ...options.meta,
  })
  writeJsonAtomic(join(dir, 'result.json'), {
    status,
    exit_code: exitCode,
    signal: null,
    reason: null,
    attempts: 1,
    started_at: ended,
    completed_at: ended,
    duration_ms: 5,
    artifacts: [],
    run_instance_id: instance,
    ...options.result,
  })
  return dir
}

/**
 * The run index's entries, as paths relative to index/: live markers in
 * index/ itself, queued ones in index/queue/<owner tag>/ (dot-files, the
 * queue's cursor among them, left out).
 */
export function indexEntryPaths(home: string): string[] {
  const top = join(home, 'index')
  if (!existsSync(top)) return []
  const found: string[] = []
  for (const name of readdirSync(top)) {
    if (name.startsWith('.')) continue
    if (name !== 'queue') {
      found.push(name)
      continue
    }
    for (const tag of readdirSync(join(top, 'queue'))) {
      if (tag.startsWith('.')) continue // the queues' cursor files live beside their directories
      for (const marker of readdirSync(join(top, 'queue', tag)))
        if (!marker.startsWith('.')) found.push(join('queue', tag, marker))
    }
  }
  return found
}

/** The names of the run index's entries (indexEntryPaths without their directories). */
export function indexEntries(home: string): string[] {
  return indexEntryPaths(home).map((path) => path.slice(path.lastIndexOf('/') + 1))
}

/** The ActorsError `action` refuses with (its exit code and message); throws when it does not refuse, or fails otherwise. */
export function refusal(action: () => unknown): ActorsError {
  try {
    action()
  } catch (error) {
    if (isActorsError(error)) return error
    throw error
  }
  throw new Error('expected a refusal')
}

/** The cgroup2 mount's own root (found as the kernel lists it, like cgroup-fs.ts): writing a pid there leaves every unit. */
export function cgroup2Root(): string | undefined {
  for (const line of readFileSync('/proc/self/mountinfo', 'utf8').split('\n')) {
    const dash = line.indexOf(' - ')
    if (dash >= 0 && line.slice(dash + 3).startsWith('cgroup2 ')) return line.slice(0, dash).split(' ')[4]
  }
  return undefined
}

/** The Run's run.json once its supervisor recorded its command's processes (the command runs). */
export function commandStarted(dir: string, timeoutMs = 15_000): Promise<any> {
  return waitFor(
    () => {
      const meta = readJson(join(dir, 'run.json'))
      return meta.children_processes?.length > 0 && meta
    },
    timeoutMs,
    `${dir} started`,
  )
}

/**
 * tmux on its own server socket: runs one tmux command and returns its
 * output, throwing with tmux's stderr when it fails. Starting a session
 * is tried once more when tmux's own server dies as it starts ("server
 * exited unexpectedly", seen once on a loaded CI machine): that is the
 * machine, not the view under test.
 */
export function tmuxOn(socket: string): (...args: string[]) => string {
  const once = (args: string[]) => spawnSync('tmux', ['-L', socket, ...args], {encoding: 'utf8'})
  return (...args: string[]) => {
    let r = once(args)
    if (r.status !== 0 && args[0] === 'new-session' && /server exited unexpectedly/.test(r.stderr)) {
      spawnSync('sleep', ['0.2'])
      r = once(args)
    }
    if (r.status !== 0) throw new Error(`tmux ${args.join(' ')} failed: ${r.stderr}`)
    return r.stdout
  }
}
