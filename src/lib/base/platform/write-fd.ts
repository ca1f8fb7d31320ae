/**
 * write(2) to a descriptor until the bytes are out or it would block: the
 * one loop behind a command's result on stdout (present/output-guard.ts
 * writeWhole), which hands what is left to process.stdout when the
 * descriptor is non-blocking, and a control request (./line-socket.ts).
 */
import {writeSync} from 'node:fs'

/** Whether `error` says the descriptor is non-blocking and not ready (a read or write would have waited). */
export const wouldBlock = (error: NodeJS.ErrnoException): boolean =>
  error.code === 'EAGAIN' || error.code === 'EWOULDBLOCK'

/**
 * Write `bytes` whole to `fd` with write(2), as many calls as it takes;
 * returns how many went out before the descriptor would have blocked
 * (EAGAIN: set non-blocking by whoever shares it), `bytes.length` when all
 * did. Any other failure (EPIPE, ENOSPC) is thrown.
 */
export function writeUntilBlocked(fd: number, bytes: Uint8Array): number {
  let done = 0
  try {
    while (done < bytes.length) done += writeSync(fd, bytes, done, bytes.length - done)
  } catch (error) {
    if (!wouldBlock(error as NodeJS.ErrnoException)) throw error
  }
  return done
}
