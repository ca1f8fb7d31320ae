/**
 * What an `actors mcp` server lets its agent launch (SPEC: Agents over MCP):
 * Recipes only, limited by `--allow` glob patterns; ad-hoc commands (and
 * Recipe files given by path, which are just as arbitrary) only with
 * `--allow-adhoc`. A refusal names the rule and happens before anything starts.
 */
import {refusedError} from '../platform/errors.js'
import {validateOwner} from '../runs/lineage.js'
import {globMatches} from '../platform/glob-match.js'

export {globMatches}

export interface McpPolicy {
  /** Glob patterns of Recipe names that may be launched; undefined: every Recipe. */
  allow: string[] | undefined
  allowAdhoc: boolean
  /** Owner of the Runs this server starts, and whose Runs its `wait` collects. */
  owner: string
}

/** The policy from `actors mcp`'s flags (owner: --owner, else ACTORS_OWNER, else default). */
export function policyFromFlags(
  flags: {allow?: string; 'allow-adhoc'?: boolean; owner?: string},
  env: NodeJS.ProcessEnv = process.env,
): McpPolicy {
  const allow = flags.allow
    ?.split(',')
    .map((p) => p.trim())
    .filter(Boolean)
  return {
    allow,
    allowAdhoc: flags['allow-adhoc'] === true,
    owner: validateOwner(flags.owner || env.ACTORS_OWNER || 'default'),
  }
}

/** Whether the policy lets a Recipe of this name launch. */
export function recipeAllowed(policy: McpPolicy, name: string): boolean {
  return policy.allow === undefined || policy.allow.some((pattern) => globMatches(pattern, name))
}

/** Refuse (exit 5, naming the rule) a launch the policy does not allow. `recipe` is the name as requested. */
export function enforceLaunchPolicy(policy: McpPolicy, launch: {command: true} | {recipe: string}): void {
  if ('command' in launch) {
    if (!policy.allowAdhoc) {
      throw refusedError(
        'refused by policy --allow-adhoc: this server launches Recipes only, not ad-hoc commands',
        'launch a Recipe instead (the recipes tool lists them), or restart `actors mcp` with --allow-adhoc',
        {policy: 'allow-adhoc'},
      )
    }
    return
  }
  // A Recipe given as a file path is arbitrary code, like an ad-hoc command.
  if (/\.(ya?ml|json)$/.test(launch.recipe) && !policy.allowAdhoc) {
    throw refusedError(
      `refused by policy --allow-adhoc: Recipe file ${JSON.stringify(launch.recipe)} given by path`,
      'launch a Recipe by name (the recipes tool lists them), or restart `actors mcp` with --allow-adhoc',
      {policy: 'allow-adhoc'},
    )
  }
  if (!recipeAllowed(policy, launch.recipe)) {
    throw refusedError(
      `refused by policy --allow ${policy.allow!.join(',')}: Recipe ${JSON.stringify(launch.recipe)} matches none of the patterns`,
      'launch an allowed Recipe (the recipes tool marks them), or restart `actors mcp` with an --allow pattern that covers it',
      {policy: 'allow', allow: policy.allow},
    )
  }
}
