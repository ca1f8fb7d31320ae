/**
 * Flat Runs as the tree they form (each child right after its parent, with
 * box-drawing branches), the way the completion card and `inspect --tree`
 * draw them: the live list and the live wait share it. A Run whose parent is
 * not among the given ones is a top of its own; order is kept otherwise.
 */
import type {RunListing} from '../../kernel/history/inspect.js'
import {tableRows, type RunRow} from './run-rows.js'

export interface Nested<T> {
  item: T
  /** Branches drawn before the name ('' for a top). */
  prefix: string
  /** 0 for a top. */
  depth: number
}

/** `items` in preorder under their parents; `id` and `parent` read an item's identity and its parent's. */
export function nestByParent<T>(
  items: readonly T[],
  id: (item: T) => string,
  parent: (item: T) => string | null,
): Nested<T>[] {
  const ids = new Set(items.map(id))
  const children = new Map<string, T[]>()
  const tops: T[] = []
  for (const item of items) {
    const p = parent(item)
    if (p !== null && p !== id(item) && ids.has(p)) {
      const list = children.get(p) ?? []
      list.push(item)
      children.set(p, list)
    } else tops.push(item)
  }
  const out: Nested<T>[] = []
  const placed = new Set<string>()
  const walk = (item: T, lead: string, childLead: string, depth: number) => {
    if (placed.has(id(item))) return
    placed.add(id(item))
    out.push({item, prefix: lead, depth})
    const kids = children.get(id(item)) ?? []
    kids.forEach((kid, index) => {
      const last = index === kids.length - 1
      walk(kid, `${childLead}${last ? '└─ ' : '├─ '}`, `${childLead}${last ? '   ' : '│  '}`, depth + 1)
    })
  }
  for (const top of tops) walk(top, '', '', 0)
  // A parent cycle (damaged records) has no top: show those Runs flat rather than lose them.
  for (const item of items) if (!placed.has(id(item))) walk(item, '', '', 0)
  return out
}

/** The `inspect --watch` table as a tree: the rows of `tableRows`, children under their parents. */
export function nestedTableRows(listing: Pick<RunListing, 'runs'>): RunRow[] {
  return nestByParent(
    tableRows(listing),
    (row) => row.run,
    (row) => row.parent,
  ).map(({item, prefix}) => ({...item, prefix}))
}
