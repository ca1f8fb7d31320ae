/**
 * The Ink path of `inspect --watch` (loaded by dynamic import() on a TTY
 * only). It mounts the dumb screen and re-renders it from the Runs store;
 * q, Escape, Ctrl-C, SIGINT or SIGTERM unmount it and leave the terminal clean.
 */
import {render} from 'ink'
import type {RunListing} from '../lib/inspect.js'
import {countByStatus, fitRows, type RunRow} from '../lib/views/run-rows.js'
import type {RunsStore} from '../lib/views/runs-store.js'
import {QuitKeys} from './quit-keys.js'
import {RunsScreen} from './runs-screen.js'

export interface RunsLiveOptions {
  title: string
  mode: 'table' | 'tree'
  toRows: (listing: RunListing) => RunRow[]
}

/** Show the store live until the user quits. */
export async function showRunsLive(store: RunsStore, options: RunsLiveOptions): Promise<void> {
  let quit = () => {}
  const frame = () => {
    const snapshot = store.snapshot()
    // Title, header, off-screen line, summary line and one spare line for Ink's cursor.
    const fitted = fitRows(options.toRows(snapshot), (process.stdout.rows || 24) - 5, options.mode)
    return (
      <>
        <RunsScreen title={options.title} rows={fitted.rows} hidden={fitted.hidden} counts={countByStatus(snapshot.runs)} now={snapshot.now} damaged={snapshot.damaged.length} />
        <QuitKeys onQuit={() => quit()} />
      </>
    )
  }
  const instance = render(frame(), {exitOnCtrlC: true, patchConsole: false})
  quit = () => instance.unmount()
  const rerender = () => instance.rerender(frame())
  const unsubscribe = store.subscribe(rerender)
  process.stdout.on('resize', rerender)
  process.once('SIGINT', quit)
  process.once('SIGTERM', quit)
  try {
    await instance.waitUntilExit()
  } finally {
    unsubscribe()
    process.stdout.off('resize', rerender)
    process.off('SIGINT', quit)
    process.off('SIGTERM', quit)
  }
}
