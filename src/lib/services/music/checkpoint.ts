/**
 * `playback.json`: the checkpoint a playback service rewrites on every change
 * (and every few seconds while playing) so that a restarted service continues
 * the same queue at the same track and position, and `status` can answer with
 * no service running. A corrupt checkpoint is reported, never trusted.
 */
import {join} from 'node:path'
import {isActorsError} from '../../base/platform/errors.js'
import type {ProcessIdentity} from '../../base/platform/process-identity.js'
import {readJsonFile, writeJsonAtomic} from '../../base/platform/state-files.js'
import {findTrack, sameSource, sameTracks, trackKey} from './source-key.js'
import {PLAYBACK_STATES, type PlaybackStatus, type PlayerName, type Track} from './types.js'

export const PLAYBACK_SCHEMA = 'actors-playback-v1'
/** Queues of many thousand tracks are fine; a larger file is damage. */
export const MAX_CHECKPOINT_BYTES = 16 * 1024 * 1024

export interface PlaybackCheckpoint extends PlaybackStatus {
  schema: typeof PLAYBACK_SCHEMA
  source: string[]
  cwd: string
  shuffle: boolean
  loop: boolean
  queue: Track[]
  /** What the user asked for: paused or not (kept across restarts). */
  paused: boolean
  service_instance_id: string
  service_pid: number
  service_identity?: ProcessIdentity
  player_process?: ProcessIdentity
  player: PlayerName | null
}

export function checkpointFile(dir: string): string {
  return join(dir, 'playback.json')
}

export type CheckpointRead = {ok: true; checkpoint: PlaybackCheckpoint} | {ok: false; problem: string} | undefined

/** Read the checkpoint: undefined when absent, `{ok:false, problem}` (naming the file) when damaged. */
export function readCheckpoint(dir: string): CheckpointRead {
  const file = checkpointFile(dir)
  let data: PlaybackCheckpoint | undefined
  try {
    data = readJsonFile<PlaybackCheckpoint>(file, {schema: PLAYBACK_SCHEMA, maxBytes: MAX_CHECKPOINT_BYTES})
  } catch (error) {
    if (isActorsError(error)) return {ok: false, problem: error.message}
    return {ok: false, problem: `${file}: ${(error as Error).message}`}
  }
  if (data === undefined) return undefined
  const problem = checkpointShapeProblem(data)
  if (problem) return {ok: false, problem: `${file}: ${problem}`}
  return {ok: true, checkpoint: data}
}

function checkpointShapeProblem(data: PlaybackCheckpoint): string | undefined {
  if (!Array.isArray(data.source) || !data.source.every((s) => typeof s === 'string'))
    return 'field "source" is not a list of strings'
  if (!Array.isArray(data.queue) || !data.queue.every((s) => typeof s === 'string'))
    return 'field "queue" is not a list of strings'
  if (data.index !== null && (!Number.isInteger(data.index) || data.index < 0))
    return 'field "index" is not a non-negative integer'
  if (data.position_seconds !== null && typeof data.position_seconds !== 'number')
    return 'field "position_seconds" is not a number'
  if (typeof data.paused !== 'boolean') return 'field "paused" is not a boolean'
  // The fields `status` reports as they are: a value no service could have written is damage.
  if (!(PLAYBACK_STATES as readonly unknown[]).includes(data.state))
    return `field "state" is not one of ${PLAYBACK_STATES.join(', ')}`
  if (
    data.volume !== null &&
    data.volume !== undefined &&
    (typeof data.volume !== 'number' || data.volume < 0 || data.volume > 100)
  )
    return 'field "volume" is not a number from 0 to 100'
  return undefined
}

/** Write the checkpoint atomically. */
export function writeCheckpoint(dir: string, checkpoint: PlaybackCheckpoint): void {
  writeJsonAtomic(checkpointFile(dir), checkpoint)
}

export interface ResumePoint {
  tracks: Track[]
  index: number
  positionSeconds: number
  paused: boolean
  volume?: number
  /** One line for the user: what was resumed, or why not. */
  note?: string
}

/**
 * Where a service on `tracks` (freshly built from `source`) should start,
 * given the last checkpoint: the same track (found by path, so an edited
 * directory still resumes), at the same position, with the same paused
 * intent; a shuffled queue keeps its order when it still holds the same tracks.
 */
export function resumePoint(
  checkpoint: PlaybackCheckpoint | undefined,
  source: string[],
  cwd: string,
  shuffle: boolean,
  tracks: Track[],
): ResumePoint {
  const fresh: ResumePoint = {tracks, index: 0, positionSeconds: 0, paused: false}
  if (!checkpoint) return fresh
  if (!sameSource(checkpoint.source, typeof checkpoint.cwd === 'string' ? checkpoint.cwd : '/', source, cwd)) {
    return {...fresh, note: 'the checkpoint is for another source; starting at the first track'}
  }
  let queue = tracks
  if (shuffle && checkpoint.shuffle && sameMembers(checkpoint.queue, tracks)) queue = checkpoint.queue
  else if (shuffle && checkpoint.shuffle && sameTracks(checkpoint.queue, tracks)) {
    // The same tracks spelled another way: keep the shuffled order, in this spelling.
    const byKey = new Map(tracks.map((t) => [trackKey(t), t]))
    queue = checkpoint.queue.map((t) => byKey.get(trackKey(t)) ?? t)
  }
  const volume = typeof checkpoint.volume === 'number' ? checkpoint.volume : undefined
  if (checkpoint.reason === 'ended')
    return {...fresh, tracks: queue, volume, note: 'the queue had ended; starting over'}
  const track = checkpoint.track ?? (checkpoint.index !== null ? checkpoint.queue[checkpoint.index] : undefined)
  const index =
    checkpoint.index !== null && queue[checkpoint.index] === track
      ? checkpoint.index
      : track
        ? findTrack(queue, track)
        : -1
  if (index < 0)
    return {
      ...fresh,
      tracks: queue,
      volume,
      note: `the checkpoint's track ${track ?? '(none)'} is no longer in the queue; starting at the first track`,
    }
  const position = Math.max(0, checkpoint.position_seconds ?? 0)
  return {
    tracks: queue,
    index,
    positionSeconds: position,
    paused: checkpoint.paused,
    volume,
    note: `resuming at track ${index + 1}/${queue.length}`,
  }
}

function sameMembers(a: Track[], b: Track[]): boolean {
  if (a.length !== b.length) return false
  const sa = [...a].sort()
  const sb = [...b].sort()
  return sa.every((v, i) => v === sb[i])
}
