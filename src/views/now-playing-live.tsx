/**
 * The Ink path of `music play` (dynamic import() on a TTY only): draws the
 * service's status, ticks the clock twice a second for the progress bar, and
 * turns keys into the service's own requests (the path `actors control`
 * takes). q and Ctrl-C ask the service to stop; playback ending unmounts.
 */
import {render} from 'ink'
import type {PlaybackService} from '../lib/services/music/service.js'
import {keyToCommand, nowPlayingModel} from '../lib/services/view-state/now-playing.js'
import {NowPlaying} from './now-playing.js'
import {PlayerKeys} from './player-keys.js'

export interface NowPlayingHandle {
  /** Unmount (after playback ended) and wait until the terminal is restored. */
  close(): Promise<void>
}

/** Mount the view on `service`; call before the service starts. */
export function mountNowPlaying(service: PlaybackService): NowPlayingHandle {
  let message: string | undefined
  const frame = () => (
    <>
      <NowPlaying model={nowPlayingModel(service.getStatus(), process.stdout.columns || 80)} message={message} />
      <PlayerKeys onKey={onKey} />
    </>
  )
  const instance = render(frame(), {exitOnCtrlC: false, patchConsole: false})
  const rerender = () => instance.rerender(frame())
  function onKey(
    input: string,
    key: {leftArrow?: boolean; rightArrow?: boolean; escape?: boolean; ctrl?: boolean},
  ): void {
    // Keys typed faster than a read arrive together ("+ "): each character is its own press.
    const presses = input.length > 1 && !key.ctrl ? [...input] : [input]
    for (const press of presses) {
      const command =
        key.ctrl && press === 'c' ? {action: 'stop' as const} : keyToCommand(press, key, service.getStatus())
      if (!command) continue
      void service.handleRequest(command.action, command.value).then((reply) => {
        message = reply.ok ? undefined : `${command.action}: ${reply.error}`
        rerender()
      })
    }
  }
  const unsubscribe = service.subscribe(rerender)
  const tick = setInterval(rerender, 500)
  return {
    async close() {
      clearInterval(tick)
      unsubscribe()
      rerender()
      instance.unmount()
      await instance.waitUntilExit()
    },
  }
}
