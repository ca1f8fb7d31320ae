/**
 * launch/tree-policy.ts on records written directly: the rules of every
 * ancestor's run.json hold together (policy only tightens, whatever the
 * nearest record says), and a damaged policy refuses every launch below it
 * (fail closed), each with exit 5 naming the rule's origin.
 */
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {applyTreePolicy} from '../src/lib/services/launch/tree-policy.js'
import type {LaunchSpec} from '../src/lib/services/launch/launch.js'
import {homesPerTest, refusal, ROOT, writeFinishedRun} from './helpers.js'

const home = homesPerTest('actors-tree-policy-')
const ROOTS = [join(ROOT, 'recipes')]

const rule = (allow: string[] | null, origin: string) => ({
  origin,
  allow,
  allow_adhoc: false,
  owner: 'agent',
  recipe_roots: ROOTS,
})

/** A launch below `parent` of a shipped Recipe (or ad-hoc when `recipe` is null). */
function launchBelow(h: string, parent: string, recipe: string | null): LaunchSpec {
  return {
    home: h,
    id: 'child',
    explicitId: true,
    recipe,
    recipeFile: recipe ? join(ROOT, 'recipes', `${recipe}.yaml`) : null,
    values: {},
    plan: {mode: 'single', steps: [['true']]},
    cwd: h,
    env: {},
    retry: 1,
    killGraceMs: 5000,
    control: [],
    notification: 'normal',
    owner: 'agent',
    parent: {run: parent, run_instance_id: 'x', state_dir: join(h, 'runs', parent)},
    depth: 2,
  }
}

describe('the policy of a tree', () => {
  it("holds every ancestor's rules: a middle Run that dropped its own record's policy still launches under the root's", () => {
    const h = home()
    writeFinishedRun(h, 'root', {
      meta: {policy: [{...rule(['hello', 'sleep'], 'actors mcp --allow hello,sleep'), run: 'root'}]},
    })
    // mid narrows it with a rule of its own (a server started inside the tree) ...
    writeFinishedRun(h, 'mid', {
      meta: {
        parent: {run: 'root'},
        policy: [{...rule(['hello', 'demo'], 'actors mcp --allow hello,demo'), run: 'mid'}],
      },
    })
    // ... and low has rewritten its record to carry no policy at all.
    writeFinishedRun(h, 'low', {meta: {parent: {run: 'mid'}}})
    const placed = applyTreePolicy(launchBelow(h, 'low', 'hello'))
    expect(placed.policy?.map((r) => [r.origin, r.run])).toEqual([
      ['actors mcp --allow hello,sleep', 'root'],
      ['actors mcp --allow hello,demo', 'mid'],
    ])
    for (const [recipe, origin] of [
      ['sleep', 'Run mid (actors mcp --allow hello,demo)'],
      ['demo', 'Run root (actors mcp --allow hello,sleep)'],
    ]) {
      const error = refusal(() => applyTreePolicy(launchBelow(h, 'low', recipe)))
      expect(error.exitCode).toBe(5)
      expect(error.message).toContain(`refused by the launch policy of ${origin}`)
    }
    expect(refusal(() => applyTreePolicy(launchBelow(h, 'low', null))).message).toContain(
      'ad-hoc commands are not allowed',
    )
  })

  it('refuses every launch below a record whose policy is damaged (not a list of rules)', () => {
    const h = home()
    for (const [id, policy] of [
      ['a', {allow: ['*']}],
      ['b', [{origin: 'x', allow: '*'}]],
      ['c', []],
    ] as const) {
      writeFinishedRun(h, id, {meta: {policy}})
      if (id === 'c') {
        // An empty list is no rule: nothing to refuse.
        expect(applyTreePolicy(launchBelow(h, id, 'hello')).policy).toBeUndefined()
        continue
      }
      const error = refusal(() => applyTreePolicy(launchBelow(h, id, 'hello')))
      expect(error.exitCode).toBe(5)
      expect(error.message).toContain(`the launch policy recorded in Run ${id}'s run.json is damaged`)
    }
  })
})
