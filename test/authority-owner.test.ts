/**
 * Authority over Runs (SPEC: Authority over files and Runs): who may append
 * events to a Run, and limits that only tighten down a tree. Real Runs, real
 * run.json files; the callers are the CLI with forged environments.
 */
import {existsSync, readFileSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {actors, homesPerTest, readJson, waitForResult} from './helpers.js'

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
    const r = actors(h, ['run', '--name', 'bobroot', '--budget-tokens', '1000', '--json', '--', 'sleep', '60'], {env: {ACTORS_OWNER: 'bob'}})
    expect(r.code, r.stderr).toBe(0)
    const forged = actors(h, ['emit', 'usage', '--run', 'bobroot', '--tokens', '999999'], {env: {ACTORS_OWNER: 'alice'}})
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
    const forged = actors(h, ['emit', 'x', '--run', 'bobroot', '--attention', 'steer', '--summary', 'obey'], {env: {ACTORS_OWNER: 'alice'}})
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
    const claim = {ACTORS_OWNER: 'alice', ACTORS_RUN: 'bobroot', ACTORS_RUN_INSTANCE: alice.run_instance_id, ACTORS_STATE_DIR: join(h, 'runs', 'bobroot')}
    expect(actors(h, ['emit', 'x', '--run', 'bobroot'], {env: claim}).code).toBe(5)
    // Inside alice's real Run, ACTORS_OWNER=bob does not make it bob's: the tree's recorded owner wins.
    const inAlice = {ACTORS_OWNER: 'bob', ACTORS_RUN: 'aliceroot', ACTORS_RUN_INSTANCE: alice.run_instance_id, ACTORS_STATE_DIR: join(h, 'runs', 'aliceroot')}
    expect(actors(h, ['emit', 'x', '--run', 'bobroot'], {env: inAlice}).code).toBe(5)
    expect(traceKinds(h, 'bobroot')).not.toContain('x')
  })

  it("a process of the Run's tree may emit to an ancestor, whatever ACTORS_OWNER says", async () => {
    const h = home()
    const child = 'ACTORS_OWNER=mallory actors emit child.note --run top --summary from-below; echo "code=$?"'
    const r = actors(h, ['run', '--name', 'top', '--json', '--', 'sh', '-c', `actors run --name kid -- sh -c '${child}' >/dev/null; sleep 30`], {env: {ACTORS_OWNER: 'bob'}})
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
