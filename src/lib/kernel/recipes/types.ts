/** The shapes of Recipes (SPEC: Recipes) as loaded and as resolved for one launch. */
import type {RunPlan} from '../../base/records/run.js'
import type {LockSpec} from '../../base/records/lock.js'
import type {ExecutorChoice} from '../executors/index.js'
import type {Step} from './steps.js'
import type {RecipeLimits} from '../containment/limits.js'
import type {UnitLimits} from '../containment/unit.js'

export type ArgType = 'string' | 'path' | 'int' | 'number' | 'bool' | 'array' | {enum: string[]}

export interface ArgSpec {
  name: string
  type: ArgType
  /** Present when the arg is optional; already converted to its type. */
  default?: unknown
}

/** A Recipe file, parsed and validated. */
export interface Recipe {
  /** Identity: path below its root without extension, e.g. `music/playback`. */
  name: string
  file: string
  root: string
  description: string
  args: ArgSpec[]
  /** Args whose values may begin an argv word with "-", i.e. be options of the command (option-args.ts). */
  option_args?: string[]
  template?: string[] | string
  /** Templates, `repeat` and `use` steps (steps.ts). */
  sequence?: Step[]
  parallel?: Step[]
  timeout?: string | number
  retry?: number
  kill_grace?: string | number
  cwd?: string
  env?: Record<string, string>
  control: string[]
  artifacts?: Record<string, string>
  singleton: boolean
  notification: 'normal' | 'silent'
  /** Resource locks the Run takes together before it starts (SPEC: Resource locks). */
  locks?: LockSpec[]
  /** Where its Runs run by default (SPEC: Executors). */
  executor?: ExecutorChoice
  inbox?: 'stdin' | 'file'
  resume?: boolean
  /** Resource limits enforced by the Run's cgroup (SPEC: Containment). */
  limits?: RecipeLimits
}

/** Runtime values available to templates besides the args. */
export interface RuntimeValues {
  run_id: string
  state_dir: string
  /** The caller's working directory: where relative `path` values and a relative `cwd` resolve. Default: process.cwd(). */
  cwd?: string
}

/** What a launch takes of the Recipe as loaded: its locks are taken together before the command starts; no executor means local. */
type AsLoaded = 'control' | 'artifacts' | 'singleton' | 'notification' | 'locks' | 'executor' | 'inbox' | 'resume'

/** A Recipe with values bound and every template rendered: ready for launchRun(). */
export interface ResolvedRecipe extends Pick<Recipe, AsLoaded> {
  values: Record<string, unknown>
  plan: RunPlan
  cwd?: string
  env: Record<string, string>
  timeoutMs?: number
  retry: number
  killGraceMs: number
  /** Resource limits, as a cgroup takes them. */
  limits?: UnitLimits
}
