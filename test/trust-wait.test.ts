/**
 * A Run cannot hand its owner a false end (issue 35: a Run that wrote its own
 * result.json, or `status: done` into its run.json, was delivered by `wait`
 * as "done, exit 0" while its command ran on, and its real end was never
 * recorded; one that rewrote its `notification` or `owner` kept its failure
 * from its owner's `wait`, and so did one that wrote its own reported.json).
 * Real Runs as the adversary, under the cgroup a
 * Run gets on this machine and again under tracked containment. Each command
 * forges first, then waits for a file the test creates before it exits 5, so
 * the test decides when the real end comes.
 */
import {spawnSync} from 'node:child_process'
import {existsSync, readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {actors, cgroup2Root, homesPerTest, readJson, waitFor, waitForResult, CONTAINMENT_MODES} from './helpers.js'

const home = homesPerTest('actors-trust-wait-')

/** A node one-liner, run by the Run's command, that rewrites its own run.json with `fields` (as any process of the Run can). */
function rewriteOwnRecord(fields: Record<string, unknown>): string {
  const js = `const fs=require('fs');const f=process.env.ACTORS_STATE_DIR+'/run.json';const m=JSON.parse(fs.readFileSync(f,'utf8'));Object.assign(m,${JSON.stringify(fields)});fs.writeFileSync(f+'.x',JSON.stringify(m));fs.renameSync(f+'.x',f)`
  return `'${process.execPath}' -e "${js.replaceAll('"', '\\"')}"`
}

/** The Run's own result.json claiming done, exit 0, written as the kernel would (a rename). */
const FORGED_RESULT =
  'printf \'{"status":"done","exit_code":0,"run_instance_id":"%s","artifacts":[]}\' "$ACTORS_RUN_INSTANCE" > "$ACTORS_STATE_DIR/r.x" && mv "$ACTORS_STATE_DIR/r.x" "$ACTORS_STATE_DIR/result.json"'

/** Launch Run `v` whose command runs `forge`, marks `forged` in `dir`, then waits for `go` there and exits 5. */
function launch(h: string, env: NodeJS.ProcessEnv, forge: string): {dir: string; go: string} {
  const go = join(h, 'go')
  const script = `${forge} && touch '${h}/forged'; while [ ! -e '${go}' ]; do sleep 0.05; done; exit 5`
  const r = actors(h, ['run', '--name', 'v', '--json', '--', 'sh', '-c', script], {env})
  expect(r.code, r.stderr).toBe(0)
  return {dir: r.json.state_dir, go}
}

/**
 * Launch Run `v` running `script`, which forges its end and then touches `forged` in `h`; once it has, a wait
 * for v still times out with no member (the end is held back while v runs). v's state dir.
 */
async function forgeryHeldBack(h: string, env: NodeJS.ProcessEnv, script: string): Promise<string> {
  const r = actors(h, ['run', '--name', 'v', '--json', '--', 'sh', '-c', script], {env})
  expect(r.code, r.stderr).toBe(0)
  await waitFor(() => existsSync(join(h, 'forged')), 10_000, 'the forgery')
  const early = actors(h, ['wait', 'v', '--timeout', '1s', '--json'], {env})
  expect(early.code, early.stdout + early.stderr).toBe(124)
  expect(early.json.members).toBe(0)
  return r.json.state_dir
}

describe.each(CONTAINMENT_MODES)('a Run forging its own end ($mode)', ({mode, env, skip}) => {
  const forgeries = [
    {what: 'its own result.json (done, exit 0)', forge: FORGED_RESULT},
    {what: 'status done in its run.json', forge: rewriteOwnRecord({status: 'done', exit_code: 0})},
  ]
  for (const {what, forge} of forgeries) {
    it.skipIf(skip)(
      `${what}: wait does not deliver it while the command runs; the real end (exit 5) is recorded and delivered`,
      async () => {
        const h = home()
        const {dir, go} = launch(h, env, forge)
        await waitFor(() => existsSync(join(h, 'forged')), 10_000, 'the forgery')
        const early = actors(h, ['wait', 'v', '--timeout', '1s', '--json'], {env})
        expect(early.code, early.stdout + early.stderr).toBe(124)
        expect(early.json.members).toBe(0)
        expect(early.json.pending.map((p: {run: string}) => p.run)).toEqual(['v'])
        writeFileSync(go, '')
        const result = await waitForResult(dir, 15_000)
        expect(result).toMatchObject({status: 'failed', exit_code: 5})
        const late = actors(h, ['wait', 'v', '--timeout', '15s', '--json'], {env})
        expect(late.code, late.stderr).toBe(1)
        expect(late.json.rows).toMatchObject([{run: 'v', status: 'failed', exit_code: 5}])
        if (forge === FORGED_RESULT) expect(readFileSync(join(dir, 'trace.jsonl'), 'utf8')).toContain('result_replaced')
      },
      40_000,
    )
  }

  // Only a cgroup holds what dropped every tie: under tracked containment such a process is the documented limit
  // (docs/containment.md), so the case is defined for cgroup containment alone, not reported as skipped.
  const underCgroup = mode === 'cgroup' ? [mode] : []
  for (const _ of underCgroup)
    it.skipIf(skip)(
      'its supervisor killed, its own result.json written, then exec env -i: wait does not deliver it while that runs',
      async () => {
        const h = home()
        const length = `302.${process.pid}${Math.floor(Math.random() * 1e6)}`
        const script = `kill -9 $(${process.execPath} -p "require(process.env.ACTORS_STATE_DIR+'/run.json').pid"); ${FORGED_RESULT} && touch '${h}/forged'; exec env -i sleep ${length}`
        try {
          await forgeryHeldBack(h, env, script)
        } finally {
          actors(h, ['control', 'v', 'kill'], {env})
          spawnSync('pkill', ['-KILL', '-f', '-x', `sleep ${length}`])
        }
      },
      40_000,
    )

  // Moving a process into another cgroup needs write access there: root here (CI runs as root).
  for (const _ of process.getuid?.() === 0 ? underCgroup : [])
    it.skipIf(skip)(
      "its command moved into a sibling's cgroup (marker kept), its supervisor killed, its own end written: not delivered while that runs",
      async () => {
        const h = home()
        const s = actors(h, ['run', '--name', 's', '--json', '--', 'sleep', '300'], {env})
        expect(s.code, s.stderr).toBe(0)
        const sibling = await waitFor(
          () => readJson(join(s.json.state_dir, 'run.json')).containment?.path,
          10_000,
          'the sibling',
        )
        const length = `303.${process.pid}${Math.floor(Math.random() * 1e6)}`
        const script = `echo $$ > '${sibling}/cgroup.procs' && kill -9 $(cut -d' ' -f4 /proc/$PPID/stat) && ${FORGED_RESULT} && touch '${h}/forged'; exec sleep ${length}`
        const r = actors(h, ['run', '--name', 'v', '--json', '--', 'sh', '-c', script], {env})
        expect(r.code, r.stderr).toBe(0)
        try {
          await waitFor(() => existsSync(join(h, 'forged')), 10_000, 'the forgery')
          const early = actors(h, ['wait', 'v', '--timeout', '1s', '--json'], {env})
          expect(early.code, early.stdout + early.stderr).toBe(124)
          expect(early.json.members).toBe(0)
        } finally {
          actors(h, ['control', 'v', 'kill'], {env})
          actors(h, ['control', 's', 'kill'], {env})
          spawnSync('pkill', ['-KILL', '-f', '-x', `sleep ${length}`])
        }
      },
      40_000,
    )

  it.skipIf(skip)(
    'its own result.json naming its supervisor and its processes as left over: not delivered while they run; kill records killed',
    async () => {
      const h = home()
      const length = `305.${process.pid}${Math.floor(Math.random() * 1e6)}`
      const forged = `printf '{"status":"done","exit_code":0,"run_instance_id":"%s","artifacts":[],"leftover":[{"pid":%d,"command":"x"},{"pid":%d,"command":"x"},{"pid":%d,"command":"x"}]}' "$ACTORS_RUN_INSTANCE" $PPID $$ $! > "$ACTORS_STATE_DIR/r.x" && mv "$ACTORS_STATE_DIR/r.x" "$ACTORS_STATE_DIR/result.json"`
      const script = `sleep ${length} & ${forged} && touch '${h}/forged'; wait`
      try {
        const dir = await forgeryHeldBack(h, env, script)
        expect(actors(h, ['control', 'v', 'kill'], {env}).code).toBe(0)
        const result = await waitFor(
          () => (readJson(join(dir, 'result.json')).status === 'killed' ? true : undefined),
          15_000,
          'the real end, recorded by its supervisor',
        )
        expect(result).toBe(true)
        const got = actors(h, ['wait', 'v', '--timeout', '10s', '--json'], {env})
        expect(got.json.rows).toMatchObject([{run: 'v', status: 'killed'}])
      } finally {
        actors(h, ['control', 'v', 'kill'], {env})
        spawnSync('pkill', ['-KILL', '-f', '-x', `sleep ${length}`])
      }
    },
    40_000,
  )

  // A sibling is told apart by its cgroup, by its own Run identity in its environment, or by its parents.
  it.skipIf(skip)(
    "a sibling whose processes name the Run's state dir (environment, a supervisor's command line) does not hold its end",
    async () => {
      const h = home()
      const w = actors(h, ['run', '--name', 'w', '--json', '--', 'sh', '-c', 'exit 5'], {env})
      expect(w.code, w.stderr).toBe(0)
      await waitForResult(w.json.state_dir, 10_000)
      const dir = w.json.state_dir
      // node running a file named like the supervisor script, for w's dir, and a sleep carrying w's dir, both orphaned
      // (their own Run's identity still in their environment); then a sleep with w's dir and no Run identity, a child
      // of the sibling's shell: as root under cgroup containment, written into the root cgroup first.
      const fake = join(h, 'x', 'dist', 'supervisor.cjs')
      const root = mode === 'cgroup' && process.getuid?.() === 0 ? cgroup2Root() : undefined
      const leave = root ? `echo \\$\\$ > '${root}/cgroup.procs' && ` : ''
      const anonymous = `sh -c "${leave}exec env -u ACTORS_RUN -u ACTORS_RUN_INSTANCE ACTORS_STATE_DIR='${dir}' sleep 301" &`
      const script = `mkdir -p '${join(h, 'x', 'dist')}' && echo 'setInterval(()=>{},1e6)' > '${fake}' && (${process.execPath} '${fake}' '${dir}' local 5000 &) && (ACTORS_STATE_DIR='${dir}' sleep 300 &) && ${anonymous} sleep 0.3 && touch '${h}/forged'; sleep 300`
      const s = actors(h, ['run', '--name', 's', '--json', '--', 'sh', '-c', script], {env})
      expect(s.code, s.stderr).toBe(0)
      try {
        await waitFor(() => existsSync(join(h, 'forged')), 10_000, 'the sibling')
        const got = actors(h, ['wait', 'w', '--timeout', '5s', '--json'], {env})
        expect(got.code, got.stdout + got.stderr).toBe(1)
        expect(got.json.rows).toMatchObject([{run: 'w', status: 'failed', exit_code: 5}])
      } finally {
        actors(h, ['control', 's', 'kill'], {env})
      }
    },
    40_000,
  )

  it.skipIf(skip)(
    'its supervisor killed and its own end written while its command runs: no new generation over it until kill ends that',
    async () => {
      const h = home()
      const length = `304.${process.pid}${Math.floor(Math.random() * 1e6)}`
      // Under cgroup containment even without its environment (the cgroup holds it); tracked, with it.
      const drop = mode === 'cgroup' ? 'env -i ' : ''
      const script = `kill -9 $(cut -d' ' -f4 /proc/$PPID/stat); ${FORGED_RESULT} && touch '${h}/forged'; exec ${drop}sleep ${length}`
      const r = actors(h, ['run', '--name', 'v', '--json', '--', 'sh', '-c', script], {env})
      expect(r.code, r.stderr).toBe(0)
      const alive = () => spawnSync('pgrep', ['-f', '-x', `sleep ${length}`]).status === 0
      try {
        await waitFor(() => existsSync(join(h, 'forged')) && alive(), 10_000, 'the forgery')
        const rerun = actors(h, ['rerun', 'v'], {env})
        expect(rerun.code, rerun.stderr).toBe(3)
        expect(rerun.stderr).toContain('processes of it still run')
        const kill = actors(h, ['control', 'v', 'kill'], {env})
        expect(kill.code, kill.stderr).toBe(0)
        await waitFor(() => !alive() || undefined, 10_000, 'its command to end')
        expect(actors(h, ['rerun', 'v'], {env}).code).toBe(0)
      } finally {
        actors(h, ['control', 'v', 'kill'], {env})
        spawnSync('pkill', ['-KILL', '-f', '-x', `sleep ${length}`])
      }
    },
    40_000,
  )

  it.skipIf(skip)(
    'a reported.json of its own (as a wait writes it): its failure is still delivered',
    async () => {
      const h = home()
      const mark =
        'printf \'{"run_instance_id":"%s","owner":"default","batch_id":"x","reported_at":"2026-01-01T00:00:00Z"}\' "$ACTORS_RUN_INSTANCE" > "$ACTORS_STATE_DIR/reported.json"'
      const {dir, go} = launch(h, env, mark)
      await waitFor(() => existsSync(join(h, 'forged')), 10_000, 'the forgery')
      writeFileSync(go, '')
      await waitForResult(dir, 15_000)
      const own = actors(h, ['wait', '--timeout', '15s', '--json'], {env})
      expect(own.code, own.stderr).toBe(1)
      expect(own.json.rows).toMatchObject([{run: 'v', status: 'failed', exit_code: 5}])
    },
    40_000,
  )

  it.skipIf(skip)(
    'its index marker deleted and the index stamp made to match runs/: its failure still reaches a plain wait',
    async () => {
      const h = home()
      // What a neighbour can do in the state root: no rebuild would bring the marker back, as runs/ looks unchanged.
      const js = `const fs=require('fs'),h=process.env.ACTORS_HOME,ix=h+'/index';fs.unlinkSync(ix+'/v@'+process.env.ACTORS_RUN_INSTANCE);const st=fs.statSync(h+'/runs',{bigint:true});fs.writeFileSync(ix+'/.stamp.json',JSON.stringify({schema:'actors-index-v3',runs_mtime_ns:String(st.mtimeNs),runs_nlink:Number(st.nlink),runs_count:fs.readdirSync(h+'/runs').filter((n)=>n[0]!=='.').length}))`
      const {dir, go} = launch(h, env, `'${process.execPath}' -e "${js}"`)
      await waitFor(() => existsSync(join(h, 'forged')), 10_000, 'the forgery')
      expect(actors(h, ['inspect', '--status', 'running', '--json'], {env}).code).toBe(0)
      writeFileSync(go, '')
      await waitForResult(dir, 15_000)
      const own = actors(h, ['wait', '--timeout', '15s', '--json'], {env})
      expect(own.code, own.stderr).toBe(1)
      expect(own.json.rows).toMatchObject([{run: 'v', status: 'failed', exit_code: 5}])
    },
    40_000,
  )

  it.skipIf(skip)(
    "notification silent and another owner in its run.json: its failure still reaches its own owner's wait",
    async () => {
      const h = home()
      const {dir, go} = launch(h, env, rewriteOwnRecord({notification: 'silent', owner: 'bob'}))
      await waitFor(() => existsSync(join(h, 'forged')), 10_000, 'the forgery')
      writeFileSync(go, '')
      await waitForResult(dir, 15_000)
      const bob = actors(h, ['wait', '--timeout', '1s', '--json'], {env: {...env, ACTORS_OWNER: 'bob'}})
      expect(bob.json.members, bob.stdout).toBe(0)
      const own = actors(h, ['wait', '--timeout', '15s', '--json'], {env})
      expect(own.code, own.stderr).toBe(1)
      expect(own.json.rows).toMatchObject([{run: 'v', status: 'failed', exit_code: 5}])
    },
    40_000,
  )
})
