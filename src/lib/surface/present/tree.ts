/**
 * Plain rendering of the Run forest (no colour, no escape codes): one line
 * per Run with box-drawing branches, status, duration and usage, and each
 * tree's usage total under its top line.
 */
import {formatDuration} from '../../base/platform/duration.js'
import {displayStatus} from '../../kernel/runs/summary.js'
import type {TreeNode} from '../../kernel/history/forest.js'
import {formatTreeUsage} from '../../kernel/runs/usage-rollup.js'
import {displayRunName} from '../../base/records/generation-layout.js'
import {inertText} from '../../base/platform/text.js'

/** Render trees as text lines (ends with a newline when not empty). */
export function renderForest(forest: TreeNode[]): string {
  const lines: string[] = []
  for (const top of forest) {
    walk(top, '', '', lines)
    // A lone Run's row already shows its own usage; a total line only says something for a tree.
    if (top.tree_usage && top.children.length > 0) lines.push(`  tree usage: ${formatTreeUsage(top.tree_usage)}`)
  }
  return lines.length ? lines.join('\n') + '\n' : ''
}

function walk(node: TreeNode, lead: string, childLead: string, lines: string[]): void {
  const usage = node.usage === null ? '' : `  ${node.usage} tokens`
  // One inert line: a Run writes its own name into run.json.
  lines.push(
    inertText(
      `${lead}${displayRunName(node.run, node.generation)}  ${displayStatus(node)}  ${formatDuration(node.duration_ms ?? undefined)}${usage}`,
    ),
  )
  node.children.forEach((child, index) => {
    const last = index === node.children.length - 1
    walk(child, `${childLead}${last ? '└─ ' : '├─ '}`, `${childLead}${last ? '   ' : '│  '}`, lines)
  })
}
