/**
 * What an `actors mcp` server lets its agent launch (SPEC: Agents over MCP):
 * Recipes only, limited by `--allow` glob patterns; ad-hoc commands (and
 * Recipe files given by path, which are just as arbitrary) only with
 * `--allow-adhoc`. A refusal names the rule and happens before anything starts.
 */
import {refusedError} from '../../base/platform/errors.js'
import {validateOwner} from '../../kernel/runs/lineage.js'
import {globMatches} from '../../base/platform/glob-match.js'

export {globMatches}

export interface McpPolicy {
  /** Glob patterns of Recipe names that may be launched; undefined: every Recipe. */
  allow: string[] | undefined
  allowAdhoc: boolean
  /** Owner of the Runs this server starts, and whose Runs its `wait` collects. */
  owner: string
  /**
   * Neither --owner nor ACTORS_OWNER named one: the owner is the client's
   * (clientOwner), known once its `initialize` arrives; `mcp-client` until then.
   */
  ownerFromClient?: boolean
}

/** The owner of a server whose client `initialize`d with no name that reduces to anything. */
const NAMELESS_CLIENT_OWNER = 'mcp-client'

/**
 * The owner an agent's server acts as when nobody named one: `mcp-` and the
 * client's `initialize` name reduced to [a-z0-9-] ("Claude Code" ->
 * mcp-claude-code). Its own, so a person's `wait` in a shell (owner
 * `default`) never loses a Run to the agent's; derived from the host, so a
 * restarted agent of the same host finds the Runs it started before.
 */
export function clientOwner(name: string | undefined): string {
  const slug = (name ?? '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .slice(0, 60)
    .replace(/^-+|-+$/g, '')
  return slug ? `mcp-${slug}` : NAMELESS_CLIENT_OWNER
}

/** The policy from `actors mcp`'s flags (owner: --owner, else ACTORS_OWNER, else the client's: clientOwner). */
export function policyFromFlags(
  flags: {allow?: string; 'allow-adhoc'?: boolean; owner?: string},
  env: NodeJS.ProcessEnv = process.env,
): McpPolicy {
  const allow = flags.allow
    ?.split(',')
    .map((p) => p.trim())
    .filter(Boolean)
  const named = flags.owner || env.ACTORS_OWNER
  return {
    allow,
    allowAdhoc: flags['allow-adhoc'] === true,
    ...(named ? {owner: validateOwner(named)} : {owner: NAMELESS_CLIENT_OWNER, ownerFromClient: true}),
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
