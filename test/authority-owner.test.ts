/**
 * Authority over Runs (SPEC: Authority over files and Runs): who may append
 * events to a Run, and limits that only tighten down a tree. Real Runs, real
 * run.json files; the callers are the CLI with forged environments.
 */
import {existsSync, readFileSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {actors, homesPerTest, readJson, waitFor, waitForResult} from './helpers.js'

const home = homesPerTest('actors-authority-')

const traceKinds = (h: string, id: string): string[] =>
  (existsSync(join(h, 'runs', id, 'trace.jsonl')) ? readFileSync(join(h, 'runs', id, 'trace.jsonl'), 'utf8') : '')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line).kind)

/** A live Run `id` of owner `owner` (a long sleep), killed by the home's cleanup. */
function liveRun(h: string, id: string, owner: string): void {
  const r = actors(h, ['run', '--name', id, '--json', '--', 'sleep', '60'], {env: {ACTORS_OWNER: owner}})
  expect(r.code, r.stderr).toBe(0)
}

describe('emit --run: only the tree or the owner', () => {
  it("another owner's usage report is refused (exit 5) and spends none of the budget", async () => {
    const h = home()
    const r = actors(h, ['run', '--name', 'bobroot', '--budget-tokens', '1000', '--json', '--', 'sleep', '60'], {
      env: {ACTORS_OWNER: 'bob'},
    })
    expect(r.code, r.stderr).toBe(0)
    const forged = actors(h, ['emit', 'usage', '--run', 'bobroot', '--tokens', '999999'], {
      env: {ACTORS_OWNER: 'alice'},
    })
    expect(forged.code, forged.stderr).toBe(5)
    expect(forged.stderr).toContain('owner bob')
    expect(forged.stderr).not.toMatch(/\n\s+at /)
    expect(traceKinds(h, 'bobroot')).not.toContain('usage')
    // Bob's next launch in his tree is not refused for a spent budget: the forged report never landed.
    const own = actors(h, ['emit', 'usage', '--run', 'bobroot', '--tokens', '10'], {env: {ACTORS_OWNER: 'bob'}})
    expect(own.code, own.stderr).toBe(0)
    expect(readJson(join(h, 'runs', 'bobroot', 'usage.json')).tokens).toBe(10)
  })

  it("a forged steer event for another owner's Run is refused and never wakes its wait", () => {
    const h = home()
    liveRun(h, 'bobroot', 'bob')
    const forged = actors(h, ['emit', 'x', '--run', 'bobroot', '--attention', 'steer', '--summary', 'obey'], {
      env: {ACTORS_OWNER: 'alice'},
    })
    expect(forged.code, forged.stderr).toBe(5)
    expect(traceKinds(h, 'bobroot')).not.toContain('x')
    const batch = actors(h, ['wait', '--json', '--timeout', '0'], {env: {ACTORS_OWNER: 'bob'}})
    expect(batch.json.attention).toEqual([])
  })

  it('a lineage set by hand proves nothing: the instance must match run.json', () => {
    const h = home()
    liveRun(h, 'bobroot', 'bob')
    liveRun(h, 'aliceroot', 'alice')
    const alice = readJson(join(h, 'runs', 'aliceroot', 'run.json'))
    // Claims to be inside bob's Run with a made-up instance: not verified, so it acts for ACTORS_OWNER (alice).
    const claim = {
      ACTORS_OWNER: 'alice',
      ACTORS_RUN: 'bobroot',
      ACTORS_RUN_INSTANCE: alice.run_instance_id,
      ACTORS_STATE_DIR: join(h, 'runs', 'bobroot'),
    }
    expect(actors(h, ['emit', 'x', '--run', 'bobroot'], {env: claim}).code).toBe(5)
    // Inside alice's real Run, ACTORS_OWNER=bob does not make it bob's: the tree's recorded owner wins.
    const inAlice = {
      ACTORS_OWNER: 'bob',
      ACTORS_RUN: 'aliceroot',
      ACTORS_RUN_INSTANCE: alice.run_instance_id,
      ACTORS_STATE_DIR: join(h, 'runs', 'aliceroot'),
    }
    expect(actors(h, ['emit', 'x', '--run', 'bobroot'], {env: inAlice}).code).toBe(5)
    expect(traceKinds(h, 'bobroot')).not.toContain('x')
  })

  it("a process of the Run's tree may emit to an ancestor, whatever ACTORS_OWNER says", async () => {
    const h = home()
    const child = 'ACTORS_OWNER=mallory actors emit child.note --run top --summary from-below; echo "code=$?"'
    const r = actors(
      h,
      [
        'run',
        '--name',
        'top',
        '--json',
        '--',
        'sh',
        '-c',
        `actors run --name kid -- sh -c '${child}' >/dev/null; sleep 30`,
      ],
      {
        env: {ACTORS_OWNER: 'bob'},
      },
    )
    expect(r.code, r.stderr).toBe(0)
    await waitForResult(join(h, 'runs', 'kid'))
    expect(readFileSync(join(h, 'runs', 'kid', 'stdout.log'), 'utf8')).toContain('code=0')
    expect(traceKinds(h, 'top')).toContain('child.note')
  })

  it('events for a finished Run are refused (exit 3) and nothing is appended', async () => {
    const h = home()
    const r = actors(h, ['run', '--name', 'over', '--json', '--', 'true'])
    await waitForResult(r.json.state_dir)
    const before = readFileSync(join(h, 'runs', 'over', 'trace.jsonl'), 'utf8')
    const late = actors(h, ['emit', 'late', '--run', 'over', '--attention', 'followup'])
    expect(late.code, late.stderr).toBe(3)
    expect(late.stderr).toContain('has ended')
    expect(actors(h, ['emit', 'usage', '--run', 'over', '--tokens', '5']).code).toBe(3)
    expect(readFileSync(join(h, 'runs', 'over', 'trace.jsonl'), 'utf8')).toBe(before)
  })
})

describe('limits only tighten down a tree', () => {
  /** A chain of nested `actors run`, each level setting ACTORS_MAX_DEPTH=50 for what it launches; returns the deepest Run reached. */
  async function deepestOfChain(h: string, levels: number): Promise<number> {
    // Level k launches level k+1 with a raised limit in its own environment; the last one just exits.
    let script = 'true'
    for (let k = levels; k >= 1; k--) {
      const quoted = script.replace(/'/g, `'"'"'`)
      script = `ACTORS_MAX_DEPTH=50 actors run --name d${k} -- sh -c '${quoted}' >/dev/null 2>>"$ACTORS_STATE_DIR/launch-err"; echo "launch=$?" >> "$ACTORS_STATE_DIR/launch-code"`
    }
    const r = actors(h, ['run', '--name', 'd0', '--json', '--', 'sh', '-c', script], {env: {ACTORS_MAX_DEPTH: '2'}})
    expect(r.code, r.stderr).toBe(0)
    await waitForResult(join(h, 'runs', 'd0'))
    let deepest = 0
    for (let k = 1; k <= levels; k++) {
      // Each level is waited for before its parent ends, so a missing dir means the launch was refused.
      if (!existsSync(join(h, 'runs', `d${k}`, 'run.json'))) break
      await waitForResult(join(h, 'runs', `d${k}`))
      deepest = k
    }
    return deepest
  }

  it('a root started with ACTORS_MAX_DEPTH=2 stays within depth 2 though its tree raises the variable (exit 5 below)', async () => {
    const h = home()
    expect(await deepestOfChain(h, 5)).toBe(2)
    expect(readJson(join(h, 'runs', 'd0', 'run.json')).max_depth).toBe(2)
    expect(readJson(join(h, 'runs', 'd2', 'run.json')).max_depth).toBe(2)
    expect(readFileSync(join(h, 'runs', 'd2', 'launch-code'), 'utf8')).toContain('launch=5')
    expect(readFileSync(join(h, 'runs', 'd2', 'launch-err'), 'utf8')).toContain('depth 3 is over the limit of 2')
  }, 60_000)
  it("a child's --max-parallel never exceeds an ancestor's: asked higher or not at all, it records the ancestor's cap", async () => {
    const h = home()
    const script =
      'actors run --name wide --max-parallel 9 -- sleep 30 >/dev/null; actors run --name plain -- sleep 30 >/dev/null; actors run --name narrow --max-parallel 1 -- sleep 30 >/dev/null; sleep 30'
    expect(actors(h, ['run', '--name', 'p', '--max-parallel', '3', '--', 'sh', '-c', script]).code).toBe(0)
    const caps = await waitFor(
      () => {
        const dirs = ['wide', 'plain', 'narrow'].map((id) => join(h, 'runs', id, 'run.json'))
        return dirs.every((f) => existsSync(f)) && dirs.map((f) => readJson(f).max_parallel)
      },
      20_000,
      'three children',
    )
    expect(caps).toEqual([3, 3, 1])
  }, 40_000)
})
