/**
 * Walking a plan with `repeat` and `use` steps (SPEC: Recipes) inside the
 * supervisor. Sequences stop at the first failure, parallels fail when any
 * branch does, a repeat runs its iterations in order and stops at the first
 * failing one unless `continue_on_failure`; every iteration, imported
 * Recipe and command is announced as a `runtime.step` event with its
 * position, so the Trace shows where the Run is.
 */
import type {PlanNode} from '../../base/records/run.js'

export interface StepOutcome {
  exitCode: number | null
  signal: string | null
  spawnError?: string
}

/** What the walk needs from the supervisor: run one command, pause, stop, record. */
export interface StepTreeHooks {
  runCommand(step: number): Promise<StepOutcome>
  argvOf(step: number): string[]
  /** True once the Run must end (timeout, stop, kill): nothing new starts. */
  stopping(): boolean
  /** Resolves while the Run is paused between steps. */
  waitWhilePaused(): Promise<void>
  trace(kind: string, summary: string, data: Record<string, unknown>): void
}

const OK: StepOutcome = {exitCode: 0, signal: null}

function failed(outcome: StepOutcome): boolean {
  return outcome.exitCode !== 0
}

/** Run `node` to its end (or until the Run must stop); the outcome of a failed part, else the last. */
export async function runStepTree(node: PlanNode, hooks: StepTreeHooks, announced = false): Promise<StepOutcome> {
  switch (node.kind) {
    case 'command': {
      const argv = hooks.argvOf(node.step)
      // An iteration whose body is one template was announced as the iteration (same path).
      if (!announced)
        hooks.trace('runtime.step', `${node.path}: ${argv[0]}`, {path: node.path, step: node.step, command: argv[0]})
      return hooks.runCommand(node.step)
    }
    case 'use':
      hooks.trace('runtime.step', `${node.path}: ${node.recipe}`, {path: node.path, recipe: node.recipe})
      return runStepTree(node.node, hooks)
    case 'parallel': {
      const outcomes = await Promise.all(node.nodes.map((n) => runStepTree(n, hooks)))
      return outcomes.find(failed) ?? outcomes[0] ?? OK
    }
    case 'sequence':
      return runInOrder(node.nodes, hooks)
    case 'repeat':
      return runRepeat(node, hooks)
  }
}

/** Children one after another, pausing between them, stopping at the first failure. */
async function runInOrder(nodes: PlanNode[], hooks: StepTreeHooks): Promise<StepOutcome> {
  let last = OK
  for (const [index, child] of nodes.entries()) {
    if (index > 0) await hooks.waitWhilePaused()
    if (hooks.stopping()) break
    last = await runStepTree(child, hooks)
    if (hooks.stopping() || failed(last)) break
  }
  return last
}

async function runRepeat(node: Extract<PlanNode, {kind: 'repeat'}>, hooks: StepTreeHooks): Promise<StepOutcome> {
  const times = node.nodes.length
  let last = OK
  for (const [index, child] of node.nodes.entries()) {
    const iteration = index + 1
    if (index > 0) await hooks.waitWhilePaused()
    if (hooks.stopping()) break
    hooks.trace('runtime.step', `${child.path}: iteration ${iteration} of ${times}`, {
      path: child.path,
      iteration,
      times,
    })
    last = await runStepTree(child, hooks, true)
    if (hooks.stopping()) return last
    if (!failed(last)) continue
    if (!node.continue_on_failure) return last
    hooks.trace('runtime.step', `${child.path} failed (exit ${last.exitCode ?? last.signal}); continuing`, {
      path: child.path,
      iteration,
      exit_code: last.exitCode,
      continued: true,
    })
  }
  // With continue_on_failure the repeat succeeds once every iteration ran; the failures are in the Trace.
  return hooks.stopping() ? last : OK
}
