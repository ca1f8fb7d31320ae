/**
 * Odd things a Run leaves in its own state dir get a clear answer naming the
 * file, never an internal error or half a document (issue 35, Low findings
 * of the red-team passes): a run.json value nested 200,000 deep, a FIFO
 * where `generations/` belongs, a log that is a link under `logs --json`, a
 * link at runs/.cache, a kill_grace it rewrote, its dir swapped with a
 * sibling's.
 */
import {spawnSync} from 'node:child_process'
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {actors, homesPerTest, processAlive, readJson, waitFor, waitForResult} from './helpers.js'

const home = homesPerTest('actors-hostile-')

/** Launch Run `v` running `sh -c script`; its state dir. */
function launch(h: string, script: string): string {
  const r = actors(h, ['run', '--name', 'v', '--json', '--', 'sh', '-c', script])
  expect(r.code, r.stderr).toBe(0)
  return r.json.state_dir
}

describe('what a Run leaves in its state dir', () => {
  it('a run.json value nested 200,000 deep: control kill ends it and names run.json, no internal error', async () => {
    const h = home()
    const dir = launch(h, 'sleep 60')
    const pid = await waitFor(() => readJson(join(dir, 'run.json')).children_processes?.[0]?.pid, 10_000, 'the command')
    const file = join(dir, 'run.json')
    const text = readFileSync(file, 'utf8').trimEnd()
    writeFileSync(file, `${text.slice(0, -1)},"deep":${'['.repeat(200_000)}${']'.repeat(200_000)}}`)
    const r = actors(h, ['control', 'v', 'kill'])
    expect(r.code).toBe(1)
    expect(r.stderr).toContain(`${file}: holds a value nested too deeply to write back`)
    expect(r.stderr).not.toMatch(/internal error|RangeError/)
    await waitFor(() => !processAlive(pid), 10_000, 'the command ended')
  }, 30_000)

  it("a Trace grown past 16 MiB, and lines without an event's fields: inspect RUN shows the card and the last events", async () => {
    const h = home()
    // 21 MB of events the Run appended itself, then lines no emit writes (no time, a kind that is no text), then one.
    const line = JSON.stringify({id: 'x', ts: '2026-01-01T00:00:00.000Z', kind: 'bulk', summary: 'x'.repeat(1000)})
    const dir = launch(
      h,
      `yes '${line}' | head -n 21000 >> "$ACTORS_STATE_DIR/trace.jsonl"; ` +
        `echo '{"kind":"nots","summary":"a"}' >> "$ACTORS_STATE_DIR/trace.jsonl"; ` +
        `echo '{"ts":"2026-01-01T00:00:00.000Z","kind":7}' >> "$ACTORS_STATE_DIR/trace.jsonl"; ` +
        `echo '{"id":"y","ts":"2026-01-01T00:00:01.000Z","kind":"last.one","summary":"the end"}' >> "$ACTORS_STATE_DIR/trace.jsonl"`,
    )
    await waitForResult(dir)
    expect(statSync(join(dir, 'trace.jsonl')).size).toBeGreaterThan(16 * 1024 * 1024)
    const card = actors(h, ['inspect', 'v'])
    expect(card.code, card.stderr).toBe(0)
    expect(card.stdout).toContain('last.one')
    expect(card.stdout).toMatch(/\d\d:\d\d:\d\d\.\d{3} last\.one {2}the end/)
    expect(card.stdout).not.toMatch(/ nots /)
    const json = actors(h, ['inspect', 'v', '--json'])
    expect(json.code, json.stderr).toBe(0)
    expect(
      json.json.trace.every(
        (e: {ts: unknown; kind: unknown}) => typeof e.ts === 'string' && typeof e.kind === 'string',
      ),
    ).toBe(true)
  }, 60_000)

  it('a FIFO at generations/: rerun names it (exit 1), no internal error', async () => {
    const h = home()
    const dir = launch(h, 'mkfifo "$ACTORS_STATE_DIR/generations"')
    await waitForResult(dir)
    const r = actors(h, ['rerun', 'v'])
    expect(r.code).toBe(1)
    expect(r.stderr).toContain(`${join(dir, 'generations')}: is not a directory`)
    expect(r.stderr).not.toMatch(/internal error|EEXIST/)
  }, 30_000)

  it('a link at stdout.log: logs --json prints one JSON document, the error', async () => {
    const h = home()
    const dir = launch(h, 'ln -sf /etc/hostname "$ACTORS_STATE_DIR/stdout.log"')
    await waitForResult(dir)
    const r = spawnSync(process.execPath, [join(import.meta.dirname, '..', 'bin', 'actors'), 'logs', 'v', '--json'], {
      env: {...process.env, ACTORS_HOME: h, CI: 'true'},
      encoding: 'utf8',
    })
    expect(r.status).toBe(1)
    expect(JSON.parse(r.stdout).error.message).toContain('is a symbolic link')
  }, 30_000)

  it('runs/.cache made a link to another directory: a launch writes nothing there, and the cache starts again', async () => {
    const h = home()
    await waitForResult(launch(h, 'true'))
    const elsewhere = join(h, 'elsewhere')
    mkdirSync(elsewhere)
    rmSync(join(h, 'runs', '.cache'), {recursive: true, force: true})
    symlinkSync(elsewhere, join(h, 'runs', '.cache'))
    const r = actors(h, ['run', '--', 'true'])
    expect(r.code, r.stderr).toBe(0)
    expect(readdirSync(elsewhere)).toEqual([])
    expect(lstatSync(join(h, 'runs', '.cache')).isDirectory()).toBe(true)
  }, 30_000)

  it('a kill_grace_ms of 1e308 written by a Run that ignores TERM: stop still ends it after the launch grace', async () => {
    const h = home()
    const forge = `node -e "const fs=require('fs'),f=process.env.ACTORS_STATE_DIR+'/run.json',m=JSON.parse(fs.readFileSync(f,'utf8'));m.kill_grace_ms=1e308;fs.writeFileSync(f+'.x',JSON.stringify(m));fs.renameSync(f+'.x',f)"`
    const dir = launch(h, `trap '' TERM; ${forge}; touch "$ACTORS_STATE_DIR/forged"; sleep 60`)
    await waitFor(() => existsSync(join(dir, 'forged')), 10_000, 'the forgery')
    const started = Date.now()
    const stop = actors(h, ['control', 'v', 'stop'], {timeout: 40_000})
    expect(stop.code, stop.stderr).toBe(0)
    expect(Date.now() - started).toBeLessThan(20_000)
    expect((await waitForResult(dir)).status).toBe('cancelled')
  }, 60_000)

  it('garbage written at its result.json before its end: the supervisor still records the end (exit 4)', async () => {
    const h = home()
    const dir = launch(h, 'printf "{garbage" > "$ACTORS_STATE_DIR/result.json"; exit 4')
    expect(await waitForResult(dir)).toMatchObject({status: 'failed', exit_code: 4})
  }, 30_000)

  it('two state dirs swapped while their Runs run: each end (exit 4, exit 5) is written where its dir now is', async () => {
    const h = home()
    const go = join(h, 'go')
    const dirs: Record<string, string> = {}
    for (const [name, code] of [
      ['v', 4],
      ['w', 5],
    ] as const) {
      const script = `while [ ! -e '${go}' ]; do sleep 0.05; done; exit ${code}`
      const r = actors(h, ['run', '--name', name, '--json', '--', 'sh', '-c', script])
      expect(r.code, r.stderr).toBe(0)
      dirs[name] = r.json.state_dir
    }
    const [v, w] = [dirs.v!, dirs.w!]
    for (const dir of [v, w])
      await waitFor(() => readJson(join(dir, 'run.json')).children_processes?.[0]?.pid, 10_000, 'the command')
    const swap = () => {
      renameSync(v, `${v}.x`)
      renameSync(w, v)
      renameSync(`${v}.x`, w)
    }
    swap() // what any process of either Run can do in the state root it writes
    writeFileSync(go, '')
    await waitForResult(w, 15_000) // v's dir, now at runs/w
    await waitForResult(v, 15_000)
    swap()
    expect(readJson(join(v, 'result.json'))).toMatchObject({status: 'failed', exit_code: 4})
    expect(readJson(join(w, 'result.json'))).toMatchObject({status: 'failed', exit_code: 5})
  }, 40_000)

  it('hard links at its trace, children journal and inbox: nothing the kernel writes goes through them', async () => {
    const h = home()
    const victims = ['trace', 'children', 'inbox'].map((name) => join(h, `victim-${name}`))
    for (const victim of victims) writeFileSync(victim, 'victim\n')
    const [trace, children, inbox] = victims
    const ready = join(h, 'ready')
    const script = `ln -f '${trace}' "$ACTORS_STATE_DIR/trace.jsonl" && ln -f '${children}' "$ACTORS_STATE_DIR/children.jsonl" && ln -f '${inbox}' "$ACTORS_STATE_DIR/inbox.jsonl" && touch '${ready}'; sleep 60`
    const r = actors(h, ['run', '--name', 'v', '--inbox', 'file', '--json', '--', 'sh', '-c', script])
    expect(r.code, r.stderr).toBe(0)
    await waitFor(() => existsSync(ready), 10_000, 'the links')
    expect(actors(h, ['control', 'v', 'pause']).code).toBe(0)
    expect(actors(h, ['control', 'v', 'resume']).code).toBe(0)
    const sent = actors(h, ['send', 'v', 'for v only'])
    expect(sent.code).not.toBe(0)
    expect(sent.stderr).toContain('inbox.jsonl: is a second name of another file (a hard link)')
    // A child of v (launched with v's lineage, as from inside it) is journaled in children.jsonl: refused, named.
    const child = actors(h, ['run', '--name', 'c', '--json', '--', 'true'], {
      env: {ACTORS_RUN: 'v', ACTORS_RUN_INSTANCE: r.json.run_instance_id, ACTORS_STATE_DIR: r.json.state_dir},
    })
    expect(child.code).toBe(1)
    expect(child.stderr).toContain('children.jsonl: is a second name of another file (a hard link)')
    expect(actors(h, ['control', 'v', 'stop']).code).toBe(0)
    await waitForResult(r.json.state_dir, 15_000)
    for (const victim of victims) expect(readFileSync(victim, 'utf8')).toBe('victim\n')
  }, 40_000)

  it('a dir under runs/ named as no Run id can be (250 characters): wait and prune go on, inspect names it as damage', async () => {
    const h = home()
    const e = actors(h, ['run', '--name', 'e', '--json', '--', 'true'])
    await waitForResult(e.json.state_dir)
    // What a Run can make in the state root it writes: a finished Run's files under a name too long for an index marker.
    const name = 'n'.repeat(250)
    const planted = join(h, 'runs', name)
    mkdirSync(planted)
    const meta = readJson(join(e.json.state_dir, 'run.json'))
    writeFileSync(
      join(planted, 'run.json'),
      JSON.stringify({...meta, run: name, run_instance_id: '11111111-2222-3333-4444-555555555555'}),
    )
    rmSync(join(h, 'index'), {recursive: true, force: true}) // the next reader rebuilds it from runs/
    const wait = actors(h, ['wait', '--timeout', '2s', '--json'])
    expect(wait.code, wait.stderr).toBe(0)
    expect(wait.json.rows).toMatchObject([{run: 'e', status: 'done'}])
    const listing = actors(h, ['inspect', '--json'])
    expect(listing.json.damaged).toMatchObject([{state_dir: planted, error: expect.stringContaining('Run id')}])
    const prune = actors(h, ['prune', '--older-than', '0s'])
    expect(prune.code, prune.stderr).toBe(0)
  }, 40_000)

  it('a planted lineage 3,000 deep and two Runs naming each other as parent: inspect --tree shows every Run, no internal error', async () => {
    const h = home()
    const e = actors(h, ['run', '--name', 'e', '--json', '--', 'true'])
    await waitForResult(e.json.state_dir)
    const base = readJson(join(e.json.state_dir, 'run.json'))
    const instance = (i: number) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`
    const plant = (run: string, i: number, parent?: {run: string; i: number}) => {
      const dir = join(h, 'runs', run)
      mkdirSync(dir)
      const ref = parent && {
        run: parent.run,
        run_instance_id: instance(parent.i),
        state_dir: join(h, 'runs', parent.run),
      }
      writeFileSync(
        join(dir, 'run.json'),
        JSON.stringify({...base, run, run_instance_id: instance(i), parent: ref ?? null}),
      )
    }
    for (let i = 0; i < 3000; i++) plant(`c${i}`, i, i > 0 ? {run: `c${i - 1}`, i: i - 1} : undefined)
    plant('x', 5000, {run: 'y', i: 5001})
    plant('y', 5001, {run: 'x', i: 5000})
    const tree = actors(h, ['inspect', '--tree'])
    expect(tree.code, tree.stderr).toBe(0)
    for (const run of ['c0', 'c2999', 'x', 'y', 'e']) expect(tree.stdout).toMatch(new RegExp(`(^|\\s)${run}\\s`, 'm'))
  }, 60_000)
  // The Run damages its own record, then exits 7: the end is still recorded, from the supervisor's own copy.
  for (const [what, damage] of [
    ['made over 1 MiB', 'head -c 1200000 /dev/zero | tr "\\0" x > "$ACTORS_STATE_DIR/run.json"'],
    ['truncated', ': > "$ACTORS_STATE_DIR/run.json"'],
    ['made a FIFO', 'rm "$ACTORS_STATE_DIR/run.json"; mkfifo "$ACTORS_STATE_DIR/run.json"'],
    ['made a directory', 'rm "$ACTORS_STATE_DIR/run.json"; mkdir "$ACTORS_STATE_DIR/run.json"'],
    ['made a link to /dev/zero', 'ln -sfn /dev/zero "$ACTORS_STATE_DIR/run.json"'],
    ['deleted', 'rm "$ACTORS_STATE_DIR/run.json"'],
    [
      'made to name another instance',
      `sed -i 's/"run_instance_id": *"[^"]*"/"run_instance_id":"00000000-0000-4000-8000-000000000000"/' "$ACTORS_STATE_DIR/run.json"`,
    ],
  ])
    it(`its own run.json ${what}: exit 7 is recorded and delivered, and run.json reads again`, async () => {
      const h = home()
      // After the last writes of run.json, which would otherwise undo the damage: the supervisor's (the command's
      // pid) and the launcher's (the supervisor's pid; on a loaded machine it can come after the command started).
      const gate = join(h, 'launched')
      const recorded = `until grep -q children_processes "$ACTORS_STATE_DIR/run.json" && [ -e ${gate} ]; do sleep 0.01; done`
      const r = actors(h, ['run', '--name', 'v', '--json', '--', 'sh', '-c', `${recorded}; ${damage}; exit 7`])
      expect(r.code, r.stderr).toBe(0)
      writeFileSync(gate, '')
      // Not one read of run.json while it may be a FIFO (a read would block for good): first the end over it.
      const metaIsFile = () => lstatSync(join(r.json.state_dir, 'run.json'), {throwIfNoEntry: false})?.isFile() === true
      await waitFor(
        () => existsSync(join(r.json.state_dir, 'result.json')) && metaIsFile(),
        15_000,
        'the end written over the damaged run.json',
      )
      const result = await waitForResult(r.json.state_dir)
      expect(result).toMatchObject({status: 'failed', exit_code: 7})
      expect(readJson(join(r.json.state_dir, 'run.json'))).toMatchObject({run: 'v', status: 'failed', exit_code: 7})
      const wait = actors(h, ['wait', 'v', '--timeout', '5s', '--json'])
      expect(wait.json.rows, wait.stderr).toMatchObject([{run: 'v', exit_code: 7}])
      expect(readFileSync(join(r.json.state_dir, 'stderr.log'), 'utf8')).toContain("from the supervisor's own copy")
    })
  // Red-team 14 (a note): objects a Run wrote into its run.json `control` showed as "[object Object]".
  it("inspect shows only the action names a Run's run.json lists under control", async () => {
    const h = home()
    const forge = `until grep -q child_pid "$ACTORS_STATE_DIR/run.json"; do sleep 0.01; done; node -e 'const f=process.env.ACTORS_STATE_DIR+"/run.json",fs=require("fs"),j=JSON.parse(fs.readFileSync(f));j.control=[{a:1},7,"pause"];fs.writeFileSync(f+".t",JSON.stringify(j));fs.renameSync(f+".t",f)'; touch "$ACTORS_STATE_DIR/forged"; exec sleep 30`
    const r = actors(h, ['run', '--name', 'p', '--json', '--', 'sh', '-c', forge])
    expect(r.code, r.stderr).toBe(0)
    await waitFor(() => existsSync(join(r.json.state_dir, 'forged')), 10_000, 'the control list forged')
    const card = actors(h, ['inspect', 'p'])
    expect(card.stdout).toMatch(/^controls: +pause$/m)
    expect(card.stdout).not.toContain('object')
    actors(h, ['control', 'p', 'kill'])
  })

  // Red-team 14 N4-L4: the supervisor waited the lock's whole 30 s before writing the end, the Run reading `running`
  // with its command gone all the while.
  it('a Run that names pid 1 in its own .lock has its timeout recorded on time', async () => {
    const h = home()
    const pid1 =
      'until ln -s "{\\"pid\\":1,\\"start\\":\\"$(sed "s/.*) //" /proc/1/stat | cut -d" " -f20)\\",\\"boot\\":\\"$(cat /proc/sys/kernel/random/boot_id)\\"}" "$ACTORS_STATE_DIR/.lock" 2>/dev/null; do sleep 0.01; done'
    const r = actors(h, ['run', '--name', 'p', '--timeout', '2s', '--json', '--', 'sh', '-c', `${pid1}; exec sleep 60`])
    expect(r.code, r.stderr).toBe(0)
    const started = Date.now()
    const result = await waitForResult(r.json.state_dir, 20_000)
    expect(result).toMatchObject({status: 'failed', reason: 'timeout'})
    expect(Date.now() - started).toBeLessThan(15_000)
  }, 40_000)
  // Red-team 13 N3-M4: the timeout held, but tracked containment recorded a lost supervisor's end.
  it.each(['tracked', 'cgroup'])(
    'a Run that rewrites its run_instance_id and meets its --timeout is recorded as timed out (%s)',
    async (containment) => {
      const h = home()
      const forge = `sed -i 's/"run_instance_id": *"[^"]*"/"run_instance_id":"00000000-0000-4000-8000-000000000000"/' "$ACTORS_STATE_DIR/run.json"`
      const env = {ACTORS_CONTAINMENT: containment}
      // After the last writes of run.json by the kernel, which would undo the forgery (as in the test above).
      const gate = join(h, 'launched')
      const recorded = `until grep -q children_processes "$ACTORS_STATE_DIR/run.json" && [ -e ${gate} ]; do sleep 0.01; done`
      const command = `${recorded}; ${forge}; exec sleep 30`
      const r = actors(h, ['run', '--name', 'p', '--timeout', '3s', '--json', '--', 'sh', '-c', command], {env})
      expect(r.code, r.stderr).toBe(0)
      writeFileSync(gate, '')
      const result = await waitForResult(r.json.state_dir)
      expect(result).toMatchObject({status: 'failed', reason: 'timeout', run_instance_id: r.json.run_instance_id})
      // Put right by the end (from the supervisor's own copy), or by an earlier write of the supervisor's own.
      expect(readJson(join(r.json.state_dir, 'run.json')).run_instance_id).toBe(r.json.run_instance_id)
    },
    20_000,
  )
  it.each([
    {what: 'directory', plant: (file: string) => mkdirSync(file), movedAside: 1},
    {what: 'dangling link', plant: (file: string) => symlinkSync('/nonexistent/x', file), movedAside: 0},
    {what: 'link to a file', plant: (file: string) => symlinkSync('/etc/hostname', file), movedAside: 0},
  ])(
    "a neighbour's $what where a live Run's result.json goes: wait waits, inspect reads it, and the end is recorded over it",
    async ({plant, movedAside}) => {
      const h = home()
      const r = actors(h, ['run', '--name', 'v', '--json', '--', 'sh', '-c', 'sleep 1; exit 4'])
      expect(r.code, r.stderr).toBe(0)
      plant(join(r.json.state_dir, 'result.json'))
      const early = actors(h, ['wait', 'v', '--timeout', '0', '--json'])
      expect(early.code, early.stderr).not.toBe(4)
      const seen = actors(h, ['inspect', 'v', '--json'])
      expect(seen.code, seen.stderr).toBe(0)
      const wait = actors(h, ['wait', 'v', '--timeout', '15s', '--json'])
      expect(wait.json?.rows, wait.stderr).toMatchObject([{run: 'v', status: 'failed', exit_code: 4}])
      expect(lstatSync(join(r.json.state_dir, 'result.json')).isFile()).toBe(true)
      expect(readJson(join(r.json.state_dir, 'result.json'))).toMatchObject({status: 'failed', exit_code: 4})
      // A directory is moved aside, not removed: what was planted stays to be looked at (a link is replaced itself).
      expect(readdirSync(r.json.state_dir).filter((name) => name.startsWith('result.json.damaged-'))).toHaveLength(
        movedAside,
      )
    },
  )
  it('dirs planted in runs/ named with a newline or led by "-": shown escaped, never as a Run or a flag', async () => {
    const h = home()
    const base = actors(h, ['run', '--name', 'base', '--json', '--', 'true'])
    await waitForResult(base.json.state_dir)
    const record = readJson(join(base.json.state_dir, 'run.json'))
    for (const id of ['n\nactors: all fine', '-rf']) {
      const dir = join(h, 'runs', id)
      mkdirSync(dir)
      writeFileSync(join(dir, 'run.json'), JSON.stringify({...record, run: id, state_dir: dir}))
    }
    const inspect = actors(h, ['inspect'])
    expect(inspect.stderr).toContain('runs/n\\x0aactors: all fine')
    expect(inspect.stderr.split('\n').filter((line) => line.startsWith('actors: all fine'))).toEqual([])
    expect(inspect.stdout).toMatch(/^-rf\s+-\s+damaged/m)
    const wait = actors(h, ['wait', '--timeout', '0'])
    expect(wait.stdout).not.toContain('actors inspect -rf')
  })
})

describe('live markers a Run forged in the run index', () => {
  // Each names an empty dir of its own (a launch still making its files, as far as a reader can tell): each used to
  // cost a pass over /proc of its own, and 20,000 made every listing take 40 s (red-team 13 N3-M3).
  it('3,000 of them keep inspect within seconds', () => {
    const h = home()
    expect(actors(h, ['run', '--name', 'keep', '--', 'sleep', '30']).code).toBe(0)
    const index = join(h, 'index')
    for (let i = 0; i < 3000; i++) {
      mkdirSync(join(h, 'runs', `f${i}`))
      writeFileSync(join(index, `f${i}@00000000-0000-4000-8000-${String(i).padStart(12, '0')}`), '')
    }
    const began = Date.now()
    const r = actors(h, ['inspect', '--json'])
    expect(r.code, r.stderr).toBe(0)
    expect(Date.now() - began).toBeLessThan(3000)
    expect(JSON.stringify(r.json)).toContain('keep')
    actors(h, ['control', 'keep', 'kill'])
  })
})
