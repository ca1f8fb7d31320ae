/**
 * Rendering a Recipe's steps into the plan the supervisor runs. Plain
 * templates give the flat plan Runs have always had; `repeat` and `use`
 * steps give a tree of nodes as well, every iteration and imported step
 * rendered before start so a bad value is refused (exit 2) before anything
 * runs, and each node named by its position for the Trace.
 */
import {isActorsError} from '../../base/platform/errors.js'
import {recipeError} from './load.js'
import {isRepeat, isUse, templateWords, type Step, type Template} from './steps.js'
import {renderString, renderWord} from './template.js'
import {findUsedRecipe, refuseUseCycle} from './use.js'
import {refuseOptionValues} from './option-args.js'
import type {PlanNode, RunPlan} from '../../base/records/run.js'
import type {Recipe} from './types.js'

/** The most commands one plan may render (repeats multiply). */
export const MAX_PLAN_COMMANDS = 10_000

type Scope = Record<string, unknown>
/** Bind a used Recipe's values (`NAME=VALUE` words, checked like a launch) into its template scope. */
export type BindUsed = (used: Recipe, assignments: string[]) => Scope

interface Context {
  steps: string[][]
  bind: BindUsed
  /** The Recipes being rendered, outermost first (for cycles and for naming the file in errors). */
  chain: Recipe[]
}

/** Render `recipe` under `scope` into a plan; `bind` gives a used Recipe's scope. */
export function renderPlan(recipe: Recipe, scope: Scope, bind: BindUsed): RunPlan {
  const ctx: Context = {steps: [], bind, chain: [recipe]}
  const tree = renderRecipe(recipe, scope, '', ctx)
  const mode = recipe.template !== undefined ? 'single' : recipe.sequence ? 'sequence' : 'parallel'
  const nested = (recipe.sequence ?? recipe.parallel ?? []).some((s) => isRepeat(s) || isUse(s))
  return nested ? {mode, steps: ctx.steps, tree} : {mode, steps: ctx.steps}
}

function renderRecipe(recipe: Recipe, scope: Scope, prefix: string, ctx: Context): PlanNode {
  const at = (name: string) => (prefix ? `${prefix}.${name}` : name)
  if (recipe.template !== undefined) return command(recipe.template, at('template'), scope, ctx)
  const kind = recipe.sequence ? 'sequence' : 'parallel'
  return {kind, path: at(kind), nodes: renderSteps(recipe.sequence ?? recipe.parallel ?? [], at(kind), scope, ctx)}
}

function renderSteps(steps: Step[], path: string, scope: Scope, ctx: Context): PlanNode[] {
  return steps.map((step, i) => renderStep(step, `${path}[${i}]`, scope, ctx))
}

function renderStep(step: Step, path: string, scope: Scope, ctx: Context): PlanNode {
  if (isRepeat(step)) {
    const {times, template, sequence, continue_on_failure} = step.repeat
    const nodes: PlanNode[] = []
    for (let k = 1; k <= times; k++) {
      const here = `${path}.repeat[${k}]`
      const inner = {...scope, iteration: k}
      nodes.push(
        template !== undefined
          ? command(template, here, inner, ctx)
          : {kind: 'sequence', path: here, nodes: renderSteps(sequence ?? [], `${here}.sequence`, inner, ctx)},
      )
    }
    return {kind: 'repeat', path: `${path}.repeat`, nodes, continue_on_failure}
  }
  if (isUse(step)) {
    const from = ctx.chain[ctx.chain.length - 1]
    const used = findUsedRecipe(step.use, from, `${path}.use`)
    refuseUseCycle(ctx.chain, used, `${path}.use`)
    const assignments = Object.entries(step.with).flatMap(([name, v]) =>
      (Array.isArray(v) ? v : [v]).map((word) => `${name}=${renderString(word, scope)}`),
    )
    let usedScope: Scope
    try {
      usedScope = ctx.bind(used, assignments)
    } catch (error) {
      if (!isActorsError(error)) throw error
      throw recipeError(
        from.file,
        `${path}.with`,
        `(use: ${used.name}) ${error.message.replace(/^[^:]*: /, '')}`,
        error.fix ?? 'give with: values the used Recipe accepts',
      )
    }
    const node = renderRecipe(used, usedScope, `${path}.use`, {...ctx, chain: [...ctx.chain, used]})
    return {kind: 'use', path: `${path}.use`, recipe: used.name, node}
  }
  return command(step, path, scope, ctx)
}

function command(template: Template, path: string, scope: Scope, ctx: Context): PlanNode {
  const argv = templateWords(template).flatMap((w) => renderWord(w, scope))
  const file = ctx.chain[ctx.chain.length - 1].file
  refuseOptionValues(template, scope, ctx.chain[ctx.chain.length - 1], path, (field, problem, fix) =>
    recipeError(file, field, problem, fix),
  )
  if (argv.length === 0 || argv[0] === '') {
    throw recipeError(
      file,
      path,
      'renders to an empty command',
      'give the command a non-empty first word (an empty array arg cannot be the whole command)',
    )
  }
  if (ctx.steps.length >= MAX_PLAN_COMMANDS) {
    throw recipeError(
      ctx.chain[0].file,
      path,
      `renders more than ${MAX_PLAN_COMMANDS} commands`,
      'lower repeat times, or launch child Runs for work this large',
    )
  }
  ctx.steps.push(argv)
  return {kind: 'command', path, step: ctx.steps.length - 1}
}
