/** One Recipe as a document for `actors recipes NAME` (its plain face is present/recipes.ts). */
import {formatArgSpec, formatArgType} from './args.js'
import {stepWords} from './steps.js'
import type {Recipe} from './types.js'

export interface RecipeDescription extends Pick<Recipe, 'name' | 'file' | 'root' | 'description'> {
  args: Array<{name: string; type: string; required: boolean; default?: unknown; spec: string}>
  /** Args whose values may begin an argv word with "-" (option-args.ts); any other such value is refused. */
  option_args: string[]
  plan: {mode: 'single' | 'sequence' | 'parallel'; steps: string[][]}
  timeout: string | number | null
  retry: number
  kill_grace: string | number | null
  cwd: string | null
  env: Record<string, string>
  control: string[]
  artifacts: Record<string, string>
  singleton: boolean
  notification: Recipe['notification']
  /** How `actors send` steers the live Run, or null when it is not steerable. */
  inbox: 'stdin' | 'file' | null
  /** Whether `actors send` may resume the finished Run. */
  resume: boolean
}

/** Describe a loaded Recipe with its templates split into (unrendered) argv words. */
export function describeRecipe(recipe: Recipe): RecipeDescription {
  const steps = recipe.template !== undefined ? [recipe.template] : (recipe.sequence ?? recipe.parallel ?? [])
  return {
    name: recipe.name,
    file: recipe.file,
    root: recipe.root,
    description: recipe.description,
    args: recipe.args.map((a) => ({
      name: a.name,
      type: formatArgType(a.type),
      required: !('default' in a),
      ...('default' in a ? {default: a.default} : {}),
      spec: formatArgSpec(a),
    })),
    option_args: recipe.option_args ?? [],
    plan: {
      mode: recipe.template !== undefined ? 'single' : recipe.sequence ? 'sequence' : 'parallel',
      steps: steps.map(stepWords),
    },
    timeout: recipe.timeout ?? null,
    retry: recipe.retry ?? 1,
    kill_grace: recipe.kill_grace ?? null,
    cwd: recipe.cwd ?? null,
    env: recipe.env ?? {},
    control: recipe.control,
    artifacts: recipe.artifacts ?? {},
    singleton: recipe.singleton,
    notification: recipe.notification,
    inbox: recipe.inbox ?? null,
    resume: recipe.resume !== false,
  }
}
