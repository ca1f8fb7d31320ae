/**
 * Followers into a pipe whose reader went away (SPEC: Authority over files and
 * Runs: `--follow` into a closed pipe ends within 1 s with bounded memory).
 * Two ways a follower learns it: a write fails (EPIPE, heard by the stdout
 * guard, output-guard.ts) — which needs the event loop to turn, so a follower
 * of a fast writer must wait for 'drain' and yield between pieces — and, for a
 * follower with nothing to write (an idle Run, an empty inbox), a look at
 * whether any process still holds the pipe's read end.
 */
import {readFileSync, readdirSync, readlinkSync} from 'node:fs'
import {stdoutClosed} from './output-guard.js'

/** How often an idle follower looks for the pipe's reader. */
const READER_CHECK_MS = 500

/** `pipe:[inode]` when stdout is a pipe (Linux /proc), else undefined. */
function stdoutPipe(): string | undefined {
  try {
    const link = readlinkSync('/proc/self/fd/1')
    return link.startsWith('pipe:') ? link : undefined
  } catch {
    return undefined
  }
}

/** Whether descriptor `fd` of process `pid` is open for reading only (fdinfo flags, O_ACCMODE 0). */
function opensForReading(pid: string, fd: string): boolean {
  try {
    const flags = /^flags:\s*([0-7]+)/m.exec(readFileSync(`/proc/${pid}/fdinfo/${fd}`, 'utf8'))
    return flags !== null && (parseInt(flags[1], 8) & 3) === 0
  } catch {
    return false
  }
}

/**
 * Whether no process holds the read end of the pipe `pipe` any more. Processes
 * whose descriptors cannot be read (another user's) are not counted: the
 * reader of a follower's pipe is nearly always its own shell's pipeline.
 */
export function pipeReaderGone(pipe: string): boolean {
  // Nearest pids first: a pipeline's processes start one after another, so a live reader (`| head`) is found
  // after a few looks; only a reader that is gone costs the whole scan (a few hundred ms on a busy machine).
  const pids = readdirSync('/proc')
    .filter((name) => name.charCodeAt(0) >= 48 && name.charCodeAt(0) <= 57 && Number(name) !== process.pid)
    .sort((a, b) => Math.abs(Number(a) - process.pid) - Math.abs(Number(b) - process.pid))
  for (const pid of pids) {
    let fds: string[]
    try {
      fds = readdirSync(`/proc/${pid}/fd`)
    } catch {
      continue
    }
    for (const fd of fds) {
      try {
        if (readlinkSync(`/proc/${pid}/fd/${fd}`) === pipe && opensForReading(pid, fd)) return false
      } catch {}
    }
  }
  return true
}

let gone: AbortSignal | undefined

/**
 * Aborted once stdout cannot be written (a failed write) or, when it is a pipe,
 * once nobody reads it any more (looked at every 500 ms; the timer does not
 * keep the process alive). For followers that may wait long without writing.
 */
export function stdoutGone(): AbortSignal {
  if (gone) return gone
  const closed = stdoutClosed()
  const pipe = stdoutPipe()
  if (!pipe) return (gone = closed)
  const controller = new AbortController()
  const timer = setInterval(() => {
    if (closed.aborted || pipeReaderGone(pipe)) {
      clearInterval(timer)
      controller.abort()
    }
  }, READER_CHECK_MS)
  timer.unref()
  closed.addEventListener('abort', () => controller.abort(), {once: true})
  return (gone = controller.signal)
}

/**
 * Let stdout catch up after a piece was written: wait for 'drain' while its
 * buffer is over the high-water mark (or until it failed), and otherwise let
 * the event loop turn once, so a failed write is heard before the next piece.
 * Keeps a fast follower's memory to one piece plus the stream's buffer.
 */
export async function stdoutCaughtUp(): Promise<void> {
  const out = process.stdout
  const closed = stdoutClosed()
  if (!closed.aborted && out.writableNeedDrain) {
    await new Promise<void>((resolve) => {
      const done = () => {
        out.off('drain', done)
        out.off('close', done)
        closed.removeEventListener('abort', done)
        resolve()
      }
      out.once('drain', done)
      out.once('close', done)
      closed.addEventListener('abort', done, {once: true})
    })
  }
  await new Promise<void>((resolve) => setImmediate(resolve))
}
