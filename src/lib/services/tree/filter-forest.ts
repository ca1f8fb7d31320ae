/** `inspect --tree` with listing filters (--status, --limit, --since, --recipe, --owner): the forest of the matching Runs. */
import type {Forest, TreeNode} from '../../kernel/history/forest.js'

/**
 * Keep only the nodes whose state dir is in `keep`; a kept node whose parent
 * was dropped hangs from its nearest kept ancestor, or becomes a top node.
 * Order (preorder, children in their order) is kept.
 */
export function filterForest(forest: Forest, keep: ReadonlySet<string>): Forest {
  const prune = (node: TreeNode): TreeNode[] => {
    const children = node.children.flatMap(prune)
    return keep.has(node.state_dir) ? [{...node, children}] : children
  }
  return {forest: forest.forest.flatMap(prune), damaged: forest.damaged}
}
