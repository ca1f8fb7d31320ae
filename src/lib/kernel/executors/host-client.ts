/**
 * The launcher's side of the supervision host (the default; `ACTORS_SUPERVISION=run` turns it off;
 * services/supervisor/host.ts): hand a created Run to the state root's host
 * over `$ACTORS_HOME/supervision/host.sock`, starting the host when none
 * answers, and learn once its command started (or why the host refused it).
 * Any Run can reach that socket: the launcher asks only a host it proves
 * (outside every Run, under its kernel settings, alone at the socket), and
 * holds the Run's dir open while asking, by which the host proves it.
 *
 * Only `actors run` outside any Run hands over (useSupervisionHost): a launch
 * from inside a Run, by a supervisor (a queued child started at a sibling's
 * end) or by the commands that cannot wait for the answer keeps a supervisor
 * of its own, as without the host (a host started inside a Run's unit would
 * end with it).
 */
import {childProcess, nodeNet} from '../../base/platform/builtins.js'
import {makePrivateDir, O_PATH, refuseLinkedDir} from '../../base/platform/private-files.js'
import {supervisorScript} from '../../base/platform/package-root.js'
import {sleep} from '../../base/platform/sleep.js'
import {closeSync, constants, fstatSync, lstatSync, openSync, readdirSync, statSync, type Stats} from 'node:fs'
import {environRecord} from '../../base/platform/process-environ.js'
import {
  isSameProcess,
  isStopped,
  type ProcessIdentity,
  readProcessIdentity,
} from '../../base/platform/process-identity.js'
import {readJsonFile} from '../../base/platform/state-files.js'
import {runsOwnSupervisorScript, supervisorOfProcess} from '../../base/records/supervisor-args.js'
import {hostEnvironment, variablesNoHostHas} from '../../base/platform/kernel-process.js'
import {stateDirKey} from '../../base/platform/home.js'
import {
  hostRecordPath,
  hostSocketPath,
  kernelSettings,
  socketHeldOnlyBy,
  supervisionDir,
} from '../../base/records/supervision-host.js'
import {outsideEveryRun} from '../containment/outside-runs.js'
import {readRunMetaRaw} from '../runs/store.js'
import {supervisorEnvironment} from './supervisor-env.js'
import {LINEAGE_VARS} from '../runs/lineage.js'
import {usageError} from '../../base/platform/errors.js'

/** How long a launcher tries to reach a host (starting one) before it starts a supervisor of its own. */
const REACH_MS = 10_000
/** How long a launcher waits for the answer once the host has its request (the start of a Run: its unit, a spawn). */
const ANSWER_MS = 60_000

let wanted = false
const handoffs = new Map<string, Promise<HandOverResult>>()

/** `damage`: what in the state root keeps every host from starting, and how to mend it (the launch says so). */
export type HandOverResult = {pid: number} | {refused: string} | {unreached: string; damage?: string}

/** ACTORS_SUPERVISION: `host` (the default: one supervising process per state root) or `run` (one per Run). */
export function supervisionMode(env: NodeJS.ProcessEnv = process.env): 'host' | 'run' {
  const mode = env.ACTORS_SUPERVISION ?? ''
  if (mode === '' || mode === 'host') return 'host'
  if (mode === 'run') return 'run'
  throw usageError(
    `ACTORS_SUPERVISION=${JSON.stringify(mode.slice(0, 80))} is not a supervision mode`,
    'set ACTORS_SUPERVISION=host (the default: one supervisor per state root) or ACTORS_SUPERVISION=run (one per Run), or unset it',
    {variable: 'ACTORS_SUPERVISION', value: mode.slice(0, 200)},
  )
}

/**
 * `actors run` asks for the host of `home` (unless ACTORS_SUPERVISION=run): its launches are handed over, then
 * awaited. A link where the host's dir belongs is refused here, before any Run is made.
 */
export function useSupervisionHost(home: string, env: NodeJS.ProcessEnv = process.env): void {
  const inRun = LINEAGE_VARS.some((name) => env[name])
  wanted = supervisionMode(env) === 'host' && !inRun && env.ACTORS_SUPERVISOR !== '1'
  if (wanted) refuseLinkedDir(supervisionDir(home))
}

/** Whether a local start now goes to the host. */
export function handsToHost(): boolean {
  return wanted
}

/** Hand the Run in `dir` to the host (in the background: handOversDone awaits it). */
export function startHandOver(home: string, dir: string): void {
  handoffs.set(dir, handOver(home, dir))
}

/** Every hand-over started by this process, by state dir, once answered. */
export async function handOversDone(): Promise<Map<string, HandOverResult>> {
  const done = new Map<string, HandOverResult>()
  for (const [dir, result] of handoffs) done.set(dir, await result)
  handoffs.clear()
  return done
}

async function handOver(home: string, dir: string): Promise<HandOverResult> {
  refuseLinkedDir(supervisionDir(home))
  // Held open while asking: the host proves this process launched the Run by it (and takes its environment).
  const held = openSync(dir, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW)
  try {
    return await askHost(home, dir)
  } finally {
    closeSync(held)
  }
}

async function askHost(home: string, dir: string): Promise<HandOverResult> {
  // Nothing to wait for: no host can start past this (each would die at its bind or record), however long a
  // launch kept trying (red-team 16 N16-22..30: every launch waited 10 s, silently, until someone mended it).
  const damage = supervisionDamage(home)
  if (damage) return {unreached: damage, damage}
  const request = `${JSON.stringify({dir, launcher: readProcessIdentity(process.pid)})}\n`
  const until = Date.now() + REACH_MS
  let spawnedAt = 0
  let last = 'no host'
  // Asked once with no answer: that host may have taken the Run and died. Then the Run is supervised (a reader
  // takes it over), and neither a second host nor a supervisor of its own may start it again.
  let asked = false
  while (Date.now() < until) {
    const host = liveHost(home)
    // A host this process cannot prove is asked nothing: the Run gets a supervisor of its own.
    const pin = host && (unprovenHost(home, host) ?? pinHostSocket(hostSocketPath(home), host.identity.pid))
    if (typeof pin === 'string') return asked ? afterAsking(dir, pin) : {unreached: pin}
    const reply =
      typeof pin === 'number' && host
        ? await exchangeThrough(pin, hostSocketPath(home), request, host.identity.pid)
        : {unreached: host ? `${hostSocketPath(home)}: gone` : 'no host', asked: false}
    if ('answer' in reply) return asked ? (takenBefore(reply.answer) ?? reply.answer) : reply.answer
    if ('declined' in reply) return {unreached: reply.declined}
    asked ||= reply.asked
    last = reply.unreached
    // None is recorded, or it does not answer: start one (again after a while: one leaving as this asked is gone).
    if (Date.now() - spawnedAt > 1000) {
      spawnHost(home, supervisorEnvironment(home))
      spawnedAt = Date.now()
    }
    await sleep(10)
  }
  return afterAsking(dir, last)
}

/**
 * What in `supervision/` keeps a host from starting, with its mend; undefined when nothing does. The host
 * replaces a file or FIFO at `host.sock` and moves a `host.lock` that is no lock aside; it cannot bind over a
 * directory or a link, nor record itself over anything but a file.
 */
function supervisionDamage(home: string): string | undefined {
  const kind = (path: string) => {
    const stat = lstatSync(path, {throwIfNoEntry: false})
    if (!stat) return undefined
    return stat.isDirectory()
      ? 'a directory'
      : stat.isSymbolicLink()
        ? 'a symbolic link'
        : stat.isFile()
          ? 'file'
          : 'other'
  }
  const dir = supervisionDir(home)
  const top = kind(dir)
  if (top !== undefined && top !== 'a directory') return `${dir} is no directory; remove it (rm '${dir}')`
  const socket = kind(hostSocketPath(home))
  if (socket === 'a directory' || socket === 'a symbolic link')
    return `${hostSocketPath(home)} is ${socket}, where the host's socket belongs; remove it (rm -r '${hostSocketPath(home)}')`
  const record = kind(hostRecordPath(home))
  if (record !== undefined && record !== 'file')
    return `${hostRecordPath(home)} is no file; remove it (rm -r '${hostRecordPath(home)}')`
  return undefined
}

/** After an ask with no answer: the supervisor the Run records (the host took it), or why it was never handed over. */
function afterAsking(dir: string, why: string): HandOverResult {
  const supervisor = readRunMetaRaw(dir)?.process_identity?.pid
  return supervisor === undefined ? {unreached: why} : {pid: supervisor}
}

/**
 * Why the recorded host is not one to hand a Run to, or undefined when it is proven: it runs outside every Run
 * (one a Run started would make later Runs' units inside it), under this launch's kernel settings, and every
 * socket bound at the host's path is its own (not a listener a Run put there).
 */
function unprovenHost(home: string, host: HostRecord): string | undefined {
  const pid = host.identity.pid
  if (!runsOwnSupervisorScript(pid, host.script))
    return `the supervision host (pid ${pid}) is not this install's, as it is`
  if (!outsideEveryRun(pid)) return `the supervision host (pid ${pid}) runs inside a Run`
  // Started in the supervision dir (spawnHost): one a Run's helper started in the Run's directory, cut loose with
  // setsid and a cleared environment (which "outside every Run" cannot tell from a daemon), works elsewhere.
  if (!worksIn(pid, supervisionDir(home)))
    return `the supervision host (pid ${pid}) does not work in ${supervisionDir(home)}, where hosts are started`
  // Stopped (SIGSTOP, a tracer) it answers nothing: asked, the launch would wait out the whole answer time.
  if (isStopped(pid)) return `the supervision host (pid ${pid}) is stopped`
  const env = environRecord(pid)
  if (!env || kernelSettings(env) !== kernelSettings(process.env))
    return `the supervision host (pid ${pid}) runs under other kernel settings`
  const foreign = variablesNoHostHas(env)
  if (foreign.length > 0)
    return `the supervision host (pid ${pid}) runs with variables no host is started with (${foreign.slice(0, 5).join(', ')})`
  const socket = hostSocketPath(home)
  if (!host.socket || !sameFile(host.socket, socket) || !socketHeldOnlyBy(pid, host.socket))
    return `${socket} is not the supervision host's (pid ${pid}) alone`
  return undefined
}

/** Whether process `pid` works in directory `dir` (its /proc cwd is that very directory). */
function worksIn(pid: number, dir: string): boolean {
  return sameFile(`/proc/${pid}/cwd`, dir)
}

function sameFile(a: string, b: string): boolean {
  try {
    const [x, y] = [statSync(a), statSync(b)]
    return x.dev === y.dev && x.ino === y.ino
  } catch {
    return false
  }
}

/**
 * host.sock pinned for one request (opened as a place, never through a
 * link), when it is the very file the host `pid` bound and holds open
 * (host.ts): else why not; undefined when there is no file (the host left,
 * or has not bound it yet). A request connects through the pin, so it
 * reaches that socket whatever is put at the path meanwhile.
 */
function pinHostSocket(socket: string, pid: number): number | string | undefined {
  let fd: number
  try {
    fd = openSync(socket, O_PATH | constants.O_NOFOLLOW)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    return code === 'ENOENT' ? undefined : `${socket}: ${code}`
  }
  const pinned = fstatSync(fd)
  if (pinned.isSocket() && holdsFile(pid, pinned)) return fd
  closeSync(fd)
  return `${socket} is not the socket the supervision host (pid ${pid}) bound`
}

/** Whether process `pid` holds this very file (`file`: its device and inode) open. */
function holdsFile(pid: number, file: Stats): boolean {
  let fds: string[]
  try {
    fds = readdirSync(`/proc/${pid}/fd`)
  } catch {
    return false
  }
  return fds.some((fd) => {
    try {
      const held = statSync(`/proc/${pid}/fd/${fd}`)
      return held.dev === file.dev && held.ino === file.ino
    } catch {
      return false
    }
  })
}

/** A refusal because an earlier host has the Run: as good as its answer. */
function takenBefore(answer: HandOverResult & {supervisedBy?: number}): HandOverResult | undefined {
  return answer.supervisedBy === undefined ? undefined : {pid: answer.supervisedBy}
}

/** What one request came to: the host's answer, its decline, or why it could not be asked (and whether it was). */
type Exchanged =
  | {answer: HandOverResult & {supervisedBy?: number}}
  | {declined: string}
  | {unreached: string; asked: boolean}

/** One request through the pinned socket `pin` (pinHostSocket) to the host `hostPid`, closed after. */
async function exchangeThrough(pin: number, socketPath: string, request: string, hostPid: number): Promise<Exchanged> {
  try {
    return await exchange(`/proc/self/fd/${pin}`, socketPath, request, hostPid)
  } finally {
    closeSync(pin)
  }
}

/** How often a launcher waiting for the host's answer looks whether the host was stopped meanwhile. */
const STOPPED_LOOK_MS = 100

/**
 * One request: the host's answer, or why it could not be asked (nothing listens, it left before answering, or it
 * was stopped: a Run that SIGSTOPs the host as its first act would keep its own launch waiting the whole answer
 * time; asked, the launcher then looks at what the Run records, as for a host that died).
 */
function exchange(connectPath: string, socketPath: string, request: string, hostPid: number): Promise<Exchanged> {
  return new Promise((settle) => {
    let text = ''
    let sent = false
    const socket = nodeNet().connect(connectPath)
    const timer = setTimeout(() => socket.destroy(new Error('no answer in time')), ANSWER_MS)
    const stoppedLook = setInterval(() => {
      if (sent && isStopped(hostPid))
        done({unreached: `the supervision host (pid ${hostPid}) was stopped before it answered`, asked: true})
    }, STOPPED_LOOK_MS)
    const done = (value: Exchanged) => {
      clearTimeout(timer)
      clearInterval(stoppedLook)
      socket.destroy()
      settle(value)
    }
    socket.setEncoding('utf8')
    socket.on('connect', () => {
      sent = true
      socket.write(request)
    })
    socket.on('data', (chunk: string) => {
      text += chunk
      const end = text.indexOf('\n')
      if (end < 0) return
      try {
        const reply = JSON.parse(text.slice(0, end)) as {
          pid?: unknown
          error?: unknown
          supervised_by?: unknown
          declined?: unknown
        }
        if (typeof reply.pid === 'number') return done({answer: {pid: reply.pid}})
        // Declined (other kernel settings): not taken, so the Run gets a supervisor of its own.
        if (reply.declined === true) return done({declined: String(reply.error)})
        const by = typeof reply.supervised_by === 'number' ? {supervisedBy: reply.supervised_by} : {}
        done({answer: {refused: String(reply.error), ...by}})
      } catch {
        done({answer: {refused: 'the supervision host answered something else than JSON'}})
      }
    })
    // Asked and no answer: a host that left (idle) as it was asked took nothing on; one that took the Run answers.
    socket.on('error', (error) =>
      done({unreached: `${socketPath}: ${error.message}${sent ? ' (asked)' : ''}`, asked: sent}),
    )
    socket.on('close', () => done({unreached: `${socketPath}: closed without an answer`, asked: sent}))
  })
}

function spawnHost(home: string, env: NodeJS.ProcessEnv): void {
  // Nothing injected: a launcher proves a host by its running this install's script as it is, with only the
  // variables a host is started with (unprovenHost).
  const clean = hostEnvironment(env)
  // In the supervision dir: a host working in a Run's directory would pass for a helper that Run cut loose.
  try {
    makePrivateDir(supervisionDir(home)) // 0700, refused when a link (as the host refuses it)
  } catch {
    return
  }
  // Detached: a session of its own, so the launcher's terminal and process group never reach it.
  const child = childProcess().spawn(process.execPath, [supervisorScript(), '--host', home], {
    cwd: supervisionDir(home),
    detached: true,
    stdio: 'ignore',
    env: clean,
  })
  child.on('error', () => {})
  child.unref()
}

/** What host.json says of the host that listens: its identity and the socket path it bound. */
export interface HostRecord {
  identity: ProcessIdentity
  /** The supervisor script its command line runs. */
  script: string
  socket?: string
}

/** The host recorded in `home` when it is alive and is one (identity and command line), else undefined. */
export function liveHost(home: string): HostRecord | undefined {
  let record: Partial<HostRecord> | undefined
  try {
    record = readJsonFile(hostRecordPath(home)) as Partial<HostRecord> | undefined
  } catch {
    return undefined
  }
  const identity = record?.identity
  if (!identity || !isSameProcess(identity)) return undefined
  const args = supervisorOfProcess(identity.pid)
  if (!args?.host || stateDirKey(args.host) !== stateDirKey(home)) return undefined
  return {identity, script: args.script, ...(typeof record?.socket === 'string' ? {socket: record.socket} : {})}
}
