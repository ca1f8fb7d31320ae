/**
 * Lineage from the unit, not the environment (SPEC: Trees, owners and limits;
 * issue 35, "A Run escapes its tree by clearing its environment"). A Run's
 * command is the adversary: it clears or forges ACTORS_RUN and friends and
 * launches or emits. Every case runs under the cgroup a Run gets by default
 * (where this machine allows) and again under ACTORS_CONTAINMENT=tracked,
 * where the Run is found through the caller's ancestry.
 */
import {existsSync, readFileSync, rmSync, symlinkSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {runOfCgroupPath} from '../src/lib/kernel/containment/caller-cgroup.js'
import {discoverCgroupBases} from '../src/lib/kernel/containment/cgroup-fs.js'
import {homeKey} from '../src/lib/kernel/containment/index.js'
import {actors, homesPerTest, readJson, waitFor, waitForResult, CONTAINMENT_MODES} from './helpers.js'

const home = homesPerTest('actors-lineage-')

/** What `env -u` takes away in the repro: every lineage variable but ACTORS_HOME. */
const CLEARED = 'env -u ACTORS_RUN -u ACTORS_RUN_INSTANCE -u ACTORS_STATE_DIR -u ACTORS_ROOT -u ACTORS_DEPTH'

/**
 * Run `script` as the command of a root Run `id` and wait for its end; the
 * script writes what it saw with `note KEY VALUE` (lines in its state dir's
 * notes file, which outlives the cleared environment of its children).
 */
async function runScript(
  h: string,
  id: string,
  script: string,
  options: {env?: NodeJS.ProcessEnv; flags?: string[]} = {},
): Promise<Record<string, string>> {
  const prelude = 'notes="$ACTORS_STATE_DIR/notes"; note() { echo "$1=$2" >> "$notes"; }; '
  const r = actors(h, ['run', '--name', id, '--json', ...(options.flags ?? []), '--', 'sh', '-c', prelude + script], {
    env: options.env,
  })
  expect(r.code, r.stderr).toBe(0)
  await waitForResult(join(h, 'runs', id), 30_000)
  const notes = join(h, 'runs', id, 'notes')
  const seen: Record<string, string> = {}
  for (const line of existsSync(notes) ? readFileSync(notes, 'utf8').split('\n') : []) {
    const at = line.indexOf('=')
    if (at > 0) seen[line.slice(0, at)] = line.slice(at + 1)
  }
  return seen
}

/** A live Run `bobrun` of owner bob, for a Run of another owner to reach for. */
function startBobsRun(h: string, env: NodeJS.ProcessEnv): void {
  const bob = actors(h, ['run', '--name', 'bobrun', '--json', '--', 'sleep', '60'], {
    env: {...env, ACTORS_OWNER: 'bob'},
  })
  expect(bob.code, bob.stderr).toBe(0)
}

const stderrOf = (h: string, id: string) => readFileSync(join(h, 'runs', id, 'stderr.log'), 'utf8')
/** The kinds in a Run's Trace (none before its first event: the file is made then). */
const traceKinds = (h: string, id: string): string[] =>
  (existsSync(join(h, 'runs', id, 'trace.jsonl')) ? readFileSync(join(h, 'runs', id, 'trace.jsonl'), 'utf8') : '')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line).kind)

describe('the Run a cgroup path names', () => {
  const key = '0123456789abcdef'
  const outer = '11111111-2222-4333-8444-555555555555'
  const inner = '66666666-7777-4888-9999-aaaaaaaaaaaa'
  it('is the innermost actors/<home key>/<run>@<instance>, past a lock exec unit, and none elsewhere', () => {
    const nested = `/user.slice/actors/${key}/par@${outer}/actors/${key}/par.1@${inner}`
    expect(runOfCgroupPath(nested)).toEqual({instance: inner, homeKey: key, path: nested})
    expect(runOfCgroupPath(`/actors/${key}/par@${outer}/actors/${key}/lock-${inner}`)?.instance).toBe(outer)
    expect(runOfCgroupPath(`/actors/${key}/lock-${inner}`)).toBeUndefined()
    expect(runOfCgroupPath(`/actors/${key}/${outer}`)).toBeUndefined()
    expect(runOfCgroupPath(`/actors/${key}/../x@${outer}`)).toBeUndefined()
    expect(runOfCgroupPath(`/actors/not-a-key/par@${outer}`)).toBeUndefined()
    expect(runOfCgroupPath(`/elsewhere/${key}/par@${outer}`)).toBeUndefined()
    expect(runOfCgroupPath('/')).toBeUndefined()
  })
})

describe.each(CONTAINMENT_MODES)('lineage from the unit ($mode)', ({mode, env, skip}) => {
  // Cases only cgroup containment can pass: not defined under tracked (not reported as skipped).
  const cgroupOnly = mode === 'cgroup' ? it.skipIf(skip) : undefined
  it.skipIf(skip)(
    'a cleared environment inside a Run of depth limit 0 is refused (exit 5), not a new root',
    async () => {
      const h = home()
      // ACTORS_MAX_DEPTH raised too: limits only tighten, and the Run's own record says 0.
      const seen = await runScript(
        h,
        'capped',
        `${CLEARED} ACTORS_MAX_DEPTH=50 actors run --name esc -- true; note code $?`,
        {
          env: {...env, ACTORS_MAX_DEPTH: '0'},
        },
      )
      expect(seen.code, stderrOf(h, 'capped')).toBe('5')
      expect(stderrOf(h, 'capped')).toContain('depth 1 is over the limit of 0')
      expect(existsSync(join(h, 'runs', 'esc'))).toBe(false)
      expect(readJson(join(h, 'runs', 'capped', 'run.json')).containment.kind).toBe(mode)
    },
  )

  it.skipIf(skip)("a cleared environment gets the unit's lineage: the launch is the Run's child", async () => {
    const h = home()
    const seen = await runScript(
      h,
      'top',
      `${CLEARED} ACTORS_OWNER=mallory actors run --name kid -- true; note code $?`,
      {
        env: {...env, ACTORS_OWNER: 'alice'},
      },
    )
    expect(seen.code, stderrOf(h, 'top')).toBe('0')
    const kid = readJson(join(h, 'runs', 'kid', 'run.json'))
    const top = readJson(join(h, 'runs', 'top', 'run.json'))
    expect(kid.parent).toEqual({run: 'top', run_instance_id: top.run_instance_id, state_dir: join(h, 'runs', 'top')})
    expect([kid.depth, kid.root, kid.owner]).toEqual([1, 'top', 'alice'])
    expect(traceKinds(h, 'top')).toContain('runtime.child_started')
  })

  it.skipIf(skip)(
    'ACTORS_HOME spelled through a link to the same root is the same Run, not another: the launch is its child',
    async () => {
      const h = home()
      const alias = `${h}-alias`
      symlinkSync(h, alias)
      try {
        const seen = await runScript(h, 'top', `ACTORS_HOME='${alias}' actors run --name kid -- true; note code $?`, {
          env,
        })
        expect(seen.code, stderrOf(h, 'top')).toBe('0')
        expect(readJson(join(h, 'runs', 'kid', 'run.json')).parent.run).toBe('top')
      } finally {
        rmSync(alias)
      }
    },
  )

  it.skipIf(skip)('a double-forked launcher with a cleared environment is still refused by the depth cap', async () => {
    const h = home()
    // The launcher's parent exits at once: it is an orphan whose parent chain shows no supervisor.
    const orphan = `( (${CLEARED} ACTORS_MAX_DEPTH=50 actors run --name esc -- true; note code $?) & )`
    const poll = 'i=0; while ! grep -q code "$notes" 2>/dev/null && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done'
    const seen = await runScript(h, 'forked', `${orphan}; ${poll}`, {env: {...env, ACTORS_MAX_DEPTH: '0'}})
    expect(seen.code, stderrOf(h, 'forked')).toBe('5')
    expect(existsSync(join(h, 'runs', 'esc'))).toBe(false)
  })

  cgroupOnly?.("$ACTORS_CGROUP set inside a Run does not take a child's cgroup out of the Run's", async () => {
    const h = home()
    // This test's own cgroup: writable (a cgroup Run is made below it), and outside every Run.
    const elsewhere = discoverCgroupBases()!.unified
    const seen = await runScript(h, 'top', `ACTORS_CGROUP=${elsewhere} actors run --name kid -- true; note code $?`, {
      env,
    })
    expect(seen.code, stderrOf(h, 'top')).toBe('0')
    await waitForResult(join(h, 'runs', 'kid'))
    const top = readJson(join(h, 'runs', 'top', 'run.json'))
    const kid = readJson(join(h, 'runs', 'kid', 'run.json'))
    expect(kid.containment.path.startsWith(`${top.containment.path}/`), kid.containment.path).toBe(true)
  })

  cgroupOnly?.(
    "a tree's cgroups all go at its end: no folder a child's cgroup was made in keeps its parent's",
    async () => {
      const h = home()
      const seen = await runScript(
        h,
        'top',
        'actors run --name kid -- true >/dev/null; actors wait kid >/dev/null; note code $?',
        {env},
      )
      expect(seen.code, stderrOf(h, 'top')).toBe('0')
      const top = readJson(join(h, 'runs', 'top', 'run.json'))
      // The supervisor removes the unit once the end is written: give it a moment.
      await waitFor(() => !existsSync(top.containment.path) || undefined, 10_000, `${top.containment.path} to go`)
    },
  )

  // Tracked containment cannot see a process that left group, session, ancestry and environment (docs/containment.md).
  cgroupOnly?.('a launcher that left its group, session and parent chain is still in its cgroup', async () => {
    const h = home()
    const orphan = `( (setsid ${CLEARED} ACTORS_MAX_DEPTH=50 actors run --name esc -- true; note code $?) & )`
    const poll = 'i=0; while ! grep -q code "$notes" 2>/dev/null && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done'
    const seen = await runScript(h, 'gone', `${orphan}; ${poll}`, {env: {...env, ACTORS_MAX_DEPTH: '0'}})
    expect(seen.code, stderrOf(h, 'gone')).toBe('5')
    expect(existsSync(join(h, 'runs', 'esc'))).toBe(false)
  })

  cgroupOnly?.("a cgroup a Run makes for itself, named after another Run's instance, is not that Run's", async () => {
    const h = home()
    const victim = actors(h, ['run', '--name', 'victim', '--json', '--', 'sleep', '60'], {env})
    expect(victim.code, victim.stderr).toBe(0)
    // Below its own cgroup (the one place it may make one): actors/<home key>/<victim's instance>, then moves in.
    const fake = `"$(jq -r .containment.path "$ACTORS_STATE_DIR/run.json")/actors/${homeKey(h)}/victim@${victim.json.run_instance_id}"`
    const moved = `sh -c 'echo $$ > "$1/cgroup.procs" && exec ${CLEARED} actors run --name esc -- true' moved ${fake}`
    const script = `mkdir -p ${fake} && ${moved}; note code $?; rmdir ${fake} "$(dirname ${fake})" "$(dirname "$(dirname ${fake})")"`
    const seen = await runScript(h, 'forger', script, {env})
    expect(seen.code, stderrOf(h, 'forger')).toBe('5')
    expect(stderrOf(h, 'forger')).toContain('not a live Run of the state root')
    expect(existsSync(join(h, 'runs', 'esc'))).toBe(false)
  })

  it.skipIf(skip)("a tree's spent budget holds against a cleared environment in a session of its own", async () => {
    const h = home()
    // setsid: neither the group nor the session of the launcher is the Run's command any more; its parent is.
    const script = `actors emit usage --tokens 10 >/dev/null; note usage $?; setsid ${CLEARED} actors run --name esc -- true; note code $?`
    const seen = await runScript(h, 'budget', script, {env, flags: ['--budget-tokens', '10']})
    expect(seen.usage).toBe('0')
    expect(seen.code, stderrOf(h, 'budget')).toBe('5')
    expect(stderrOf(h, 'budget')).toContain('has spent 10 of 10 tokens')
    expect(existsSync(join(h, 'runs', 'esc'))).toBe(false)
  })

  it.skipIf(skip)('a lineage naming another live Run is refused (exit 5) with the reason', async () => {
    const h = home()
    const other = actors(h, ['run', '--name', 'other', '--json', '--', 'sleep', '60'], {env})
    expect(other.code, other.stderr).toBe(0)
    const forged = `ACTORS_RUN=other ACTORS_RUN_INSTANCE=${other.json.run_instance_id} ACTORS_STATE_DIR=${join(h, 'runs', 'other')}`
    // Believed, the claim would make the launch a child of `other`, a tree of its own with its own limits.
    const seen = await runScript(h, 'liar', `${forged} actors run --name esc -- true; note code $?`, {env})
    expect(seen.code, stderrOf(h, 'liar')).toBe('5')
    expect(stderrOf(h, 'liar')).toMatch(
      /ACTORS_RUN="other" says this process runs in another Run, but it runs inside Run liar/,
    )
    expect(existsSync(join(h, 'runs', 'esc'))).toBe(false)
  })

  it.skipIf(skip)(
    "emit --run into another owner's Run is refused from inside a Run, whatever ACTORS_OWNER says",
    async () => {
      const h = home()
      startBobsRun(h, env)
      const script = [
        `${CLEARED} ACTORS_OWNER=bob actors emit planted --run bobrun; note cleared $?`,
        `ACTORS_OWNER=bob actors emit planted --run bobrun; note intact $?`,
        `${CLEARED} actors emit mine --summary from-the-unit; note own $?`,
      ].join('; ')
      const seen = await runScript(h, 'alice', script, {env: {...env, ACTORS_OWNER: 'alice'}})
      expect([seen.cleared, seen.intact], stderrOf(h, 'alice')).toEqual(['5', '5'])
      expect(stderrOf(h, 'alice')).toContain('belongs to owner bob')
      expect(traceKinds(h, 'bobrun')).not.toContain('planted')
      // Its own Trace it still reaches with the environment cleared: the unit names it.
      expect(seen.own, stderrOf(h, 'alice')).toBe('0')
      expect(traceKinds(h, 'alice')).toContain('mine')
    },
  )

  it.skipIf(skip)(
    "control, send, rerun and close of another owner's Run are refused from inside a Run, whatever ACTORS_OWNER says",
    async () => {
      const h = home()
      startBobsRun(h, env)
      const script = [
        `${CLEARED} ACTORS_OWNER=bob actors control bobrun kill; note kill $?`,
        `ACTORS_OWNER=bob actors control "$ACTORS_HOME/runs/bobrun" stop; note stop $?`,
        `ACTORS_OWNER=bob actors send bobrun hi; note send $?`,
        `ACTORS_OWNER=bob actors rerun bobrun; note rerun $?`,
        `ACTORS_OWNER=bob actors close bobrun; note close $?`,
        `actors control "$ACTORS_RUN" status >/dev/null; note own $?`,
      ].join('; ')
      const seen = await runScript(h, 'alice', script, {env: {...env, ACTORS_OWNER: 'alice'}})
      expect(seen, stderrOf(h, 'alice')).toMatchObject({kill: '5', stop: '5', send: '5', rerun: '5', close: '5'})
      expect(stderrOf(h, 'alice')).toContain('this caller runs inside Run alice of owner alice')
      // Its own Run it still controls.
      expect(seen.own, stderrOf(h, 'alice')).toBe('0')
      const bobNow = actors(h, ['inspect', 'bobrun', '--json'], {env})
      expect(bobNow.json).toMatchObject({status: 'running', generation: 1})
      expect(bobNow.json.closed).toBeUndefined()
      // From outside every Run, bob's owner still acts on it.
      expect(actors(h, ['control', 'bobrun', 'kill'], {env: {...env, ACTORS_OWNER: 'bob'}}).code).toBe(0)
    },
  )

  it.skipIf(skip)('adopt inside a Run adopts into that Run: never into the one a forged lineage names', async () => {
    const h = home()
    for (const id of ['other', 'loose']) {
      const r = actors(h, ['run', '--name', id, '--json', '--', 'sleep', '60'], {env})
      expect(r.code, r.stderr).toBe(0)
    }
    const otherDir = join(h, 'runs', 'other')
    const forged = `ACTORS_RUN=other ACTORS_RUN_INSTANCE=${readJson(join(otherDir, 'run.json')).run_instance_id} ACTORS_STATE_DIR=${otherDir}`
    const script = `${forged} actors adopt loose; note forged $?; ${CLEARED} actors adopt loose >/dev/null; note cleared $?`
    const seen = await runScript(h, 'coord', script, {env})
    expect([seen.forged, seen.cleared], stderrOf(h, 'coord')).toEqual(['5', '0'])
    expect(readJson(join(h, 'runs', 'loose', 'run.json')).parent.run).toBe('coord')
    expect(readJson(join(otherDir, 'run.json')).status).toBe('running')
  })

  it.skipIf(skip)('lock acquire inside a Run holds as that Run: never as the one a forged lineage names', async () => {
    const h = home()
    const other = actors(h, ['run', '--name', 'other', '--json', '--', 'sleep', '60'], {env})
    expect(other.code, other.stderr).toBe(0)
    const otherDir = join(h, 'runs', 'other')
    const forged = `ACTORS_RUN=other ACTORS_RUN_INSTANCE=${other.json.run_instance_id} ACTORS_STATE_DIR=${otherDir}`
    const script = `${forged} actors lock acquire lk; note forged $?; ${CLEARED} actors lock acquire own >/dev/null; note cleared $?; actors lock status own --json > '${join(h, 'own.json')}'`
    const seen = await runScript(h, 'va', script, {env})
    expect([seen.forged, seen.cleared], stderrOf(h, 'va')).toEqual(['5', '0'])
    expect(stderrOf(h, 'va')).toContain('says this process runs in another Run, but it runs inside Run va')
    // Held by va while it ran (its end then freed the slot).
    expect(readJson(join(h, 'own.json')).holders).toMatchObject([{holder: 'run:va'}])
    expect(existsSync(join(h, 'locks', 'lk.json')) ? readJson(join(h, 'locks', 'lk.json')).holders : []).toEqual([])
    actors(h, ['control', 'other', 'kill'], {env})
  })

  // A tracked Run launched from inside a cgroup Run stays in that cgroup: its own launches are still its children.
  cgroupOnly?.('a tracked Run nested in a cgroup Run launches as itself', async () => {
    const h = home()
    const inner = `ACTORS_CONTAINMENT=tracked actors run --name b --wait -- actors run --name c -- true >/dev/null; note code $?`
    const seen = await runScript(h, 'a', inner, {env})
    expect(seen.code, stderrOf(h, 'a')).toBe('0')
    expect(readJson(join(h, 'runs', 'b', 'run.json')).containment.kind).toBe('tracked')
    const c = readJson(join(h, 'runs', 'c', 'run.json'))
    expect([c.parent.run, c.depth, c.root]).toEqual(['b', 2, 'a'])
  })

  it.skipIf(skip)('a normal nested launch and emit still work', async () => {
    const h = home()
    const seen = await runScript(
      h,
      'parent',
      'actors run --name kid --wait -- actors emit kid.done >/dev/null; note code $?; actors emit parent.done; note emit $?',
      {env},
    )
    expect([seen.code, seen.emit], stderrOf(h, 'parent')).toEqual(['0', '0'])
    const kid = readJson(join(h, 'runs', 'kid', 'run.json'))
    expect([kid.parent.run, kid.depth]).toEqual(['parent', 1])
    expect(traceKinds(h, 'kid')).toContain('kid.done')
    expect(traceKinds(h, 'parent')).toContain('parent.done')
  })
})
