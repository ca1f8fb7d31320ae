/**
 * `actors lock exec NAME -- COMMAND`: hold a slot exactly while COMMAND runs,
 * like flock(1). The holder is this `actors` process itself (by identity),
 * so a killed `lock exec` frees its slot at the next lock operation even if
 * it could not release it. COMMAND runs in a unit of its own (a cgroup, or a
 * tracked marker; lib/kernel/containment/), recorded on the holder: when `lock
 * exec` dies, the next lock operation ends COMMAND before the slot passes on.
 */
import {randomUUID} from 'node:crypto'
import {constants} from 'node:os'
import {commandStartError} from '../containment/command-check.js'
import {createUnit, endUnit, type Unit} from '../containment/index.js'
import {execaLibrary} from '../../base/platform/execa.js'
import {ActorsError, EXIT} from '../../base/platform/errors.js'
import {inertText} from '../../base/platform/text.js'
import {releaseLocks} from './core.js'
import {acquireLock, appendLockTraces, selfIdentity, type AcquireReply} from './ops.js'
import {lockUnitPrefix} from './liveness.js'

export interface ExecOptions {
  name: string
  slots?: number
  waitMs?: number
  argv: string[]
  /** COMMAND's stdout goes to this process's stderr (`lock exec --json`: stdout is one JSON document). */
  stdoutToStderr?: boolean
}

export interface ExecReply {
  lock: AcquireReply
  exit_code: number
  signal: string | null
}

const FORWARDED = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const

/** Run `argv` holding a slot of lock `name`; resolves with COMMAND's exit code (128+n for a signal, 127 when it cannot start). */
export async function execWithLock(home: string, options: ExecOptions): Promise<ExecReply> {
  const self = selfIdentity()
  // The unit is named after its holder (locks/liveness.ts lockUnitPrefix): a record that pairs a dead holder with
  // another lock exec's cgroup proves nothing, so a lock file a Run rewrote never ends someone else's command.
  const id = `${lockUnitPrefix(self)}${randomUUID()}`
  let childPid: number | undefined
  const unit = createUnit(home, id, {}, () => ({rootPids: childPid ? [childPid] : [], pgids: []}), `ACTORS_UNIT=${id}`)
  const holder = {kind: 'process' as const, ...self, unit: unit.record}
  let lock: AcquireReply
  try {
    lock = await acquireLock(home, {name: options.name, slots: options.slots, waitMs: options.waitMs, holder})
  } catch (error) {
    unit.remove()
    throw error
  }
  const forward = new Map<string, () => void>()
  try {
    return await new Promise<ExecReply>((resolve) => {
      let child
      const argv = unit.wrap(options.argv)
      const missing = argv !== options.argv ? commandStartError(options.argv[0], process.env, process.cwd()) : undefined
      try {
        if (missing) throw new Error(missing)
        child = execaLibrary().execa(argv[0], argv.slice(1), {
          stdio: options.stdoutToStderr ? ['inherit', process.stderr.fd, 'inherit'] : 'inherit',
          env: {...process.env, ...unit.memberEnv()},
          extendEnv: false,
          // Its end is the 'exit' below; a forwarded signal is all it gets (no SIGKILL after); if this process dies
          // first, the unit ends it at the next lock operation (execa would kill it on this process's exit).
          reject: false,
          cleanup: false,
          forceKillAfterDelay: false,
        })
        childPid = child.pid
      } catch (error) {
        process.stderr.write(
          inertText(`actors: could not start ${JSON.stringify(options.argv[0])}: ${(error as Error).message}`) + '\n',
        )
        resolve({lock, exit_code: EXIT.notInstalled, signal: null})
        return
      }
      // Signals for this process (Ctrl-C, a stop) go to COMMAND; the slot is released once it has exited.
      for (const signal of FORWARDED) {
        const handler = () => child.kill(signal)
        forward.set(signal, handler)
        process.on(signal, handler)
      }
      // A command that never started (not found, not executable) has no pid: execa settles with spawn's own words.
      void child.then((result) => {
        if (child.pid !== undefined) return
        process.stderr.write(
          inertText(`actors: could not start ${JSON.stringify(options.argv[0])}: ${result.originalMessage}`) + '\n',
        )
        resolve({lock, exit_code: EXIT.notInstalled, signal: null})
      })
      child.once('exit', (code, signal) => {
        resolve({lock, exit_code: code ?? 128 + (signal ? (constants.signals[signal] ?? 0) : 0), signal})
      })
    })
  } finally {
    for (const [signal, handler] of forward) process.off(signal, handler)
    await endUnitOf(unit)
    try {
      appendLockTraces(releaseLocks(home, [options.name], holder, {strict: false}).traces)
    } catch (error) {
      // biome-ignore lint/correctness/noUnsafeFinally: a failure to release that is not an ActorsError is a bug, never hidden behind COMMAND's exit code
      if (!(error instanceof ActorsError)) throw error
      process.stderr.write(inertText(`actors: ${error.message}`, {multiline: true}) + '\n')
    }
  }
}

/** Whatever COMMAND left behind ends with it (the slot is held exactly while the unit lives); then the unit goes. */
async function endUnitOf(unit: Unit): Promise<void> {
  if (unit.members().length > 0) await endUnit(unit, 1000)
  unit.remove()
}
