/**
 * Track durations for players that cannot report them (everything but mpv):
 * asked of ffprobe or soxi when installed, cached per track, unknown
 * otherwise (then seek by percent is refused with the reason).
 */
import {execaLibrary} from '../../base/platform/execa.js'
import {findExecutable} from './players.js'
import type {Track} from './types.js'

const cache = new Map<Track, number | undefined>()

/**
 * What `command` printed, or undefined when it failed or took over 5 s (then
 * it gets SIGTERM and no SIGKILL after, nor any when this process exits).
 */
async function run(command: string, args: string[]): Promise<string | undefined> {
  const out = await execaLibrary().execa(command, args, {
    timeout: 5000,
    forceKillAfterDelay: false,
    cleanup: false,
    stripFinalNewline: false,
    reject: false,
  })
  return out.failed ? undefined : String(out.stdout)
}

/** The duration of `track` in seconds, or undefined when no prober knows it. */
export async function probeDuration(track: Track): Promise<number | undefined> {
  if (cache.has(track)) return cache.get(track)
  let duration: number | undefined
  const ffprobe = findExecutable('ffprobe')
  if (ffprobe) {
    const out = await run(ffprobe, ['-v', 'error', '-show_entries', 'format=duration', '-of', 'csv=p=0', track])
    const n = Number(out?.trim())
    if (out && Number.isFinite(n) && n > 0) duration = n
  }
  if (duration === undefined && !/^[a-z][a-z0-9+.-]*:\/\//i.test(track)) {
    const soxi = findExecutable('soxi')
    if (soxi) {
      const n = Number((await run(soxi, ['-D', track]))?.trim())
      if (Number.isFinite(n) && n > 0) duration = n
    }
  }
  cache.set(track, duration)
  return duration
}
