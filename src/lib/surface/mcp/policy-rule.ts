/**
 * An `actors mcp` server's policy as the rule the Runs it starts record
 * (launch/tree-policy.ts). Apart from policy.ts, which the `actors mcp` front
 * loads to check its flags: this needs the recipe roots, and only the server does.
 */
import {recipeRoots} from '../../kernel/recipes/index.js'
import type {PolicyRule} from '../../base/records/run.js'
import type {McpPolicy} from './policy.js'

/**
 * The policy as the rule a Run it starts records (launch/tree-policy.ts), so
 * that every launch in that Run's tree is held to it: the recipe roots are
 * the server's, where its agent's Recipe names were looked up.
 */
export function policyRule(policy: McpPolicy, home: string, recipesFlag: string | undefined): PolicyRule {
  const flags = [
    ...(policy.allow ? [`--allow ${policy.allow.join(',')}`] : []),
    ...(policy.allowAdhoc ? ['--allow-adhoc'] : []),
    `--owner ${policy.owner}`,
  ]
  return {
    origin: `actors mcp ${flags.join(' ')}`,
    allow: policy.allow ?? null,
    allow_adhoc: policy.allowAdhoc,
    owner: policy.owner,
    recipe_roots: recipeRoots({recipesFlag, home}).map((root) => root.dir),
  }
}
