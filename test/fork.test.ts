/**
 * Fork (SPEC: Trees, owners and limits): `actors run --fork[=N]` (and the MCP
 * `run` tool's `fork`) inside a Run starts a child whose inbox begins with
 * its parent's last N inbox messages, oldest first, before any `send` to it;
 * its run.json `seed` and its first Trace event, `runtime.seeded`, say where
 * they came from. Outside a Run, and with a bad N, it is exit 2. Real Runs:
 * the parent gets its messages through `actors send`.
 */
import {existsSync, readFileSync, readdirSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {appendInboxRecords} from '../src/lib/kernel/runs/inbox.js'
import {actors, homesPerTest, readJson, waitFor, waitForResult} from './helpers.js'
import {INIT, INITIALIZED} from './mcp-raw.js'

const home = homesPerTest('actors-fork-')
/** The parent's working dir, where the test and the Runs meet through files; removed after each test. */
const workDir = homesPerTest('actors-fork-work-')

/** A parent Run (inbox: file) in `work` that waits for `go`, then runs `script`; it ends when `done` appears. */
function startParent(h: string, work: string, script: string): any {
  const body = `until [ -e go ]; do sleep 0.05; done; ${script}; until [ -e done ]; do sleep 0.05; done`
  const r = actors(h, ['run', '--name', 'par', '--inbox', 'file', '--cwd', work, '--json', '--', 'sh', '-c', body])
  expect(r.code, r.stderr).toBe(0)
  return r.json
}

function send(h: string, run: string, message: string): string {
  const r = actors(h, ['send', run, message, '--json'])
  expect(r.code, r.stderr).toBe(0)
  return r.json.message_id
}

const inboxMessages = (file: string) => JSON.parse(readFileSync(file, 'utf8')).records.map((r: any) => r.message)
const traceEvents = (dir: string) =>
  readFileSync(join(dir, 'trace.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line))

describe('run --fork', () => {
  it("seeds the child's inbox with the parent's last N messages before a later send, and records where they came from", async () => {
    const h = home()
    const work = workDir()
    // Renamed into place once written: the test sends its next message only after the first read.
    const child =
      'actors inbox --json > s1; mv s1 seen1; until [ -e go2 ]; do sleep 0.05; done; actors inbox --json > seen2'
    const par = startParent(h, work, `actors run --fork=2 --name kid -- sh -c '${child}' >/dev/null`)
    // Copied as data: a message that looks like an inbox record, one with a line break.
    const messages = ['first', '{"seq":99,"via":"resume","generation":7,"message":"forged"}', 'two\nlines']
    const ids = messages.map((message) => send(h, 'par', message))
    writeFileSync(join(work, 'go'), '')
    const kid = join(h, 'runs', 'kid')
    await waitFor(() => existsSync(join(work, 'seen1')), 20_000, "the child's first inbox read")
    send(h, 'kid', 'later')
    writeFileSync(join(work, 'go2'), '')
    expect((await waitForResult(kid)).status).toBe('done')
    writeFileSync(join(work, 'done'), '')

    expect(inboxMessages(join(work, 'seen1'))).toEqual(messages.slice(1))
    expect(inboxMessages(join(work, 'seen2'))).toEqual(['later'])
    const meta = readJson(join(kid, 'run.json'))
    const seed = {
      from_run: 'par',
      from_run_instance_id: par.run_instance_id,
      from_generation: 1,
      messages: 2,
      until_message_id: ids[2],
    }
    expect(meta.seed).toEqual(seed)
    expect(meta.inbox).toBe('file')
    // The seed is first in the child's journal, then the send: in the child's own sequence.
    const journal = readFileSync(join(kid, 'inbox.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line))
    expect(journal.map((r) => [r.seq, r.message, r.generation])).toEqual([
      [1, messages[1], 1],
      [2, messages[2], 1],
      [3, 'later', 1],
    ])
    const events = traceEvents(kid)
    expect(events[0]).toMatchObject({kind: 'runtime.seeded', data: seed, run_instance_id: meta.run_instance_id})
    expect(events[0].attention).toBeUndefined()
    expect(events.filter((e) => e.kind === 'runtime.seeded')).toHaveLength(1)
  })

  it('writes the seed to the stdin of an inbox: stdin child first, in a next generation of a named child too', async () => {
    const h = home()
    const work = workDir()
    // kid's generation 1 ends first: the fork is its generation 2, whose own Trace starts with the seed.
    const child = `actors run --fork --inbox stdin --name kid -- sh -c 'read a; read b; echo "$a|$b"' >/dev/null`
    startParent(h, work, `actors run --wait --name kid -- true >/dev/null; ${child}`)
    for (const message of ['one', 'two']) send(h, 'par', message)
    writeFileSync(join(work, 'go'), '')
    const kid = join(h, 'runs', 'kid')
    await waitFor(() => readJson(join(kid, 'run.json')).generation === 2, 20_000, "kid's generation 2")
    expect((await waitForResult(kid)).status).toBe('done')
    writeFileSync(join(work, 'done'), '')
    expect(readFileSync(join(kid, 'stdout.log'), 'utf8')).toBe('one|two\n')
    expect(readJson(join(kid, 'run.json'))).toMatchObject({generation: 2, inbox: 'stdin', seed: {messages: 2}})
    expect(traceEvents(kid)[0]).toMatchObject({kind: 'runtime.seeded', data: {messages: 2}})
    expect(JSON.stringify(traceEvents(join(kid, 'generations', '1')))).not.toContain('runtime.seeded')
  })

  it('is exit 2 outside a Run, for an environment that only claims one, and for N that is not a positive whole number', () => {
    const h = home()
    const outside = actors(h, ['run', '--fork', '--', 'true'])
    expect(outside.code, outside.stderr).toBe(2)
    expect(outside.stderr).toMatch(/--fork works only inside a Run/)
    expect(outside.stderr).toMatch(/fix: /)
    // A live Run named by the lineage variables, but this process is not in its unit: its inbox is not given out.
    const victim = actors(h, ['run', '--name', 'victim', '--inbox', 'file', '--json', '--', 'sleep', '30'])
    expect(victim.code, victim.stderr).toBe(0)
    const env = {
      ACTORS_RUN: 'victim',
      ACTORS_RUN_INSTANCE: victim.json.run_instance_id,
      ACTORS_STATE_DIR: victim.json.state_dir,
    }
    const claimed = actors(h, ['run', '--fork', '--', 'true'], {env})
    expect(claimed.code, claimed.stderr).toBe(2)
    expect(claimed.stderr).toMatch(/found from its unit.*victim/)
    for (const [flag, shown] of [
      ['--fork=0', '--fork="0"'],
      ['--fork=x', '--fork="x"'],
      ['--fork=-1', '--fork="-1"'],
      ['--fork=1.5', '--fork="1.5"'],
    ]) {
      const r = actors(h, ['run', flag, '--', 'true'])
      expect(r.code, `${flag}: ${r.stderr}`).toBe(2)
      expect(r.stderr).toContain(`${shown} is not a positive whole number`)
    }
    const spaced = actors(h, ['run', '--fork', '3', '--', 'true'])
    expect(spaced.code, spaced.stderr).toBe(2)
    expect(spaced.stderr).toContain('--fork=3')
    // Nothing was launched by any of them.
    expect(readdirSync(join(h, 'runs')).filter((f) => !f.startsWith('.'))).toEqual(['victim'])
    expect(actors(h, ['control', 'victim', 'kill']).code).toBe(0)
  })

  it('seeds through the MCP run tool (fork: N inside a Run), and fork: true takes every message', async () => {
    const h = home()
    const work = workDir()
    const call = (id: number, name: string, fork: number | boolean) =>
      JSON.stringify({
        jsonrpc: '2.0',
        id,
        method: 'tools/call',
        params: {
          name: 'run',
          arguments: {command: ['sh', '-c', 'actors inbox --json > seen-$ACTORS_RUN'], name, fork},
        },
      })
    writeFileSync(
      join(work, 'session.jsonl'),
      [INIT, INITIALIZED, call(2, 'one', 1), call(3, 'all', true)].join('\n') + '\n',
    )
    const par = startParent(h, work, 'actors mcp --allow-adhoc --owner agent < session.jsonl > out.jsonl')
    const ids = ['a', 'b', 'c'].map((message) => send(h, 'par', message))
    writeFileSync(join(work, 'go'), '')
    for (const run of ['one', 'all']) await waitForResult(join(h, 'runs', run), 30_000)
    writeFileSync(join(work, 'done'), '')
    const replies = readFileSync(join(work, 'out.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line))
    for (const id of [2, 3])
      expect(replies.find((r) => r.id === id)?.result?.isError, JSON.stringify(replies)).toBeFalsy()
    expect(inboxMessages(join(work, 'seen-one'))).toEqual(['c'])
    expect(inboxMessages(join(work, 'seen-all'))).toEqual(['a', 'b', 'c'])
    for (const [run, messages] of [
      ['one', 1],
      ['all', 3],
    ] as const) {
      const seed = {from_run: 'par', from_run_instance_id: par.run_instance_id, from_generation: 1, messages}
      expect(readJson(join(h, 'runs', run, 'run.json')).seed).toEqual({...seed, until_message_id: ids[2]})
      expect(traceEvents(join(h, 'runs', run))[0]).toMatchObject({kind: 'runtime.seeded', data: seed})
    }
  })

  it('keeps a seed from a full inbox bounded: the newest 256 messages, or 512 KiB of text, in order', async () => {
    const h = home()
    const work = workDir()
    const fork = (name: string) => `actors run --fork --name ${name} -- true >/dev/null`
    startParent(h, work, `${fork('many')}; until [ -e go2 ]; do sleep 0.05; done; ${fork('large')}`)
    const parent = join(h, 'runs', 'par')
    const journal = (dir: string) =>
      readFileSync(join(dir, 'inbox.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line))
    const fill = (count: number, bytes: number) => {
      // Appended as `send` appends them (the journal compacts to its newest half at its bounds: runs/inbox.ts).
      for (let i = 0; i < count; i++)
        appendInboxRecords(parent, [{message: `${i}:`.padEnd(bytes, 'x'), generation: 1, via: 'inbox'}])
      return journal(parent)
    }
    // 300 short messages: the count bound cuts.
    let inParent = fill(300, 16)
    expect(inParent.length).toBe(300)
    for (const [run, trigger] of [
      ['many', 'go'],
      ['large', 'go2'],
    ]) {
      writeFileSync(join(work, trigger), '')
      await waitForResult(join(h, 'runs', run))
      const seeded = journal(join(h, 'runs', run))
      const seed = readJson(join(h, 'runs', run, 'run.json')).seed
      expect(seeded.map((r) => r.message)).toEqual(inParent.slice(-seeded.length).map((r) => r.message))
      expect(seed).toMatchObject({messages: seeded.length, until_message_id: inParent.at(-1).id})
      if (run === 'many') {
        expect(seeded.length).toBe(256)
        // 4 KiB messages: the journal holds about 1 MiB of them, the seed half of that.
        inParent = fill(300, 4096)
        expect(inParent.length).toBeGreaterThan(130)
      } else {
        const bytes = seeded.reduce((sum, r) => sum + Buffer.byteLength(r.message), 0)
        expect(bytes).toBeLessThanOrEqual(512 * 1024)
        expect(bytes).toBeGreaterThan(512 * 1024 - 4096)
      }
    }
    writeFileSync(join(work, 'done'), '')
  })
})
