/**
 * A launch policy that holds down a tree (SPEC: Agents over MCP; Trees,
 * owners and limits). A Run started by `actors mcp` records the server's
 * policy in its run.json (`policy`: a list of rules), and every launch in its
 * tree — a child, a grandchild, a next generation — is checked against the
 * rules of every ancestor's record, not against the environment, which any
 * process in the tree can change. Like limits, policy only tightens: a child
 * records its ancestors' rules and any of its own, and must satisfy them all.
 */
import {realpathSync} from 'node:fs'
import {refusedError} from '../../base/platform/errors.js'
import {findRecipe} from '../../kernel/recipes/index.js'
import {isPlainName} from '../../base/platform/home.js'
import {readRunMetaById} from '../../kernel/runs/store.js'
import {lineOf} from '../../kernel/runs/tightened-limits.js'
import {globMatches} from '../../base/platform/glob-match.js'
import type {PolicyRule, RunMeta} from '../../base/records/run.js'
import type {LaunchSpec} from './launch.js'

const strings = (value: unknown): value is string[] =>
  Array.isArray(value) && value.every((item) => typeof item === 'string')

/** A rule as recorded, or undefined when it is not one (a damaged record). */
function asRule(value: unknown): PolicyRule | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined
  const rule = value as Record<string, unknown>
  const ok =
    typeof rule.origin === 'string' &&
    (rule.allow === null || strings(rule.allow)) &&
    typeof rule.allow_adhoc === 'boolean' &&
    typeof rule.owner === 'string' &&
    strings(rule.recipe_roots) &&
    (rule.run === undefined || (typeof rule.run === 'string' && isPlainName(rule.run)))
  return ok ? (rule as unknown as PolicyRule) : undefined
}

/**
 * The rules `policy` holds; a policy that is present but not a list of rules
 * refuses every launch below it (fail closed: a damaged record must not read
 * as "no policy").
 */
function rulesOf(policy: unknown, where: string): PolicyRule[] {
  if (policy === undefined) return []
  const rules = Array.isArray(policy) ? policy.map(asRule) : [undefined]
  if (rules.some((rule) => rule === undefined)) {
    throw refusedError(
      `the launch policy recorded in ${where} is damaged; launches below it are refused`,
      'start the work from a new top-level Run (through `actors mcp` again if it came from there)',
      {policy: 'damaged'},
    )
  }
  return rules as PolicyRule[]
}

/** Every rule in force for a launch: each ancestor's, then the spec's own (first seen wins), each naming the Run it entered with. */
function rulesInForce(spec: LaunchSpec): PolicyRule[] {
  const line: RunMeta[] = []
  if (spec.parent) {
    const parent = readRunMetaById(spec.home, spec.parent.run)
    if (parent) line.push(...lineOf(spec.home, parent).reverse())
  }
  const found = new Map<string, PolicyRule>()
  const add = (rule: PolicyRule, run: string) => {
    const placed = {...rule, run: rule.run ?? run}
    const key = JSON.stringify({...placed, run: undefined})
    if (!found.has(key)) found.set(key, placed)
  }
  for (const meta of line) for (const rule of rulesOf(meta.policy, `Run ${meta.run}'s run.json`)) add(rule, meta.run)
  for (const rule of rulesOf(spec.policy, `Run ${spec.id}'s run.json`)) add(rule, spec.id)
  return [...found.values()]
}

/** Whether the Recipe being launched is the one the rule's recipe roots give for its name. */
function fromPolicyRoots(rule: PolicyRule, name: string, file: string): boolean {
  try {
    const found = findRecipe(
      name,
      rule.recipe_roots.map((dir) => ({dir, origin: 'policy'})),
    )
    return realpathSync(found.file) === realpathSync(file)
  } catch {
    return false
  }
}

function refuse(rule: PolicyRule, problem: string, fix: string, kind: string): never {
  throw refusedError(
    `refused by the launch policy of Run ${rule.run} (${rule.origin}): ${problem}`,
    `${fix}; the policy holds for every Run in that tree`,
    {policy: kind, origin: rule.origin, policy_run: rule.run, allow: rule.allow, allow_adhoc: rule.allow_adhoc},
  )
}

/** Refuse (exit 5, naming the rule and where it came from) a launch one of `rules` does not allow. */
function checkLaunch(spec: LaunchSpec, rules: PolicyRule[]): void {
  for (const rule of rules) {
    if (spec.recipe === null || spec.recipeFile === null) {
      if (!rule.allow_adhoc)
        refuse(
          rule,
          'ad-hoc commands are not allowed (no --allow-adhoc)',
          'launch an allowed Recipe by name',
          'allow-adhoc',
        )
      continue
    }
    const name = spec.recipe
    if (rule.allow !== null && !rule.allow.some((pattern) => globMatches(pattern, name)))
      refuse(
        rule,
        `Recipe ${JSON.stringify(name)} matches none of --allow ${rule.allow.join(',')}`,
        'launch a Recipe the allow-list covers',
        'allow',
      )
    // A Recipe file given by path, or found under another root (--recipes, ACTORS_RECIPES, ./recipes), is
    // arbitrary code under an allowed name: only what the server itself would launch by that name passes.
    if (!rule.allow_adhoc && !fromPolicyRoots(rule, name, spec.recipeFile))
      refuse(
        rule,
        `Recipe file ${spec.recipeFile} is not the Recipe ${JSON.stringify(name)} of the server's recipe roots (${rule.recipe_roots.join(', ')}); a Recipe given by path or from another root is an ad-hoc command`,
        'launch the Recipe by its name, without --recipes, ACTORS_RECIPES or a path',
        'allow-adhoc',
      )
  }
}

/** The spec with the policy its tree holds it to, after checking the launch against it (refusals exit 5). */
export function applyTreePolicy(spec: LaunchSpec): LaunchSpec {
  const rules = rulesInForce(spec)
  if (rules.length === 0) return spec
  checkLaunch(spec, rules)
  return {...spec, policy: rules}
}
