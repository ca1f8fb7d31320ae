/**
 * The Ink path of `inspect --watch` (loaded by dynamic import() on a TTY
 * only). It mounts the dumb screen and re-renders it from the store; q,
 * Escape, Ctrl-C, SIGINT or SIGTERM unmount it and leave the terminal clean.
 */
import {Static, render} from 'ink'
import {AttentionFeed, type AttentionNote} from '../lib/services/view-state/attention-feed.js'
import {AttentionLine} from './attention-line.js'
import {countByStatus, fitRows, type Layout, type RunRow} from '../lib/services/view-state/run-rows.js'
import type {StateStore} from '../lib/services/view-state/runs-store.js'
import type {WatchedListing} from '../lib/services/view-state/runs-store.js'
import {QuitKeys} from './quit-keys.js'
import {RunsScreen} from './runs-screen.js'

export interface RunsLiveOptions<T> {
  title: string
  layout: Layout
  toRows: (data: T) => RunRow[]
}

/** Show the store live until the user quits. */
export async function showRunsLive<T extends WatchedListing>(
  store: StateStore<T>,
  options: RunsLiveOptions<T>,
): Promise<void> {
  let quit = () => {}
  // Attention events of the Runs in view, as they happen: each goes to scrollback once.
  const feed = new AttentionFeed(Math.floor(performance.timeOrigin))
  const notes: AttentionNote[] = []
  let lookedAt = -1
  const frame = () => {
    const snapshot = store.snapshot()
    const all = options.toRows(snapshot.data)
    if (snapshot.version !== lookedAt) {
      lookedAt = snapshot.version
      notes.push(...feed.update(all.map((row) => ({dir: row.key, run: row.run, status: row.status}))))
    }
    // Title, header, off-screen line, left-out-columns line, summary line and one spare line for the cursor.
    const fitted = fitRows(all, (process.stdout.rows || 24) - 6, options.layout)
    return (
      <>
        <Static items={[...notes]}>{(note) => <AttentionLine key={note.event_id} note={note} />}</Static>
        <RunsScreen
          title={options.title}
          rows={fitted.rows}
          hidden={fitted.hidden}
          layout={options.layout}
          counts={countByStatus(all)}
          clock={snapshot}
          damaged={snapshot.data.damaged.length}
        />
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
