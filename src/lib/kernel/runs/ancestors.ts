/**
 * A Run's ancestors, read through the `parent` links of run.json files (never
 * the environment, which any process can change). Used wherever authority or
 * a limit depends on the tree a Run belongs to.
 */
import {isPlainName} from '../../base/platform/home.js'
import {readRunMetaById} from './store.js'
import type {RunMeta} from '../../base/records/run.js'

/** More ancestors than any depth limit allows: damaged parent links that form a cycle end the walk. */
const MAX_ANCESTORS = 1100

/**
 * The parent of `meta`, its parent, and so on up to the root (nearest first).
 * Stops at a missing, unreadable or repeated Run, so a damaged link shortens
 * the list rather than failing the caller.
 */
export function ancestorMetas(home: string, meta: RunMeta): RunMeta[] {
  const found: RunMeta[] = []
  const seen = new Set<string>([meta.run])
  let current: RunMeta | undefined = meta
  while (current && found.length < MAX_ANCESTORS) {
    const parent: unknown = current.parent?.run
    if (typeof parent !== 'string' || !isPlainName(parent) || seen.has(parent)) break
    seen.add(parent)
    try {
      current = readRunMetaById(home, parent)
    } catch {
      break
    }
    if (current) found.push(current)
  }
  return found
}
