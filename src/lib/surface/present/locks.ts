/** The plain faces of `actors lock ...`: what was taken, released or renewed on stderr; `lock status` one line per lock. */
import type {AcquireReply, LockListing} from '../../kernel/locks/ops.js'
import type {LockView} from '../../kernel/locks/views.js'
import type {TextSinks} from './result.js'
import {screenWidth} from '../../base/platform/fit-width.js'
import {formatTable, inertText} from '../../base/platform/text.js'

function held(reply: AcquireReply, verb: string, to: TextSinks): void {
  to.note(
    `actors: ${reply.holder} ${verb} lock ${reply.lock} (${reply.held}/${reply.slots}${reply.lease_expires_at ? `, lease until ${reply.lease_expires_at}` : ''})\n`,
  )
}

/** `lock acquire`. */
export function plainAcquired(reply: AcquireReply, to: TextSinks): void {
  held(reply, reply.already ? 'already holds' : 'holds', to)
}

/** `lock renew`. */
export function plainRenewed(reply: AcquireReply, to: TextSinks): void {
  held(reply, 'renewed', to)
}

/** `lock release`. */
export function plainReleased(
  reply: LockView & {holder: string; released: boolean; left_queue: boolean},
  to: TextSinks,
): void {
  const did = reply.released ? 'released' : 'left the queue of'
  to.note(`actors: ${reply.holder} ${did} lock ${reply.lock} (${reply.held}/${reply.slots} now held)\n`)
}

/** `lock status`: a table, one row per lock. */
export function plainLockStatus(status: LockView | LockListing, to: TextSinks): void {
  const views: LockView[] = 'locks' in status ? status.locks : [status]
  const damaged = 'locks' in status ? status.damaged : []
  const rows = formatLockTable(views, Date.now(), damaged)
  to.out(views.length + damaged.length ? `${rows}\n` : '')
  // A damaged lock keeps its row (HELD damaged); what is wrong and the fix go to stderr.
  for (const d of damaged)
    to.note(`actors: lock ${inertText(d.lock)} is damaged: ${inertText(d.error)}; ${inertText(d.fix)}\n`)
  if (views.length + damaged.length === 0) to.note('actors: no locks yet\n')
}

/**
 * The locks as an aligned table for people: `repo  1/1  run:build-1 (lease
 * 30s)  pid:4242`. Lock names come from Recipes and holders from lock files:
 * formatTable makes every cell inert.
 */
export function formatLockTable(views: LockView[], now = Date.now(), damaged: LockListing['damaged'] = []): string {
  const rows = views.map((view) => [
    view.lock,
    `${view.held}/${view.slots}`,
    view.holders
      .map((h) =>
        h.lease_expires_at
          ? `${h.holder} (lease ${Math.max(0, Math.round((Date.parse(h.lease_expires_at) - now) / 1000))}s)`
          : h.holder,
      )
      .join(', ') || '-',
    view.queue.map((w) => w.holder).join(', ') || '-',
  ])
  for (const d of damaged) rows.push([d.lock, 'damaged', '-', '-'])
  rows.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
  return formatTable(['LOCK', 'HELD', 'HOLDERS', 'QUEUE'], rows, screenWidth(), {
    key: ['LOCK', 'HELD'],
    free: ['HOLDERS', 'QUEUE'],
  })
}
