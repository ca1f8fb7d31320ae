/**
 * The state root's doorbell. Every change that a waiter may care about (a Run
 * started, ended, asked for attention) replaces `$ACTORS_HOME/.bell` by
 * rename; watchers of the state root directory get one inotify event for it
 * without a recursive watch over thousands of Run dirs.
 */
import {randomHex} from '../platform/builtins.js'
import {renameSync} from 'node:fs'
import {writeStateFile} from '../platform/private-files.js'
import {join} from 'node:path'

export const BELL_FILE = '.bell'

/** Ring the doorbell of the state root `home`. Never throws: a missed ring only delays a waiter's fallback poll. */
export function notifyStateChange(home: string): void {
  try {
    const temp = join(home, `.bell.${process.pid}.${randomHex(3)}`)
    writeStateFile(temp, String(Date.now()), 'create')
    renameSync(temp, join(home, BELL_FILE))
  } catch {}
}
