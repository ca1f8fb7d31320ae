/**
 * Generations and steering end to end (SPEC: Generations and steering): real
 * supervised processes steered through stdin and file inboxes, finished Runs
 * resumed and rerun as new generations, delivery of earlier generations,
 * adoption by a relaunched parent and by `actors adopt`, interrupt, and a
 * generation move killed half way.
 */
import {spawn, spawnSync} from 'node:child_process'
import {existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it, vi} from 'vitest'
import {
  BIN,
  actors,
  actorsAsync,
  cliEnv,
  homeWithRecipes,
  homesPerTest,
  indexEntries,
  processAlive,
  readJson,
  removeHome,
  waitFor,
  waitForResult,
} from './helpers.js'

const home = homesPerTest('actors-gen-')
// Each test drives dozens of CLI calls and real processes; on a shared, loaded machine that takes a while.
vi.setConfig({testTimeout: 180_000})

const runDirOf = (h: string, id: string) => join(h, 'runs', id)
const runJson = (h: string, id: string) => readJson(join(runDirOf(h, id), 'run.json'))
const stdoutOf = (h: string, id: string) => {
  try {
    return readFileSync(join(runDirOf(h, id), 'stdout.log'), 'utf8')
  } catch {
    return ''
  }
}
/** Wait until the supervisor recorded the command (signals and sends before that could miss it). */
const started = (h: string, id: string) =>
  waitFor(() => runJson(h, id).child_pid && runJson(h, id), 15_000, `${id} started`)
const traceKinds = (dir: string) =>
  readFileSync(join(dir, 'trace.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l).kind)

describe('run --name over a finished Run', () => {
  it('says it is generation N of the id, on stderr in every mode and as generation in --json; a new id is generation 1', async () => {
    const h = home()
    const first = actors(h, ['run', '--name', 'build', '--json', '--', 'true'])
    expect(first.json).toMatchObject({run: 'build', generation: 1})
    expect(first.stderr).not.toContain('generation')
    await waitForResult(runDirOf(h, 'build'))
    for (const fast of ['1', '0']) {
      const plain = actors(h, ['run', '--name', 'build', '--', 'true'], {env: {ACTORS_FAST: fast}})
      expect(plain.code, plain.stderr).toBe(0)
      const n = runJson(h, 'build').generation
      expect(plain.stderr).toContain(`generation ${n} of build`)
      expect(plain.stderr).toContain('actors inspect build --generations')
      await waitForResult(runDirOf(h, 'build'))
    }
    const json = actors(h, ['run', '--name', 'build', '--json', '--', 'true'])
    expect(json.json).toMatchObject({run: 'build', generation: 4})
    expect(json.stderr).toContain('generation 4 of build')
    await waitForResult(runDirOf(h, 'build'))
    const waited = actors(h, ['run', '--name', 'build', '--wait', '--', 'true'])
    expect(waited.stderr).toContain('generation 5 of build')
  })
})

describe('steering a live Run', () => {
  it('inbox: stdin writes each message as one line to the command, in order; newlines travel as one JSON string', async () => {
    const h = home()
    const r = actors(h, [
      'run',
      '--name',
      'echo',
      '--inbox',
      'stdin',
      '--json',
      '--',
      'sh',
      '-c',
      'while read -r line; do printf "got %s\\n" "$line"; done',
    ])
    expect(r.code, r.stderr).toBe(0)
    await started(h, 'echo')
    const first = actors(h, ['send', 'echo', 'one', '--json'])
    expect(first.code, first.stderr).toBe(0)
    expect(first.json).toMatchObject({run: 'echo', generation: 1, delivered: 'stdin', written: true})
    expect(actors(h, ['send', 'echo', 'two\nlines', '--json']).json.written).toBe(true)
    await waitFor(() => stdoutOf(h, 'echo').includes('got "two\\nlines"'), 10_000, 'both lines echoed')
    expect(stdoutOf(h, 'echo')).toBe('got one\ngot "two\\nlines"\n')
    // Both messages are journaled, and the Run is still live (the supervisor holds stdin open).
    const records = readFileSync(join(runDirOf(h, 'echo'), 'inbox.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
    expect(records.map((x) => [x.seq, x.via, x.generation, x.message])).toEqual([
      [1, 'stdin', 1, 'one'],
      [2, 'stdin', 1, 'two\nlines'],
    ])
    expect(runJson(h, 'echo').status).toBe('running')
    expect(traceKinds(runDirOf(h, 'echo'))).toContain('runtime.message')
  })

  it('inbox: file keeps messages for `actors inbox`, which moves its cursor; --all and --json show every record', async () => {
    const h = home()
    const gate = join(h, 'gate')
    // The command reads its inbox once the test opens the gate, then again after a second message.
    const script = `while [ ! -e ${gate} ]; do sleep 0.05; done; actors inbox > ${h}/first.txt; while [ ! -e ${gate}2 ]; do sleep 0.05; done; actors inbox --json > ${h}/second.json; actors inbox --all --json > ${h}/all.json`
    expect(actors(h, ['run', '--name', 'reader', '--inbox', 'file', '--', 'sh', '-c', script]).code).toBe(0)
    expect(actors(h, ['send', 'reader', 'hello', '--json']).json).toMatchObject({delivered: 'inbox', generation: 1})
    expect(actors(h, ['send', 'reader', 'a\nb']).code).toBe(0)
    writeFileSync(gate, '')
    await waitFor(() => existsSync(join(h, 'first.txt')) && readFileSync(join(h, 'first.txt'), 'utf8').length > 0)
    expect(actors(h, ['send', 'reader', 'third']).code).toBe(0)
    writeFileSync(`${gate}2`, '')
    const result = await waitForResult(runDirOf(h, 'reader'))
    expect(result.status).toBe('done')
    expect(readFileSync(join(h, 'first.txt'), 'utf8')).toBe('hello\n"a\\nb"\n')
    // The cursor moved: only the message sent after the first read.
    expect(readJson(join(h, 'second.json')).records.map((x: any) => x.message)).toEqual(['third'])
    const all = readJson(join(h, 'all.json')).records
    expect(all.map((x: any) => x.message)).toEqual(['hello', 'a\nb', 'third'])
    for (const record of all)
      expect(Object.keys(record)).toEqual(expect.arrayContaining(['id', 'ts', 'message', 'generation']))
    // Outside a Run, inbox refuses with the fix.
    const outside = actors(h, ['inbox'])
    expect(outside.code).toBe(2)
    expect(outside.stderr).toContain('inside a Run')
  })

  it('concurrent sends get unique ids and sequence numbers, and the journal stays valid', async () => {
    const h = home()
    expect(actors(h, ['run', '--name', 'many', '--inbox', 'file', '--', 'sleep', '60']).code).toBe(0)
    await started(h, 'many')
    const sends = await Promise.all(
      Array.from({length: 8}, (_, i) => actorsAsync(h, ['send', 'many', `m${i}`, '--json'])),
    )
    expect(sends.map((s) => s.code)).toEqual(Array(8).fill(0))
    expect(new Set(sends.map((s) => s.json.message_id)).size).toBe(8)
    const lines = readFileSync(join(runDirOf(h, 'many'), 'inbox.jsonl'), 'utf8')
      .trim()
      .split('\n')
    const records = lines.map((l) => JSON.parse(l))
    expect(records).toHaveLength(8)
    expect(records.map((x) => x.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8])
    expect(new Set(records.map((x) => x.message))).toEqual(new Set(Array.from({length: 8}, (_, i) => `m${i}`)))
  })

  it('refuses bad input with the documented exit codes and changes nothing', async () => {
    const h = home()
    expect(actors(h, ['run', '--name', 'plain', '--', 'sleep', '60']).code).toBe(0)
    await started(h, 'plain')
    const notSteerable = actors(h, ['send', 'plain', 'hi'])
    expect(notSteerable.code).toBe(3)
    expect(notSteerable.stderr).toContain('not steerable')
    expect(notSteerable.stderr).toContain('fix: ')
    expect(existsSync(join(runDirOf(h, 'plain'), 'inbox.jsonl'))).toBe(false)
    const huge = actors(h, ['send', 'plain', '-'], {input: 'x'.repeat(64 * 1024 + 1)})
    expect(huge.code).toBe(2)
    expect(huge.stderr).toContain('over the 64 KiB limit')
    // Read only up to the limit: an endless stdin is refused, not read until memory runs out.
    const endless = spawnSync('sh', ['-c', `yes | "${process.execPath}" "${BIN}" send plain -`], {
      env: cliEnv(h),
      encoding: 'utf8',
      timeout: 20_000,
    })
    expect(endless.status, endless.stderr).toBe(2)
    expect(endless.stderr).toContain('over the 64 KiB limit')
    expect(actors(h, ['send', 'nobody', 'hi']).code).toBe(4)
    expect(actors(h, ['send', 'plain@1', 'hi']).code).toBe(2)
    for (const ref of ['plain@0', 'plain@x', 'plain@']) {
      const bad = actors(h, ['inspect', ref])
      expect(bad.code, ref).toBe(2)
      expect(bad.stderr).toContain('generation')
    }
    expect(actors(h, ['inspect', 'plain@2']).code).toBe(4)
    expect(actors(h, ['logs', 'plain@7']).code).toBe(4)
    expect(actors(h, ['run', '--name', 'x', '--inbox', 'pipe', '--', 'true']).code).toBe(2)
    // A send racing a launch of the same id (its dir exists, run.json not yet written): a clear refusal.
    mkdirSync(runDirOf(h, 'racing'))
    const racing = actors(h, ['send', 'racing', 'hi'])
    expect(racing.code).toBe(3)
    expect(racing.stderr).toContain('being created')
    // Relaunching a live id stays refused (exit 5), and so does a rerun of it.
    expect(actors(h, ['run', '--name', 'plain', '--', 'true']).code).toBe(5)
    expect(actors(h, ['rerun', 'plain']).code).toBe(5)
    expect(runJson(h, 'plain').generation).toBe(1)
  })
})

describe('generations', () => {
  it('send to a finished Run resumes it as generation 2 with ACTORS_MESSAGE; wait delivers both, each with its own output, exactly once', async () => {
    const h = home()
    const script =
      'echo "gen=$ACTORS_GENERATION msg=$ACTORS_MESSAGE"; [ -n "$ACTORS_MESSAGE" ] && actors inbox; echo ckpt >> "$ACTORS_STATE_DIR/checkpoint"'
    expect(actors(h, ['run', '--name', 'job', '--', 'sh', '-c', script]).code).toBe(0)
    const first = await waitForResult(runDirOf(h, 'job'))
    const sent = actors(h, ['send', 'job', 'go on', '--json'])
    expect(sent.code, sent.stderr).toBe(0)
    expect(sent.json).toMatchObject({run: 'job', generation: 2, delivered: 'resumed'})
    expect(sent.json.run_instance_id).not.toBe(first.run_instance_id)
    const second = await waitForResult(runDirOf(h, 'job'))
    expect(second.run_instance_id).toBe(sent.json.run_instance_id)
    // The resume message is the new generation's first inbox record; files the command wrote stay.
    expect(stdoutOf(h, 'job')).toBe('gen=2 msg=go on\ngo on\n')
    expect(readFileSync(join(runDirOf(h, 'job'), 'checkpoint'), 'utf8')).toBe('ckpt\nckpt\n')
    const archive = join(runDirOf(h, 'job'), 'generations', '1')
    expect(readdirSync(archive).sort()).toEqual(
      expect.arrayContaining(['result.json', 'run.json', 'stdout.log', 'trace.jsonl']),
    )
    expect(readFileSync(join(archive, 'stdout.log'), 'utf8')).toBe('gen=1 msg=\n')
    expect(runJson(h, 'job').generation).toBe(2)

    const gens = actors(h, ['inspect', 'job', '--generations', '--json'])
    expect(gens.json.generations.map((g: any) => [g.generation, g.status, g.exit_code, g.current])).toEqual([
      [1, 'done', 0, false],
      [2, 'done', 0, true],
    ])
    expect(Object.keys(gens.json.generations[0])).toEqual(
      expect.arrayContaining(['generation', 'run_instance_id', 'status', 'started_at', 'ended_at', 'exit_code']),
    )
    expect(actors(h, ['logs', 'job@1']).stdout).toBe('gen=1 msg=\n')
    expect(actors(h, ['inspect', 'job@1', '--json']).json.run_instance_id).toBe(first.run_instance_id)
    expect(actors(h, ['inspect', 'job']).stdout).toContain('job#2')
    expect(actors(h, ['inspect']).stdout).toContain('job#2')

    const batch = actors(h, ['wait', '--json', '--timeout', '5s'])
    expect(batch.code, batch.stderr).toBe(0)
    expect(batch.json.rows.map((r: any) => [r.generation, r.run_instance_id, r.output])).toEqual([
      [1, first.run_instance_id, 'gen=1 msg=\n'],
      [2, second.run_instance_id, 'gen=2 msg=go on\ngo on\n'],
    ])
    expect(actors(h, ['wait', '--json', '--timeout', '0']).json.rows).toEqual([])
    // Resumed again: only the new generation is delivered; the plain card says it is a resumed one.
    expect(actors(h, ['send', 'job', 'third']).code).toBe(0)
    await waitForResult(runDirOf(h, 'job'))
    const third = actors(h, ['wait', 'job', '--timeout', '5s'])
    expect(third.stdout).toContain('job#3 (resumed)')
    expect(actors(h, ['wait', '--json', '--timeout', '0']).json.rows).toEqual([])
  })

  it('an unreported earlier generation is delivered exactly once, also to `wait RUN`, after a relaunch by --name', async () => {
    const h = home()
    expect(actors(h, ['run', '--name', 'n', '--', 'sh', '-c', 'echo first; exit 3']).code).toBe(0)
    await waitForResult(runDirOf(h, 'n'))
    expect(actors(h, ['run', '--name', 'n', '--', 'sh', '-c', 'echo second']).code).toBe(0)
    await waitForResult(runDirOf(h, 'n'))
    const batch = actors(h, ['wait', 'n', '--json', '--timeout', '5s'])
    // A failed earlier generation makes the wait exit 1 like any failed member.
    expect(batch.code).toBe(1)
    expect(batch.json.rows.map((r: any) => [r.generation, r.status, r.output])).toEqual([
      [1, 'failed', 'first\n'],
      [2, 'done', 'second\n'],
    ])
    // Naming the Run asks for it again: its current generation, not the earlier one already delivered.
    const again = actors(h, ['wait', 'n', '--json', '--timeout', '0'])
    expect(again.json.rows.map((r: any) => [r.generation, r.status])).toEqual([[2, 'done']])
    expect(again.json.already_reported).toEqual(['n'])
    // After a third launch, the reported earlier generations stay reported.
    expect(actors(h, ['run', '--name', 'n', '--', 'true']).code).toBe(0)
    await waitForResult(runDirOf(h, 'n'))
    expect(actors(h, ['wait', '--json', '--timeout', '5s']).json.rows.map((r: any) => r.generation)).toEqual([3])
    expect(
      actors(h, ['inspect', 'n', '--generations', '--json']).json.generations.map((g: any) => g.generation),
    ).toEqual([1, 2, 3])
    // --earlier-generations keeps the current generation; a plain prune removes the Run with all its generations.
    expect(actors(h, ['prune', 'n', '--earlier-generations', '--json']).json.pruned_generations).toEqual([
      {run: 'n', generations: [1, 2]},
    ])
    expect(
      actors(h, ['inspect', 'n', '--generations', '--json']).json.generations.map((g: any) => g.generation),
    ).toEqual([3])
    expect(actors(h, ['prune', 'n', '--json']).json.pruned).toEqual(['n'])
    expect(existsSync(runDirOf(h, 'n'))).toBe(false)
  })

  it('an archived generation keeps its index marker until reported, and its reported.json moves with it', async () => {
    const h = home()
    const dir = runDirOf(h, 'g')
    expect(actors(h, ['run', '--name', 'g', '--', 'true']).code).toBe(0)
    await waitForResult(dir)
    const first = runJson(h, 'g').run_instance_id
    // Generation 1 reported before the relaunch: its mark moves into generations/1/, the new generation starts unreported.
    expect(actors(h, ['wait', 'g', '--json', '--timeout', '5s']).json.rows.map((r: any) => r.generation)).toEqual([1])
    expect(readJson(join(dir, 'reported.json')).run_instance_id).toBe(first)
    expect(actors(h, ['run', '--name', 'g', '--', 'sh', '-c', 'exit 3']).code).toBe(0)
    await waitForResult(dir)
    const second = runJson(h, 'g').run_instance_id
    expect(existsSync(join(dir, 'reported.json'))).toBe(false)
    expect(readJson(join(dir, 'generations', '1', 'reported.json')).run_instance_id).toBe(first)
    expect(runJson(h, 'g').unreported_generations).toBeUndefined()
    // Generation 2 archived unreported: owed in run.json, and its own marker stays in the index.
    expect(actors(h, ['run', '--name', 'g', '--', 'true']).code).toBe(0)
    await waitForResult(dir)
    expect(runJson(h, 'g').unreported_generations).toEqual([{generation: 2, run_instance_id: second}])
    expect(indexEntries(h).filter((n) => n.endsWith(`g@${second}`))).toHaveLength(1)
    // A lost index is rebuilt from the state dirs, owed generations included.
    rmSync(join(h, 'index'), {recursive: true, force: true})
    const batch = actors(h, ['wait', '--json', '--timeout', '5s'])
    expect(batch.code).toBe(1)
    expect(batch.json.rows.map((r: any) => [r.generation, r.status, r.archived ?? false])).toEqual([
      [2, 'failed', true],
      [3, 'done', false],
    ])
    // Delivered: marked in its own archive, its marker gone, never delivered again.
    // One batch record for both members, linked into each one's dir.
    expect(readJson(join(dir, 'generations', '2', 'reported.json')).run_instance_ids).toContain(second)
    expect(indexEntries(h).filter((n) => n.startsWith('g@') || n.includes('~g@'))).toEqual([])
    expect(actors(h, ['wait', '--json', '--timeout', '0']).json.rows).toEqual([])
  })

  it('rerun replaces values, validated like a launch; a bad value starts nothing; resume: false refuses send', async () => {
    const {home: h, recipes} = homeWithRecipes({
      'count.yaml':
        'args: ["n:int=1", "word=hi"]\ntemplate: [sh, -c, "echo $0 $1 gen=$ACTORS_GENERATION", "{n}", "{word}"]\nresume: false\n',
    })
    try {
      expect(actors(h, ['run', '--recipes', recipes, 'count', '--name', 'c', 'n=2']).code).toBe(0)
      await waitForResult(runDirOf(h, 'c'))
      const bad = actors(h, ['rerun', 'c', 'n=two'])
      expect(bad.code).toBe(2)
      expect(bad.stderr).toContain('count.yaml')
      expect(actors(h, ['rerun', 'c', 'nope=1']).code).toBe(2)
      expect(runJson(h, 'c').generation).toBe(1)
      expect(existsSync(join(runDirOf(h, 'c'), 'generations'))).toBe(false)
      const rerun = actors(h, ['rerun', 'c', 'word=yo', '--json'])
      expect(rerun.code, rerun.stderr).toBe(0)
      expect(rerun.json).toMatchObject({run: 'c', generation: 2})
      await waitForResult(runDirOf(h, 'c'))
      // n keeps its earlier value; word is replaced.
      expect(stdoutOf(h, 'c')).toBe('2 yo gen=2\n')
      expect(runJson(h, 'c').values).toEqual({n: 2, word: 'yo'})
      // A command the Run wrote into its own record is not what rerun runs: the Recipe is resolved again.
      const marker = join(h, 'forged-ran')
      const forged = ['sh', '-c', `touch '${marker}'`]
      const meta = runJson(h, 'c')
      writeFileSync(
        join(runDirOf(h, 'c'), 'run.json'),
        JSON.stringify({...meta, argv: forged, plan: {mode: 'single', steps: [forged]}}),
      )
      expect(actors(h, ['rerun', 'c']).code).toBe(0)
      await waitFor(() => runJson(h, 'c').generation === 3, 30_000, 'generation 3 of c')
      await waitForResult(runDirOf(h, 'c'))
      expect(stdoutOf(h, 'c')).toBe('2 yo gen=3\n')
      expect(existsSync(marker)).toBe(false)
      expect(runJson(h, 'c').generation).toBe(3)
      const refused = actors(h, ['send', 'c', 'more'])
      expect(refused.code).toBe(3)
      expect(refused.stderr).toContain('resume: false')
      expect(runJson(h, 'c').generation).toBe(3)
      // An ad-hoc Run takes no values.
      expect(actors(h, ['run', '--name', 'adhoc', '--', 'true']).code).toBe(0)
      await waitForResult(runDirOf(h, 'adhoc'))
      expect(actors(h, ['rerun', 'adhoc', 'x=1']).code).toBe(2)
      expect(actors(h, ['rerun', 'nobody']).code).toBe(4)
    } finally {
      removeHome(h)
    }
  })

  it('a generation number rewritten in run.json is never taken as an archived one: each rerun archives past the last', async () => {
    const h = home()
    expect(actors(h, ['run', '--name', 'g', '--', 'sh', '-c', 'echo gen-$ACTORS_GENERATION']).code).toBe(0)
    await waitForResult(runDirOf(h, 'g'))
    const bad: unknown[] = [1e308, '../x', -3, 2.5, 1, 0]
    for (const [i, value] of bad.entries()) {
      // What the Run itself (or a neighbour) can write into its own record.
      const file = join(runDirOf(h, 'g'), 'run.json')
      writeFileSync(`${file}.t`, JSON.stringify({...runJson(h, 'g'), generation: value}))
      renameSync(`${file}.t`, file)
      const rerun = actors(h, ['rerun', 'g'])
      expect(rerun.code, rerun.stderr).toBe(0)
      await waitForResult(runDirOf(h, 'g'))
      expect(runJson(h, 'g').generation).toBe(i + 2)
      expect(stdoutOf(h, 'g')).toBe(`gen-${i + 2}\n`)
    }
    const archive = join(runDirOf(h, 'g'), 'generations')
    expect(readdirSync(archive).sort()).toEqual(['1', '2', '3', '4', '5', '6'])
    for (let n = 1; n <= bad.length; n++) {
      expect(readFileSync(join(archive, String(n), 'stdout.log'), 'utf8')).toBe(`gen-${n}\n`)
      expect(readJson(join(archive, String(n), 'run.json')).generation).toBe(n)
    }
  })

  it('a planted generations/ dir past what a generation can be is no archive: reruns never replace one, and the last number refuses', async () => {
    const h = home()
    expect(actors(h, ['run', '--name', 'g', '--', 'sh', '-c', 'echo gen-$ACTORS_GENERATION']).code).toBe(0)
    await waitForResult(runDirOf(h, 'g'))
    const archive = join(runDirOf(h, 'g'), 'generations')
    // 2^53 + 1 reads as 2^53 as a double: each rerun once archived under that same name, replacing the last.
    for (const name of ['9007199254740993', '0012', '1000000000']) mkdirSync(join(archive, name), {recursive: true})
    for (const n of [2, 3]) {
      const rerun = actors(h, ['rerun', 'g'])
      expect(rerun.code, rerun.stderr).toBe(0)
      await waitForResult(runDirOf(h, 'g'))
      expect(runJson(h, 'g').generation).toBe(n)
    }
    expect(readFileSync(join(archive, '1', 'stdout.log'), 'utf8')).toBe('gen-1\n')
    expect(readFileSync(join(archive, '2', 'stdout.log'), 'utf8')).toBe('gen-2\n')
    // The highest number there is: no generation can follow it, so the rerun is refused and nothing moves.
    mkdirSync(join(archive, '999999999'))
    const refused = actors(h, ['rerun', 'g'])
    expect(refused.code, refused.stderr).toBe(1)
    expect(refused.stderr).toContain(join(archive, '999999999'))
    expect(refused.stderr).toContain('fix:')
    expect(runJson(h, 'g').generation).toBe(3)
    expect(stdoutOf(h, 'g')).toBe('gen-3\n')
  })

  it('a resumed child obeys its parent max-parallel: queued until a slot frees', async () => {
    const h = home()
    const gate = join(h, 'gate')
    const script = `actors run --name b -- true >/dev/null; while [ ! -e ${gate} ]; do sleep 0.05; done; actors run --name a -- sleep 300 >/dev/null; sleep 300`
    expect(actors(h, ['run', '--name', 'p', '--max-parallel', '1', '--', 'sh', '-c', script]).code).toBe(0)
    await waitFor(() => existsSync(join(runDirOf(h, 'b'), 'result.json')), 15_000, 'b done')
    await waitForResult(runDirOf(h, 'b'))
    writeFileSync(gate, '')
    await started(h, 'a')
    const resumed = actors(h, ['send', 'b', 'again', '--json'])
    expect(resumed.code, resumed.stderr).toBe(0)
    expect(resumed.json).toMatchObject({generation: 2, status: 'queued'})
    expect(runJson(h, 'b').parent.run_instance_id).toBe(runJson(h, 'p').run_instance_id)
    expect(actors(h, ['control', 'a', 'kill']).code).toBe(0)
    const result = await waitForResult(runDirOf(h, 'b'))
    expect(result.status).toBe('done')
    expect(runJson(h, 'b').generation).toBe(2)
  })

  it('a resumed root obeys its spent budget (exit 5, no generation started)', async () => {
    const h = home()
    expect(
      actors(h, [
        'run',
        '--name',
        'spender',
        '--budget-tokens',
        '10',
        '--',
        'actors',
        'emit',
        'usage',
        '--tokens',
        '20',
      ]).code,
    ).toBe(0)
    await waitForResult(runDirOf(h, 'spender'))
    const refused = actors(h, ['send', 'spender', 'more'])
    expect(refused.code).toBe(5)
    expect(refused.stderr).toContain('budget')
    expect(runJson(h, 'spender').generation).toBe(1)
  })

  it('the library Recipes: a stdin line service and a job resumed from its checkpoint', async () => {
    const h = home()
    expect(actors(h, ['run', 'steer/line-service', '--name', 'up', 'prefix=> ']).code).toBe(0)
    expect(actors(h, ['send', 'up', 'hello']).code).toBe(0)
    await waitFor(() => stdoutOf(h, 'up').includes('1 > HELLO'), 15_000, 'the answer')
    expect(actors(h, ['send', 'up', 'quit']).code).toBe(0)
    expect((await waitForResult(runDirOf(h, 'up'))).status).toBe('done')
    expect(actors(h, ['run', 'steer/resumable', '--name', 'count', 'steps=2']).code).toBe(0)
    await waitForResult(runDirOf(h, 'count'))
    expect(actors(h, ['send', 'count', 'again']).code).toBe(0)
    await waitForResult(runDirOf(h, 'count'))
    expect(stdoutOf(h, 'count')).toBe('generation 2 continues at 2 (message: again)\nnow at 4\n')
    expect(actors(h, ['rerun', 'count', 'steps=1']).code).toBe(0)
    await waitForResult(runDirOf(h, 'count'))
    expect(stdoutOf(h, 'count')).toBe('generation 3 continues at 4\nnow at 5\n')
  })

  it('survives a crash in the middle of a generation move: old layout before the commit, new layout after', async () => {
    const h = home()
    expect(actors(h, ['run', '--name', 'm', '--', 'sh', '-c', 'echo one']).code).toBe(0)
    const first = await waitForResult(runDirOf(h, 'm'))
    const dir = runDirOf(h, 'm')
    const generations = join(dir, 'generations')
    const relaunch = (at: string) =>
      spawn(process.execPath, [BIN, 'run', '--name', 'm', '--', 'sh', '-c', 'echo two'], {
        env: cliEnv(h, {ACTORS_TEST_GENERATION_MOVE_DELAY_MS: '30000', ACTORS_TEST_GENERATION_MOVE_AT: at}),
        stdio: 'ignore',
      })

    // Killed while staged: the old layout, exactly as it was.
    const staged = relaunch('staged')
    await waitFor(
      () => existsSync(generations) && readdirSync(generations).some((n) => n.startsWith('.staging-')),
      15_000,
      'staging dir',
    )
    staged.kill('SIGKILL')
    await waitFor(() => !processAlive(staged.pid!))
    expect(runJson(h, 'm')).toMatchObject({generation: 1, run_instance_id: first.run_instance_id, status: 'done'})
    expect(existsSync(join(generations, '1'))).toBe(false)
    expect(readJson(join(dir, 'result.json')).run_instance_id).toBe(first.run_instance_id)
    expect(actors(h, ['logs', 'm']).stdout).toBe('one\n')

    // Killed right after the commit: the next reader finishes the move (new layout), nothing lost or mixed.
    const committed = relaunch('committed')
    await waitFor(() => runJson(h, 'm').generation_move, 15_000, 'committed move')
    committed.kill('SIGKILL')
    await waitFor(() => !processAlive(committed.pid!))
    const inspected = actors(h, ['inspect', 'm', '--json'])
    expect(inspected.code, inspected.stderr).toBe(0)
    expect(inspected.json.meta.generation).toBe(2)
    expect(runJson(h, 'm').generation_move).toBeUndefined()
    expect(readdirSync(generations)).toEqual(['1'])
    expect(readJson(join(generations, '1', 'run.json')).run_instance_id).toBe(first.run_instance_id)
    expect(readFileSync(join(generations, '1', 'stdout.log'), 'utf8')).toBe('one\n')
    for (const name of ['result.json', 'stdout.log', 'trace.jsonl'])
      expect(existsSync(join(dir, name)), name).toBe(false)
    expect(actors(h, ['logs', 'm@1']).stdout).toBe('one\n')
  })
})

describe('an earlier generation read mid-move', () => {
  it('a generation keeps its place in the index while it is launched over the last: listed live, then delivered', async () => {
    const h = home()
    expect(actors(h, ['run', '--name', 'mv', '--', 'sh', '-c', 'echo one']).code).toBe(0)
    const first = await waitForResult(runDirOf(h, 'mv'))
    expect(actors(h, ['run', '--name', 'other', '--', 'sleep', '30']).code).toBe(0)
    // The relaunch holds its move once staged: generation 2 is in the index, run.json still generation 1's.
    const gate = join(h, 'gate')
    const relaunch = spawn(
      process.execPath,
      [BIN, 'run', '--name', 'mv', '--', 'sh', '-c', `while [ ! -e ${gate} ]; do sleep 0.05; done`],
      {
        env: cliEnv(h, {ACTORS_TEST_GENERATION_MOVE_DELAY_MS: '3000', ACTORS_TEST_GENERATION_MOVE_AT: 'staged'}),
        stdio: 'ignore',
      },
    )
    const generations = join(runDirOf(h, 'mv'), 'generations')
    await waitFor(
      () => existsSync(generations) && readdirSync(generations).some((n) => n.startsWith('.staging-')),
      15_000,
      'staging dir',
    )
    // A reader of the owner's index meanwhile (a wait for another Run) must not take generation 2 for gone.
    expect(actors(h, ['wait', 'other', '--json', '--timeout', '300ms']).code).toBe(124)
    await new Promise<void>((resolve) => relaunch.on('exit', () => resolve()))
    const live = actors(h, ['inspect', '--status', 'running', '--json']).json.runs.map((r: {run: string}) => r.run)
    expect(live.sort()).toEqual(['mv', 'other'])
    writeFileSync(gate, '')
    const second = await waitForResult(runDirOf(h, 'mv'))
    const batch = actors(h, ['wait', '--any', '--json', '--timeout', '10s'])
    expect(batch.code, batch.stderr).toBe(0)
    const delivered = batch.json.rows.map((row: {run_instance_id: string}) => row.run_instance_id)
    expect(delivered.sort()).toEqual([first.run_instance_id, second.run_instance_id].sort())
  }, 60_000)
})

describe('adoption and interrupt', () => {
  it("a relaunched parent adopts its earlier generation's live child; stopping it ends the child", async () => {
    const h = home()
    expect(
      actors(h, ['run', '--name', 'boss', '--', 'sh', '-c', 'actors run --name worker -- sleep 300 >/dev/null']).code,
    ).toBe(0)
    await waitForResult(runDirOf(h, 'boss'))
    const worker = await started(h, 'worker')
    const oldBoss = runJson(h, 'boss')
    expect(worker.parent.run_instance_id).toBe(oldBoss.run_instance_id)
    // A new generation of the parent while the child still runs.
    expect(actors(h, ['run', '--name', 'boss', '--', 'sleep', '300']).code).toBe(0)
    const newBoss = await started(h, 'boss')
    expect(runJson(h, 'worker').parent.run_instance_id).toBe(newBoss.run_instance_id)
    expect(traceKinds(runDirOf(h, 'worker'))).toContain('runtime.adopted')
    expect(traceKinds(runDirOf(h, 'boss'))).toContain('runtime.adopted')
    // A launch carrying the earlier generation's lineage stays refused.
    const stale = actors(h, ['run', '--', 'true'], {
      env: {ACTORS_RUN: 'boss', ACTORS_RUN_INSTANCE: oldBoss.run_instance_id, ACTORS_STATE_DIR: runDirOf(h, 'boss')},
    })
    expect(stale.code).toBe(3)
    const tree = actors(h, ['inspect', '--tree'])
    expect(tree.stdout).toMatch(/boss#2\s+running/)
    expect(tree.stdout).toMatch(/└─ worker\s+running/)
    const stop = actors(h, ['control', 'boss', 'stop', '--json'])
    expect(stop.code, stop.stderr).toBe(0)
    expect(stop.json.descendants.ended).toEqual(['worker'])
    expect((await waitForResult(runDirOf(h, 'worker'))).status).toBe('cancelled')
    await waitFor(() => !processAlive(worker.child_pid), 10_000, 'worker process gone')
  })

  it('adopt moves a top-level Run (and its subtree) under a parent; a Run with a parent is refused', async () => {
    const h = home()
    expect(actors(h, ['run', '--name', 'coord', '--', 'sleep', '300']).code).toBe(0)
    expect(
      actors(h, ['run', '--name', 'solo', '--', 'sh', '-c', 'actors run --name sub -- sleep 300 >/dev/null; sleep 300'])
        .code,
    ).toBe(0)
    await started(h, 'coord')
    await started(h, 'sub')
    const adopted = actors(h, ['adopt', 'solo', '--parent', 'coord', '--json'])
    expect(adopted.code, adopted.stderr).toBe(0)
    expect(adopted.json.adopted).toEqual([expect.objectContaining({run: 'solo', depth: 1, descendants: 1})])
    const coord = runJson(h, 'coord')
    expect(runJson(h, 'solo')).toMatchObject({
      parent: {run: 'coord', run_instance_id: coord.run_instance_id},
      root: 'coord',
      depth: 1,
    })
    expect(runJson(h, 'sub')).toMatchObject({root: 'coord', depth: 2})
    expect(traceKinds(runDirOf(h, 'solo'))).toContain('runtime.adopted')
    expect(traceKinds(runDirOf(h, 'coord'))).toContain('runtime.adopted')
    const again = actors(h, ['adopt', 'sub', '--parent', 'coord'])
    expect(again.code).toBe(3)
    expect(again.stderr).toContain('already has a parent')
    expect(actors(h, ['adopt', 'coord', '--parent', 'solo']).code).toBe(2)
    expect(actors(h, ['adopt', 'solo']).code).toBe(2)
    // Too deep: the depth limit counts the whole moved subtree.
    expect(actors(h, ['run', '--name', 'other', '--', 'sleep', '300']).code).toBe(0)
    expect(actors(h, ['adopt', 'other', '--parent', 'sub'], {env: {ACTORS_MAX_DEPTH: '2'}}).code).toBe(5)
    // Stopping the adopting Run cascades through the moved subtree.
    const stop = actors(h, ['control', 'coord', 'stop', '--json'])
    expect(stop.json.descendants.ended.sort()).toEqual(['solo', 'sub'])
  })

  it("interrupt sends SIGINT to the command's group; a trap handles it and the Run stays live", async () => {
    const h = home()
    const script = 'trap "echo interrupted" INT; while true; do sleep 0.05; done'
    expect(actors(h, ['run', '--name', 'trap', '--', 'sh', '-c', script]).code).toBe(0)
    await started(h, 'trap')
    const r = actors(h, ['control', 'trap', 'interrupt', '--json'])
    expect(r.code, r.stderr).toBe(0)
    expect(r.json).toMatchObject({action: 'interrupt', handled_by: 'kernel', status: 'running'})
    expect(r.json.signalled_groups).toHaveLength(1)
    await waitFor(() => stdoutOf(h, 'trap').includes('interrupted'), 10_000, 'trap output')
    expect(runJson(h, 'trap').status).toBe('running')
    expect(actors(h, ['control', 'trap', 'status', '--json']).json.generation).toBe(1)
    expect(actors(h, ['control', 'trap', 'interrupt', 'now']).code).toBe(2)
    actors(h, ['control', 'trap', 'kill'])
    await waitForResult(runDirOf(h, 'trap'))
    expect(actors(h, ['control', 'trap', 'interrupt']).code).toBe(3)
  })
})
