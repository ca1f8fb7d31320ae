/**
 * `actors wait` end to end: all / --any / --timeout / unknown ids, attention
 * waking a wait once, reported-once across successive and concurrent waits,
 * a wait killed between claiming and printing, batch bounds, run --wait.
 */
import {spawn} from 'node:child_process'
import {randomUUID} from 'node:crypto'
import {existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {writeJsonAtomic} from '../src/lib/base/platform/state-files.js'
import {
  BIN,
  actors,
  actorsAsync,
  cliEnv,
  homesPerTest,
  readJson,
  waitFor,
  waitForResult,
  writeFinishedRun,
  type CliResult,
} from './helpers.js'

const home = homesPerTest('actors-wait-')

const launch = (h: string, name: string, ...command: string[]) => {
  const r = actors(h, ['run', '--name', name, '--', ...command])
  expect(r.code, r.stderr).toBe(0)
  return join(h, 'runs', name)
}
const runsOf = (r: CliResult) => (r.json?.rows ?? []).map((row: any) => row.run)

describe('wait', () => {
  it('waits for all unreported Runs, reports each once, and exits 1 when one failed', async () => {
    const h = home()
    launch(h, 'quick', 'sh', '-c', 'echo quick-out')
    launch(h, 'slow', 'sleep', '0.6')
    launch(h, 'bad', 'sh', '-c', 'echo oops >&2; exit 3')
    const r = actors(h, ['wait', '--json'])
    expect(r.code).toBe(1)
    expect(r.json.schema).toBe('actors-batch-v1')
    expect(runsOf(r).sort()).toEqual(['bad', 'quick', 'slow'])
    expect(r.json.counts).toEqual({done: 2, failed: 1})
    expect(r.json.members).toBe(3)
    expect(r.json.pending).toEqual([])
    expect(r.json.rows.find((row: any) => row.run === 'quick').output).toBe('quick-out\n')
    expect(r.json.rows.find((row: any) => row.run === 'bad')).toMatchObject({
      status: 'failed',
      exit_code: 3,
      depth: 0,
      parent: null,
    })
    // Ordered by terminal time.
    const ends = r.json.rows.map((row: any) => row.ended_at)
    expect([...ends].sort()).toEqual(ends)
    expect(r.json.window.from).toBe(ends[0])
    expect(r.json.hint).toContain('actors inspect')
    // Reported: the next wait has nothing and returns at once.
    const again = actors(h, ['wait', '--json'])
    expect(again.code).toBe(0)
    expect(again.json.rows).toEqual([])
    const plain = actors(h, ['run', '--wait', '--', 'sh', '-c', 'echo card'])
    expect(plain.code).toBe(0)
    expect(plain.stdout).toMatch(/^1 Run: 1 done/)
    expect(plain.stdout).toContain('more: actors inspect')
  })

  it('--any returns with the first terminal Run and lists the rest as pending; --timeout exits 124', async () => {
    const h = home()
    launch(h, 'long', 'sleep', '30')
    launch(h, 'short', 'sleep', '0.3')
    const any = actors(h, ['wait', '--any', '--json'])
    expect(any.code).toBe(0)
    expect(runsOf(any)).toEqual(['short'])
    expect(any.json.pending.map((p: any) => p.run)).toEqual(['long'])
    const started = Date.now()
    const timeout = actors(h, ['wait', '--timeout', '400ms', '--json'])
    expect(timeout.code).toBe(124)
    expect(Date.now() - started).toBeGreaterThanOrEqual(400)
    expect(timeout.json).toMatchObject({rows: [], timed_out: true, pending_count: 1})
    expect(timeout.stderr).toContain('timed out')
  })

  it("exits 4 when every id is unknown, and excludes silent and other owners' Runs", async () => {
    const h = home()
    const unknown = actors(h, ['wait', 'nope', '--json'])
    expect(unknown.code).toBe(4)
    expect(unknown.json.unknown).toEqual(['nope'])
    expect(actors(h, ['wait', '../../etc']).code).toBe(2)
    launch(h, 'mine', 'true')
    expect(actors(h, ['run', '--name', 'hush', '--silent', '--', 'true']).code).toBe(0)
    expect(actors(h, ['run', '--name', 'theirs', '--', 'true'], {env: {ACTORS_OWNER: 'other'}}).code).toBe(0)
    await waitForResult(join(h, 'runs', 'hush'))
    await waitForResult(join(h, 'runs', 'theirs'))
    const mixed = actors(h, ['wait', 'mine', 'nope', '--json'])
    expect(mixed.code).toBe(0)
    expect(runsOf(mixed)).toEqual(['mine'])
    expect(mixed.json.unknown).toEqual(['nope'])
    expect(runsOf(actors(h, ['wait', '--json']))).toEqual([])
    const theirs = actors(h, ['wait', '--json'], {env: {ACTORS_OWNER: 'other'}})
    expect(runsOf(theirs)).toEqual(['theirs'])
    expect(existsSync(join(h, 'delivery', 'other.json'))).toBe(true)
    expect(actors(h, ['wait'], {env: {ACTORS_OWNER: '../x'}}).code).toBe(2)
    // A Run no wait could ever collect is refused before it starts.
    const stray = actors(h, ['run', '--name', 'stray', '--wait', '--', 'true'], {env: {ACTORS_OWNER: '../x'}})
    expect(stray.code).toBe(2)
    expect(existsSync(join(h, 'runs', 'stray'))).toBe(false)
  })

  it("a row's output is the last 4000 characters of stdout, short or long, multi-byte or not", async () => {
    const h = home()
    const long = writeFinishedRun(h, 'long')
    writeFileSync(join(long, 'stdout.log'), 'a'.repeat(30_000) + 'b'.repeat(3990) + 'END\n')
    const accents = writeFinishedRun(h, 'accents')
    writeFileSync(join(accents, 'stdout.log'), 'x' + 'é'.repeat(7000))
    const small = writeFinishedRun(h, 'small')
    writeFileSync(join(small, 'stdout.log'), 'just this\n')
    const rows = Object.fromEntries(actors(h, ['wait', '--json']).json.rows.map((row: any) => [row.run, row.output]))
    expect(rows.long).toBe('a'.repeat(6) + 'b'.repeat(3990) + 'END\n')
    expect(rows.accents).toBe('é'.repeat(4000))
    expect(rows.small).toBe('just this\n')
  })

  it('wakes on a followup attention event, reports it once, and ignores notify', async () => {
    const h = home()
    const script =
      'actors emit progress --summary fyi --attention notify; sleep 0.3; actors emit question --summary "which branch?" --attention followup >/dev/null; sleep 30'
    launch(h, 'asker', 'sh', '-c', script)
    const woke = actors(h, ['wait', '--json'])
    expect(woke.code).toBe(0)
    expect(woke.json.rows).toEqual([])
    expect(woke.json.attention).toHaveLength(1)
    expect(woke.json.attention[0]).toMatchObject({
      run: 'asker',
      kind: 'question',
      summary: 'which branch?',
      attention: 'followup',
    })
    expect(woke.json.pending.map((p: any) => p.run)).toEqual(['asker'])
    const trace = readFileSync(join(h, 'runs', 'asker', 'trace.jsonl'), 'utf8')
    expect(trace).toContain('"attention":"followup"')
    const again = actors(h, ['wait', '--json', '--timeout', '300ms'])
    expect(again.code).toBe(124)
    expect(again.json.attention).toEqual([])
    // A Run writing its Trace by hand cannot blow up the batch: the summary is bounded like a row's.
    const huge = {
      id: randomUUID(),
      ts: new Date().toISOString(),
      kind: 'ask',
      summary: 'y'.repeat(300_000),
      attention: 'steer',
    }
    writeFileSync(join(h, 'runs', 'asker', 'trace.jsonl'), JSON.stringify(huge) + '\n', {flag: 'a'})
    const bounded = actors(h, ['wait', '--json', '--timeout', '1s'])
    expect(bounded.json.attention).toHaveLength(1)
    expect(bounded.json.attention[0].summary.length).toBeLessThanOrEqual(500)
  })

  it('reads a Trace for attention only when attention.flag says it asked, unless the Run predates the flag', async () => {
    const h = home()
    const dir = launch(h, 'chatty', 'sh', '-c', 'actors emit progress --summary fyi --attention notify; sleep 30')
    expect(readJson(join(dir, 'run.json')).attention_flag).toBe(true)
    await waitFor(
      () =>
        existsSync(join(dir, 'trace.jsonl')) &&
        readFileSync(join(dir, 'trace.jsonl'), 'utf8').includes('"attention":"notify"'),
    )
    // notify wakes nobody: no flag.
    expect(existsSync(join(dir, 'attention.flag'))).toBe(false)
    const ask = (kind: string) =>
      JSON.stringify({id: randomUUID(), ts: new Date().toISOString(), kind, summary: kind, attention: 'followup'}) +
      '\n'
    // A waking event written into the Trace by hand, without the flag `actors emit` raises, is not read.
    writeFileSync(join(dir, 'trace.jsonl'), ask('unflagged'), {flag: 'a'})
    expect(actors(h, ['wait', '--json', '--timeout', '200ms']).json.attention).toEqual([])
    writeFileSync(join(dir, 'attention.flag'), '')
    expect(actors(h, ['wait', '--json', '--timeout', '1s']).json.attention.map((a: any) => a.kind)).toEqual([
      'unflagged',
    ])
    actors(h, ['control', 'chatty', 'kill'])

    // A finished Run written by an earlier version (no attention_flag in run.json) has its Trace read as before.
    const old = writeFinishedRun(h, 'old-asker')
    writeFileSync(join(old, 'trace.jsonl'), ask('legacy'))
    const batch = actors(h, ['wait', '--json', '--timeout', '5s'])
    expect(batch.json.attention.map((a: any) => a.kind)).toContain('legacy')
    expect(runsOf(batch)).toContain('old-asker')
  })

  it('records at its end whether a Run asked for attention, and an event emitted after the end is refused', async () => {
    const h = home()
    const ended = async (dir: string) =>
      waitFor(() => (readJson(join(dir, 'run.json')).status === 'done' ? readJson(join(dir, 'run.json')) : undefined))
    expect(
      (
        await ended(
          launch(h, 'asked', 'sh', '-c', 'actors emit question --summary which --attention followup >/dev/null'),
        )
      ).attention_raised,
    ).toBe(true)
    const quiet = launch(h, 'quiet', 'sh', '-c', 'actors emit progress --summary fyi --attention notify >/dev/null')
    expect((await ended(quiet)).attention_raised).toBe(false)
    // A finished Run that asked for nothing is delivered without a look for its flag: one planted by hand beside a
    // waking event written by hand is not seen (actors emit is how a Run asks).
    const planted = launch(h, 'planted', 'true')
    expect((await ended(planted)).attention_raised).toBe(false)
    writeFileSync(
      join(planted, 'trace.jsonl'),
      JSON.stringify({id: randomUUID(), ts: new Date().toISOString(), kind: 'by-hand', attention: 'followup'}) + '\n',
      {flag: 'a'},
    )
    writeFileSync(join(planted, 'attention.flag'), '')
    // Asking after the end (emit --run) is refused (exit 3): a finished Run's Trace is closed, so its flag stays false.
    const late = actors(h, [
      'emit',
      'late.question',
      '--run',
      'quiet',
      '--summary',
      'one more thing',
      '--attention',
      'followup',
    ])
    expect(late.code).toBe(3)
    expect(readJson(join(quiet, 'run.json')).attention_raised).toBe(false)
    const batch = actors(h, ['wait', '--json', '--timeout', '5s'])
    expect(runsOf(batch).sort()).toEqual(['asked', 'planted', 'quiet'])
    expect(batch.json.attention.map((a: any) => a.kind).sort()).toEqual(['question'])
  })

  it("a row's artifacts and end come from run.json, which mirrors result.json at the end; older Runs read result.json", async () => {
    const h = home()
    const files = ['a', 'b', 'c', 'd', 'e', 'f']
    const recipe = join(h, 'recipes', 'six.yaml')
    mkdirSync(join(h, 'recipes'), {recursive: true})
    writeFileSync(
      recipe,
      `description: six artifacts\nsequence:\n  - [sh, -c, "cd {state_dir} && touch ${files.join(' ')} && exit 3"]\nartifacts:\n${files.map((f) => `  ${f}: "{state_dir}/${f}"`).join('\n')}\n`,
    )
    const made = actors(h, ['run', '--json', '--name', 'six', recipe])
    expect(made.code, made.stderr).toBe(0)
    const result = await waitForResult(made.json.state_dir)
    expect(result.artifacts).toHaveLength(6)
    const meta = readJson(join(made.json.state_dir, 'run.json'))
    expect(meta).toMatchObject({reason: result.reason, artifacts_total: 6, exit_code: 3})
    expect(meta.artifacts_head).toEqual(result.artifacts.slice(0, 4))
    // result.json is not read for the row: with it gone, the row is the same.
    rmSync(join(made.json.state_dir, 'result.json'))
    const [row] = actors(h, ['wait', '--json']).json.rows
    expect(row).toMatchObject({
      run: 'six',
      status: 'failed',
      exit_code: 3,
      artifacts_total: 6,
      summary: 'failed, exit 3',
    })
    expect(row.artifacts).toEqual(result.artifacts.slice(0, 4))
    // A Run written before the mirror: its row reads result.json.
    const old = writeFinishedRun(h, 'old-artifacts')
    const oldResult = readJson(join(old, 'result.json'))
    writeJsonAtomic(join(old, 'result.json'), {
      ...oldResult,
      reason: 'timeout',
      artifacts: files.map((f) => ({name: f, path: join(old, f), bytes: 0, sha256: 'x'})),
    })
    // A mirror whose count is no count (edited by hand) is not used either.
    writeJsonAtomic(join(old, 'run.json'), {
      ...readJson(join(old, 'run.json')),
      artifacts_head: [],
      artifacts_total: -3,
    })
    const [oldRow] = actors(h, ['wait', '--json']).json.rows
    expect(oldRow).toMatchObject({run: 'old-artifacts', artifacts_total: 6})
    expect(oldRow.artifacts.map((a: any) => a.name)).toEqual(['a', 'b', 'c', 'd'])
    expect(oldRow.summary).toContain('timeout')
  })

  it('two concurrent waits of one owner split the work: none twice, none lost', async () => {
    const h = home()
    const names = ['r0', 'r1', 'r2', 'r3', 'r4', 'r5']
    names.forEach((name, i) => {
      launch(h, name, 'sleep', String(0.2 + i * 0.15))
    })
    const seen: string[] = []
    const loop = async () => {
      for (let i = 0; i < 20 && seen.length < names.length; i++) {
        const r = await actorsAsync(h, ['wait', '--any', '--json', '--timeout', '3s'])
        expect([0, 124]).toContain(r.code)
        seen.push(...runsOf(r))
      }
    }
    await Promise.all([loop(), loop()])
    expect([...seen].sort()).toEqual(names)
    expect(runsOf(actors(h, ['wait', '--json']))).toEqual([])
    // A Run named by a second wait while the first prints it: the second waits, then says it was reported.
    await waitForResult(launch(h, 'shared', 'false'))
    const first = actorsAsync(h, ['wait', 'shared', '--json'], {env: {ACTORS_TEST_WAIT_PAUSE_MS: '1500'}})
    await waitFor(() => readJson(join(h, 'delivery', 'default.json')).pending[0], 10_000, 'the first wait to claim')
    const second = actors(h, ['wait', 'shared', '--json'])
    expect(runsOf(await first)).toEqual(['shared'])
    expect(second.json.already_reported).toEqual(['shared'])
  })

  it('a wait killed between claiming and printing delivers the same batch next time', async () => {
    const h = home()
    await waitForResult(launch(h, 'precious', 'true'))
    // ACTORS_TEST_WAIT_PAUSE_MS (test-only) holds the claimed batch unprinted.
    const child = spawn(process.execPath, [BIN, 'wait', '--json'], {
      env: cliEnv(h, {ACTORS_TEST_WAIT_PAUSE_MS: '10000'}),
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let printed = ''
    child.stdout.on('data', (d) => (printed += d))
    // Listen at spawn: a 'close' that came before the listener would never be seen.
    const closed = new Promise((r) => child.once('close', r))
    const journal = join(h, 'delivery', 'default.json')
    const claimed = await waitFor(() => readJson(journal).pending[0], 10_000, 'a pending batch')
    child.kill('SIGKILL')
    await closed
    expect(printed).toBe('')
    const next = actors(h, ['wait', '--json'])
    expect(next.code).toBe(0)
    expect(next.json.batch_id).toBe(claimed.batch_id)
    expect(next.json.redelivered).toBe(true)
    expect(runsOf(next)).toEqual(['precious'])
    expect(readJson(journal).pending).toEqual([])
    expect(runsOf(actors(h, ['wait', '--json']))).toEqual([])
    // A damaged attention entry fails closed naming the journal: no half batch, no crash (a damaged pending batch
    // is set aside: wait-forged-pending.test.ts).
    writeFileSync(journal, JSON.stringify({...readJson(journal), pending: [], attention_reported: {precious: null}}))
    const broken = actors(h, ['wait', '--json', '--timeout', '1s'])
    expect(broken.code, broken.stderr).toBe(1)
    expect(broken.stderr).toContain(`${journal}: `)
    expect(Object.keys(broken.json)).toEqual(['error'])
  })

  it('a journal writer killed between dropping the old journal and renaming the new one loses nothing', async () => {
    const h = home()
    await waitForResult(launch(h, 'kept', 'true'))
    const child = spawn(process.execPath, [BIN, 'wait', '--json'], {
      env: cliEnv(h, {ACTORS_TEST_WAIT_PAUSE_MS: '10000'}),
      stdio: 'ignore',
    })
    const closed = new Promise((r) => child.once('close', r))
    const journal = join(h, 'delivery', 'default.json')
    const next = join(h, 'delivery', '.default.json.next')
    const claimed = await waitFor(() => readJson(journal).pending[0], 10_000, 'a pending batch')
    child.kill('SIGKILL')
    await closed
    // As a writer leaves it killed after unlinking the journal: only the whole next one is there.
    renameSync(journal, next)
    const again = actors(h, ['wait', '--json'])
    expect(again.json.batch_id).toBe(claimed.batch_id)
    expect(runsOf(again)).toEqual(['kept'])
    expect(existsSync(next)).toBe(false)
    expect(readJson(journal).pending).toEqual([])

    // A next one cut short with no journal beside it was never committed: read as no journal at all.
    await waitForResult(launch(h, 'later', 'true'))
    const text = readFileSync(journal, 'utf8')
    rmSync(journal)
    writeFileSync(next, text.slice(0, text.length - 5))
    const fresh = actors(h, ['wait', '--json'])
    expect(fresh.code, fresh.stderr).toBe(0)
    expect(runsOf(fresh)).toEqual(['later'])
    expect(readJson(journal).delivered).toHaveLength(1)
    // A directory where the journal belongs is moved aside, never read into: the journal starts again.
    rmSync(journal)
    mkdirSync(journal)
    const planted = actors(h, ['wait', '--json', '--timeout', '1s'])
    expect(planted.code, planted.stderr).toBe(0)
    expect(planted.stderr).toContain(`actors: ${journal} was a directory: moved aside to ${journal}.damaged-`)
    expect(existsSync(journal)).toBe(false)
    const aside = readdirSync(join(h, 'delivery')).filter((f) => f.startsWith('default.json.damaged-'))
    expect(aside).toHaveLength(1)
    expect(lstatSync(join(h, 'delivery', aside[0])).isDirectory()).toBe(true)
  })

  it('a FIFO or a link a Run put in place of the delivery journal is moved aside, never read or followed; wait goes on', async () => {
    const h = home()
    await waitForResult(launch(h, 'first', 'true'))
    expect(actors(h, ['wait', '--json']).code).toBe(0)
    const journal = join(h, 'delivery', 'default.json')
    const outside = join(h, 'outside.json')
    writeFileSync(outside, 'not yours\n')
    const asides = () => readdirSync(join(h, 'delivery')).filter((f) => f.startsWith('default.json.damaged-'))
    for (const [name, plant, what] of [
      ['fifo', `rm -f "${journal}"; mkfifo "${journal}"`, 'a FIFO'],
      ['link', `rm -f "${journal}"; ln -s "${outside}" "${journal}"`, 'a symbolic link'],
    ]) {
      // The Run itself plants it: the state root is its user's to write.
      await waitForResult(launch(h, name, 'sh', '-c', plant))
      const started = Date.now()
      const r = actors(h, ['wait', '--json', '--timeout', '10s'])
      expect(r.code, r.stderr).toBe(0)
      expect(Date.now() - started).toBeLessThan(8000)
      expect(runsOf(r)).toEqual([name])
      expect(r.stderr).toContain(`actors: ${journal} was ${what}: moved aside to ${journal}.damaged-`)
      expect(r.stderr.match(/moved aside/g)).toHaveLength(1)
      expect(lstatSync(journal).isFile()).toBe(true)
      // Said once: the next wait finds the journal it wrote.
      const quiet = actors(h, ['wait', '--json', '--timeout', '1s'])
      expect(quiet.code, quiet.stderr).toBe(0)
      expect(runsOf(quiet)).toEqual([])
      expect(quiet.stderr).not.toContain('moved aside')
    }
    const [fifo, link] = asides().sort((a, b) => a.localeCompare(b, 'en', {numeric: true}))
    expect(lstatSync(join(h, 'delivery', fifo)).isFIFO()).toBe(true)
    expect(lstatSync(join(h, 'delivery', link)).isSymbolicLink()).toBe(true)
    expect(readFileSync(outside, 'utf8')).toBe('not yours\n')
  })

  it('bounds batches: 300 finished Runs come as 256 members (64 rows + overflow) then 44', () => {
    const h = home()
    // The 300 finished Runs are written directly instead of launching 300 processes on a 2-core machine.
    const base = Date.parse('2026-01-01T00:00:00Z')
    for (let i = 0; i < 300; i++) {
      writeFinishedRun(h, `bulk-${String(i).padStart(3, '0')}`, {
        ended: new Date(base + (299 - i) * 1000).toISOString(),
        status: i % 50 === 0 ? 'failed' : 'done',
      })
    }
    const first = actors(h, ['wait', '--json'])
    expect(first.code).toBe(1)
    expect(first.json).toMatchObject({members: 256, overflow: 192, deferred: 44})
    expect(first.json.rows).toHaveLength(64)
    expect(first.json.overflow_runs).toHaveLength(192)
    // Oldest terminal first: bulk-299 ended first.
    expect(first.json.rows[0].run).toBe('bulk-299')
    expect(first.json.counts.done + first.json.counts.failed).toBe(256)
    const second = actors(h, ['wait', '--json'])
    expect(second.json).toMatchObject({members: 44, overflow: 0, deferred: 0})
    expect(second.json.rows).toHaveLength(44)
    const all = new Set([...runsOf(first), ...first.json.overflow_runs, ...runsOf(second)])
    expect(all.size).toBe(300)
    expect(actors(h, ['wait', '--json']).json.members).toBe(0)
    const card = actors(h, ['wait'])
    expect(card.stdout).toMatch(/^no finished Runs/)
  })

  it("inside a Run, wait collects that Run's descendants (a coordinator fanning out)", async () => {
    const h = home()
    const script =
      'actors run --name kid-a -- sleep 0.2 >/dev/null; actors run --name kid-b -- false >/dev/null; actors wait --json > "$ACTORS_STATE_DIR/batch.json"; echo "wait=$?"'
    const dir = launch(h, 'coord', 'sh', '-c', script)
    await waitForResult(dir)
    expect(readFileSync(join(dir, 'stdout.log'), 'utf8')).toContain('wait=1')
    const batch = readJson(join(dir, 'batch.json'))
    expect(runsOf({json: batch} as CliResult).sort()).toEqual(['kid-a', 'kid-b'])
    expect(batch.rows.every((row: any) => row.parent === 'coord' && row.depth === 1)).toBe(true)
    // The owner's own wait gets the coordinator; its children were already reported.
    expect(runsOf(actors(h, ['wait', '--json']))).toEqual(['coord'])
  })

  it('run --wait prints the batch of the Run it started and marks it reported', () => {
    const h = home()
    const r = actors(h, ['run', '--name', 'w', '--wait', '--json', '--', 'sh', '-c', 'echo done-out; exit 2'])
    expect(r.code).toBe(1)
    expect(r.json.launched).toMatchObject({run: 'w'})
    expect(runsOf(r)).toEqual(['w'])
    expect(r.json.rows[0]).toMatchObject({status: 'failed', exit_code: 2, output: 'done-out\n'})
    expect(runsOf(actors(h, ['wait', '--json']))).toEqual([])
  })
  it("a Run's own escape codes and line breaks in its summary never reach the plain card", async () => {
    const h = home()
    const dir = launch(
      h,
      'noisy',
      'sh',
      '-c',
      'actors emit review.done --summary "$(printf \'red\\033[31m alert\\nsecond line\')"',
    )
    await waitForResult(dir)
    const card = actors(h, ['wait', 'noisy'])
    expect(card.code).toBe(0)
    expect(card.stdout).toContain('red')
    expect(card.stdout).toContain('second line')
    expect(card.stdout).not.toMatch(/\u001B/)
  })

  it('a stopped (cancelled) Run is in the batch but never makes wait exit 1; a failed one does', async () => {
    const h = home()
    const stopped = async (name: string) => {
      const dir = launch(h, name, 'sleep', '30')
      await waitFor(() => readJson(join(dir, 'run.json')).child_pid, 15_000, `${name} running its command`)
      expect(actors(h, ['control', name, 'stop']).code).toBe(0)
      await waitForResult(dir)
    }
    await stopped('stopped')
    const alone = actors(h, ['wait', '--json'])
    expect([alone.code, alone.json.counts]).toEqual([0, {cancelled: 1}])
    // A follow of it ends the same way: chosen, not failed.
    expect(actors(h, ['logs', 'stopped', '--follow']).code).toBe(0)
    await stopped('again')
    await waitForResult(launch(h, 'broke', 'false'))
    const mixed = actors(h, ['wait', '--json'])
    expect(mixed.json.counts).toEqual({cancelled: 1, failed: 1})
    expect(mixed.code).toBe(1)
  })

  it('rows carry the generation (1 unless run.json says otherwise) and the usage the Run reported, or null', async () => {
    const h = home()
    await waitForResult(
      launch(h, 'spender', 'sh', '-c', 'actors emit usage --prompt-tokens 30 --completion-tokens 12 >/dev/null'),
    )
    await waitForResult(launch(h, 'quiet', 'true'))
    const later = launch(h, 'later', 'true')
    await waitForResult(later)
    // A Run of a later generation records it in run.json (what `send` and `rerun` will write).
    const meta = readJson(join(later, 'run.json'))
    writeJsonAtomic(join(later, 'run.json'), {...meta, generation: 3})
    const rows = actors(h, ['wait', '--json']).json.rows
    const byRun = Object.fromEntries(rows.map((row: any) => [row.run, row]))
    expect(byRun.spender).toMatchObject({generation: 1, usage: {tokens: 42, prompt_tokens: 30, completion_tokens: 12}})
    expect(byRun.quiet).toMatchObject({generation: 1, usage: null})
    expect(byRun.later.generation).toBe(3)
    // SPEC field order: run, run_instance_id, generation, status, ...
    expect(Object.keys(byRun.quiet).slice(0, 4)).toEqual(['run', 'run_instance_id', 'generation', 'status'])
  })

  it("the README's fanout shows, under the coordinator, the Runs its own wait collected; who gets which batch is unchanged", async () => {
    const h = home()
    const r = actors(h, ['run', 'fanout', 'recipe=demo', 'count=3', 'values=seconds=0.1', '--name', 'fan', '--wait'], {
      timeout: 120_000,
    })
    expect(r.code, r.stderr).toBe(0)
    // One member: the coordinator. Its children were reported to its own wait, not to this batch.
    expect(r.stdout).toMatch(/^1 Run: 1 done/)
    expect(r.stdout).toMatch(/^ {2}fan\s+done/m)
    expect(r.stdout).toContain('its own wait collected 3 Runs (reported to it):')
    for (const i of [1, 2, 3])
      expect(r.stdout).toMatch(new RegExp(`↳ fan-${i}\\s+done\\s+step 1: demo \\(run fan-${i}\\)`))
    const doc = readJson(join(h, 'runs', 'fan', 'collected.json'))
    expect(doc).toMatchObject({total: 3, counts: {done: 3}})
    // The JSON batch carries the same, bounded, on the coordinator's row (here through the owner's re-run of wait fan).
    const again = actors(h, ['run', 'fanout', 'recipe=hello', 'count=2', '--name', 'fan2', '--wait', '--json'], {
      timeout: 120_000,
    })
    expect(again.code, again.stderr).toBe(0)
    expect(runsOf(again)).toEqual(['fan2'])
    expect(again.json.rows[0]).toMatchObject({
      collected_total: 2,
      collected: [
        {run: 'fan2-1', status: 'done'},
        {run: 'fan2-2', status: 'done'},
      ],
    })
    expect(again.json.rows[0].collected[0].summary).toMatch(/hello/i)
    // Nothing else is left for the owner: the children went to the coordinator.
    expect(actors(h, ['wait', '--json']).json.members).toBe(0)
  })
})
