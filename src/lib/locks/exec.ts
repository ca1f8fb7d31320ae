/**
 * `actors lock exec NAME -- COMMAND`: hold a slot exactly while COMMAND runs,
 * like flock(1). The holder is this `actors` process itself (by identity),
 * so a killed `lock exec` frees its slot at the next lock operation even if
 * it could not release it.
 */
import {constants} from 'node:os'
import {childProcess} from '../platform/builtins.js'
import {ActorsError, EXIT} from '../platform/errors.js'
import {releaseLocks} from './core.js'
import {acquireLock, appendLockTraces, selfIdentity, type AcquireReply} from './ops.js'

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
  const holder = {kind: 'process' as const, ...selfIdentity()}
  const lock = await acquireLock(home, {name: options.name, slots: options.slots, waitMs: options.waitMs, holder})
  const forward = new Map<string, () => void>()
  try {
    return await new Promise<ExecReply>((resolve) => {
      let child
      try {
        child = childProcess().spawn(options.argv[0], options.argv.slice(1), {stdio: options.stdoutToStderr ? ['inherit', process.stderr.fd, 'inherit'] : 'inherit'})
      } catch (error) {
        process.stderr.write(`actors: could not start ${JSON.stringify(options.argv[0])}: ${(error as Error).message}\n`)
        resolve({lock, exit_code: EXIT.notInstalled, signal: null})
        return
      }
      // Signals for this process (Ctrl-C, a stop) go to COMMAND; the slot is released once it has exited.
      for (const signal of FORWARDED) {
        const handler = () => child.kill(signal)
        forward.set(signal, handler)
        process.on(signal, handler)
      }
      child.once('error', (error) => {
        process.stderr.write(`actors: could not start ${JSON.stringify(options.argv[0])}: ${error.message}\n`)
        resolve({lock, exit_code: EXIT.notInstalled, signal: null})
      })
      child.once('exit', (code, signal) => {
        resolve({lock, exit_code: code ?? 128 + (signal ? (constants.signals[signal] ?? 0) : 0), signal})
      })
    })
  } finally {
    for (const [signal, handler] of forward) process.off(signal, handler)
    try {
      appendLockTraces(releaseLocks(home, [options.name], holder, {strict: false}).traces)
    } catch (error) {
      if (!(error instanceof ActorsError)) throw error
      process.stderr.write(`actors: ${error.message}\n`)
    }
  }
}
