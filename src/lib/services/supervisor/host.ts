/**
 * The supervision host (the default; `ACTORS_SUPERVISION=run` opts out; docs/runs.md
 * "Supervision"): one Node process per state root, `dist/supervisor.cjs
 * --host HOME`, runs the supervision of every local Run `actors run` hands
 * it (supervise.ts, one Supervisor per Run) and exits once it has
 * supervised nothing for a few seconds. A launcher hands it a Run over
 * `$ACTORS_HOME/supervision/host.sock` (executors/host-client.ts), starting
 * it when none answers; it answers once the Run's unit is made and its
 * command started, or with the refusal.
 *
 * Exclusion: the host binds the socket, and records itself in host.json,
 * under host.lock, after finding no live host recorded there; it leaves
 * (unlinks both) under the same lock. So two hosts of one root never listen.
 * Its death (SIGKILL) leaves every Run under its wrapper: readers take them
 * over as they would a lost per-Run supervisor's (executors/take-over.ts).
 *
 * What one Run's supervision still does synchronously, stalling the others
 * while it lasts: the Run's lock and run.json writes during the run
 * (withLockSync against a holder that keeps the lock: capped at 5 s here; the
 * end's own lock is waited for without blocking), the start of queued siblings at an
 * end (tree/after-run.ts), the sweeps of a unit being ended
 * (containment/ endUnit between its awaits) and the hashing of artifacts at
 * the end (up to 256 MiB each).
 */
import {closeSync, constants, lstatSync, openSync, unlinkSync} from 'node:fs'
import {createServer, type Socket} from 'node:net'
import {dirname, join, resolve} from 'node:path'
import {capSyncLockWaits, withLockSync, type LockOptions} from '../../base/platform/file-lock.js'
import {makePrivateDir, makeSocketPrivate, O_PATH, writeStateFile} from '../../base/platform/private-files.js'
import {
  isSameProcess,
  isStopped,
  readProcessIdentity,
  type ProcessIdentity,
} from '../../base/platform/process-identity.js'
import type {RunMeta} from '../../base/records/run.js'
import {
  hostLockPath,
  hostRecordPath,
  hostSocketPath,
  heldDirs,
  kernelSettings,
  supervisionDir,
} from '../../base/records/supervision-host.js'
import {stateDirKey} from '../../base/platform/home.js'
import {supervisorOfProcess} from '../../base/records/supervisor-args.js'
import {runsThisKernel} from '../../base/platform/kernel-process.js'
import type {SupervisionHost} from './host-context.js'
import {noteSupervisorDeath} from './no-space.js'
import {outsideEveryRun} from '../../kernel/containment/outside-runs.js'
import {cutLooseFromARun, liveHost, supervisorEnvironment} from '../../kernel/executors/index.js'
import {environRecord} from '../../base/platform/process-environ.js'
import {attributeDifference} from '../../base/platform/process-attributes.js'
import {superviseRun} from './supervise.js'

/** How long a host with nothing to supervise waits for another Run before it exits (ms). */
const IDLE_MS = 3000
/** The longest one synchronous lock wait blocks the host (and so every Run it supervises). */
const SYNC_LOCK_WAIT_CAP_MS = 5000
/**
 * host.lock is taken by this state root's hosts alone: one a Run wrote naming another live process (pid 1, or a
 * neighbour's genuine `actors wait`) is broken as stale, and a stopped host is no taker either (it lets go of
 * nothing until resumed, and a launcher never asks it).
 */
function hostLock(home: string): LockOptions {
  return {
    takenOnlyBy: (pid) => runsThisKernel(pid) && supervisorOfProcess(pid)?.host === resolve(home) && !isStopped(pid),
  }
}

/** The longest request line a launcher sends (its environment included). */
const MAX_REQUEST_BYTES = 1 << 20
/**
 * Connections served at once, and how long one may take to send its line: a launcher connects and writes at once.
 * A Run that opens thousands and sends nothing would otherwise take every descriptor the host has, which the
 * Runs it supervises need for their files (red-team 16 N16-10).
 */
const MAX_CONNECTIONS = 256
const REQUEST_MS = 5000

/** A launcher's request: the Run's state dir, and the launcher (whose environment the command starts from). */
interface HandOver {
  dir: string
  launcher: ProcessIdentity
}

/**
 * The environment a handed-over Run's command starts from: the launcher's own (/proc/PID/environ), never one a
 * request states, once the launcher is proven: alive as `launcher` says, outside every Run, and holding the Run's
 * state dir open (a descriptor only that process can have opened), under this host's kernel settings, and with the
 * same umask, limits, nice and the rest a child inherits (process-attributes.ts). Else
 * why not, and the launch goes on without the host. A request from inside a Run (which could name any dir and environment) is declined so.
 */
function provenLauncherEnvironment(launcher: unknown, dir: string, home: string): NodeJS.ProcessEnv | string {
  const identity = launcher as ProcessIdentity | undefined
  if (!identity || typeof identity.pid !== 'number' || !isSameProcess(identity)) return 'the launcher is not alive'
  if (!outsideEveryRun(identity.pid)) return 'the launcher runs inside a Run'
  // This host was detached: its parent is the reaper a Run's cut-loose helper would be handed to as well.
  const loose = cutLooseFromARun(identity.pid, home, process.ppid)
  if (loose)
    return `the launcher may be a helper a Run cut loose (pid ${loose}: an orphan started in a live Run's directory)`
  if (!heldDirs(identity.pid).includes(stateDirKey(dir))) return `the launcher does not hold ${dir} open`
  const env = environRecord(identity.pid)
  if (!env) return "the launcher's environment cannot be read"
  if (kernelSettings(env) !== kernelSettings(process.env))
    return 'this host runs under other kernel settings (ACTORS_CONTAINMENT, ...)'
  // The command inherits this host's umask, limits, nice and the rest, not the launcher's: only when they are the same.
  const differs = attributeDifference(identity.pid)
  if (differs) return `the launcher's process attributes differ from this host's: ${differs}`
  return supervisorEnvironment(home, undefined, env)
}

/** The Run handed over records a supervisor already (a second hand-over, or one a process of a Run asked for). */
class SupervisedElsewhere extends Error {
  constructor(
    message: string,
    readonly pid: number,
  ) {
    super(message)
  }
}

class Host {
  /** State dirs (by stateDirKey) under supervision here, and connections not yet answered. */
  private readonly active = new Set<string>()
  private pending = 0
  private readonly signalHandlers = new Set<(signal: string) => void>()
  private idle: NodeJS.Timeout | undefined
  private readonly server = createServer((socket) => this.serve(socket))
  private readonly idleMs: number

  constructor(private readonly home: string) {
    const idle = Number(process.env.ACTORS_SUPERVISION_IDLE_MS)
    this.idleMs = Number.isFinite(idle) && idle > 0 ? idle : IDLE_MS
    this.server.maxConnections = MAX_CONNECTIONS // more are closed as they come
  }

  /** Bind the socket unless a host lives already; false then (this process leaves). */
  listen(): boolean {
    makePrivateDir(supervisionDir(this.home)) // 0700, refused when a link
    const socket = hostSocketPath(this.home)
    return withLockSync(
      hostLockPath(this.home),
      () => {
        if (liveHost(this.home)) return false
        const there = lstatSync(socket, {throwIfNoEntry: false})
        if (there?.isSymbolicLink()) throw new Error(`${socket} is a symbolic link; remove it`)
        if (there) unlinkSync(socket) // a host that died left it
        // bind and listen happen in this call (an error is reported on the next tick): the socket is there when it returns.
        this.server.listen(socket)
        makeSocketPrivate(socket)
        // Held for its life: a launcher proves the file at host.sock is this very one (a Run's socket renamed
        // over it keeps its listener's bound path in /proc/net/unix, so that alone proves nothing).
        openSync(socket, O_PATH | constants.O_NOFOLLOW)
        const identity = readProcessIdentity(process.pid)
        // The path as bound, which /proc/net/unix names it by: a launcher proves the listener there is this process.
        const record = {schema: 'actors.host/1', identity, socket}
        writeStateFile(hostRecordPath(this.home), `${JSON.stringify(record)}\n`)
        return true
      },
      hostLock(this.home),
    )
  }

  start(): void {
    // One thread serves every Run: a synchronous lock wait (a Run's lock kept by a process of it) blocks them all
    // for at most this long, as `actors mcp` caps its own; the end of a Run waits for its lock without blocking.
    capSyncLockWaits(SYNC_LOCK_WAIT_CAP_MS)
    this.server.on('error', (error) => {
      process.stderr.write(`actors supervision host: ${error.message}\n`)
      process.exit(1)
    })
    for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const)
      process.on(signal, () => {
        // Told to stop with nothing under way: leave. Else every Run hears it, as its own supervisor would.
        if (signal !== 'SIGHUP' && this.active.size === 0 && this.pending === 0) this.leave()
        for (const handler of this.signalHandlers) handler(signal)
      })
    this.armIdle()
  }

  private serve(socket: Socket): void {
    this.pending++
    this.disarmIdle()
    let text = ''
    let answered = false
    const answer = (reply: Record<string, unknown>) => {
      if (answered) return
      answered = true
      this.pending--
      socket.end(`${JSON.stringify(reply)}\n`)
      this.armIdle()
    }
    socket.on('error', () => answer({error: 'connection lost'}))
    socket.on('close', () => answer({error: 'connection closed'}))
    // From the connection on, not from the last byte: one that drips a byte now and then is closed all the same.
    const tooSlow = setTimeout(() => socket.destroy(), REQUEST_MS)
    socket.on('close', () => clearTimeout(tooSlow))
    socket.setEncoding('utf8')
    socket.on('data', (chunk: string) => {
      text += chunk
      const end = text.indexOf('\n')
      if (end < 0 && text.length <= MAX_REQUEST_BYTES) return
      clearTimeout(tooSlow) // the line is in: the answer comes once the Run's command started, however long that takes
      let request: HandOver | undefined
      try {
        request = end < 0 ? undefined : (JSON.parse(text.slice(0, end)) as HandOver)
      } catch {}
      // Whatever a request holds, it is answered, never the end of the host (and of every Run it supervises).
      let refusal: string | undefined
      try {
        refusal = this.supervise(request, answer)
      } catch (error) {
        refusal = `the request could not be read: ${(error as Error).message}`
      }
      if (refusal) answer({error: refusal})
    })
  }

  /** Supervise the Run the request names, `answer`ing once its command started; or why not. */
  private supervise(
    request: HandOver | undefined,
    answer: (reply: Record<string, unknown>) => void,
  ): string | undefined {
    if (!request) return 'the request is not one JSON line of at most 1 MiB'
    const dir = typeof request.dir === 'string' ? resolve(request.dir) : ''
    // Only a state dir of this root (a direct child of runs/), and not one under supervision here already.
    if (!dir || resolve(dirname(dir)) !== resolve(this.home, 'runs'))
      return `${JSON.stringify(request.dir) ?? 'no dir'} is not a state dir of ${this.home}`
    const key = stateDirKey(dir)
    // Under supervision here already (another request for it came first): it is in this host's hands.
    if (this.active.has(key)) {
      answer({pid: process.pid})
      return undefined
    }
    // Declined, not refused: the launch goes on with a supervisor of its own (host-client.ts).
    const env = provenLauncherEnvironment(request.launcher, dir, this.home)
    if (typeof env === 'string') {
      answer({error: env, declined: true})
      return undefined
    }
    this.active.add(key)
    const context = this.contextFor(dir, env, () => answer({pid: process.pid}))
    superviseRun(dir, undefined, context)
      .catch((error) => {
        // A Run another supervisor has is left as it is: its stderr.log and end reserve are that supervisor's.
        if (!(error instanceof SupervisedElsewhere)) noteSupervisorDeath(dir, error)
        // Which supervisor has it: a launcher whose first host took the Run and died unanswered learns it is not lost.
        const elsewhere = error instanceof SupervisedElsewhere ? {supervised_by: error.pid} : {}
        answer({error: (error as Error).message, ...elsewhere})
      })
      .finally(() => {
        context.ended()
        answer({pid: process.pid})
        this.active.delete(key)
        this.armIdle()
      })
    return undefined
  }

  private contextFor(dir: string, env: NodeJS.ProcessEnv, started: () => void): SupervisionHost {
    let fd: number | undefined
    const handlers = this.signalHandlers
    return {
      env,
      onSignal(handler) {
        handlers.add(handler)
        return () => handlers.delete(handler)
      },
      claim(current: RunMeta) {
        const pid = current.process_identity?.pid
        if (pid !== undefined)
          throw new SupervisedElsewhere(`${join(dir, 'run.json')}: supervised already (pid ${pid})`, pid)
      },
      hold() {
        fd ??= openSync(dir, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW)
      },
      ended() {
        if (fd !== undefined) closeSync(fd)
        fd = undefined
      },
      started,
    }
  }

  private armIdle(): void {
    if (this.active.size > 0 || this.pending > 0) return
    this.disarmIdle()
    this.idle = setTimeout(() => this.leaveIfIdle(), this.idleMs)
  }

  private disarmIdle(): void {
    if (this.idle) clearTimeout(this.idle)
    this.idle = undefined
  }

  /** Nothing supervised for idleMs: stop listening and exit (under the host lock, so a new host binds after). */
  private leaveIfIdle(): void {
    if (this.active.size > 0 || this.pending > 0) return
    this.leave()
  }

  private leave(): never {
    try {
      withLockSync(
        hostLockPath(this.home),
        () => {
          for (const file of [hostRecordPath(this.home), hostSocketPath(this.home)])
            try {
              unlinkSync(file)
            } catch {}
        },
        hostLock(this.home),
      )
    } catch {}
    process.exit(0)
  }
}

/** Serve as the supervision host of the state root `home` until idle; returns false when another host serves it. */
export function runSupervisionHost(home: string): boolean {
  const host = new Host(resolve(home))
  if (!host.listen()) return false
  host.start()
  return true
}
