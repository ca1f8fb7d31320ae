/**
 * The listing caches must never change what `inspect` shows: the rows of
 * src/lib/kernel/history/listing-cache.ts (filtered listings, the table) and the
 * printed text of src/lib/kernel/history/listing-text.ts (a plain `inspect
 * --json`). Every listing below is compared with one made with the cache
 * files removed, after the ways a Run's run.json can change under it.
 */
import {readFileSync, rmSync, statSync, truncateSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {actors, readJson, removeHome, tempDir, waitFor, waitForResult, writeFinishedRun} from './helpers.js'
import {LIVE_STATUSES, TERMINAL_STATUSES} from '../src/lib/base/records/run.js'

let home: string
beforeEach(() => {
  home = tempDir()
})
afterEach(() => removeHome(home))

const cacheFile = () => join(home, 'runs', '.cache', 'listing.json')
const textFile = () => join(home, 'runs', '.cache', 'listing-text')
/** The cache's rows by Run id (each row starts with its Run id). */
const cachedRows = (): Record<string, unknown[]> =>
  Object.fromEntries((readJson(cacheFile()).rows as unknown[][]).map((row) => [row[0], row]))
/**
 * The text cache read by its layout (src/lib/kernel/history/listing-text.ts):
 * the header, the Run dirs it lists, and each entry (Run id, its Run dir's
 * name, created_at, key, text), with where the sections lie in the file.
 */
function textCache() {
  const data = readFileSync(textFile())
  const newline = data.indexOf(10)
  const header = JSON.parse(data.toString('utf8', 0, newline))
  const count: number = header.count
  // A copy at offset 0 of its own buffer: the typed arrays need aligned elements.
  const index = new Uint8Array(data.subarray(newline + 1))
  const keys = new Float64Array(index.buffer, 0, count * 6)
  const fields = new Uint32Array(index.buffer, count * 48, count * 5)
  const at = {keys: newline + 1, fields: newline + 1 + count * 48, list: newline + 1 + count * 68, names: 0, body: 0}
  at.names = at.list + header.list
  at.body = at.names + header.names
  const dirs = header.list ? data.toString('utf8', at.list, at.names).split('/') : []
  const names = data.subarray(at.names, at.body)
  let textAt = at.body
  const entries = Array.from({length: count}, (_, p) => {
    const [length, dir, name, idLength, createdLength] = fields.subarray(p * 5, p * 5 + 5)
    const entry = {
      id: names.toString('latin1', name, name + idLength),
      dir: dirs[dir],
      created: names.toString('latin1', name + idLength, name + idLength + createdLength),
      key: [...keys.subarray(p * 6, p * 6 + 6)],
      text: data.toString('utf8', textAt, textAt + length),
      at: textAt,
    }
    textAt += length + 2
    return entry
  })
  return {data, header, dirs, entries, at}
}
/** The Run ids the text cache holds texts of, in its order. */
const textIds = () => textCache().entries.map((e) => e.id)

/** Every Run through the summary objects and the rows cache: a status filter that keeps every status. */
const ALL = ['--status', [...LIVE_STATUSES, ...TERMINAL_STATUSES].join(',')]
const rowsListing = () => actors(home, ['inspect', '--json', ...ALL])

/**
 * `inspect --json` (text cache) and the same through the rows cache, then
 * with no cache. All must agree on what is stable: a live Run's duration
 * ticks, and its resources (CPU, memory now, peak) are readings of the moment
 * (the kernel's accounting moves between two reads), so those are left out.
 */
function listing() {
  const cached = actors(home, ['inspect', '--json'])
  expect(cached.code).toBe(0)
  const rows = rowsListing()
  expect(rows.code).toBe(0)
  rmSync(cacheFile(), {force: true})
  rmSync(textFile(), {force: true})
  const fresh = actors(home, ['inspect', '--json'])
  const settled = (json: {runs: Array<{status: string; duration_ms?: number; resources?: unknown}>}) => ({
    ...json,
    runs: json.runs.map((r) =>
      ['running', 'paused', 'queued'].includes(r.status) ? {...r, duration_ms: undefined, resources: undefined} : r,
    ),
  })
  expect(settled(cached.json)).toEqual(settled(fresh.json))
  expect(settled(rows.json)).toEqual(settled(fresh.json))
  return fresh.json
}

/**
 * Wait for the supervisor to record the start and its command, so two listings
 * a moment apart see the same live Run, and a stop or kill cannot land while
 * the supervisor is still starting the command.
 */
async function started(stateDir: string) {
  await waitFor(
    () => {
      const meta = readJson(join(stateDir, 'run.json'))
      return meta.started_at && meta.child_pid
    },
    10_000,
    `${stateDir} to start`,
  )
}

async function finished(name: string, ...command: string[]) {
  const launched = actors(home, ['run', '--json', '--name', name, '--', ...command])
  expect(launched.code).toBe(0)
  const dir = launched.json.state_dir as string
  await waitForResult(dir)
  // The end's mirror into run.json comes just after result.json: a listing before it would key the run.json it replaces.
  await waitFor(() => readJson(join(dir, 'run.json')).ended_at, 10_000, `${dir}/run.json to say the end`)
  return dir
}

describe('the listing cache', () => {
  it('holds finished Runs only, and follows relaunches, damage and prunes', async () => {
    await finished('ok', 'true')
    await finished('bad', 'false')
    const live = actors(home, ['run', '--json', '--name', 'live', '--', 'sleep', '30']).json
    await started(live.state_dir)
    listing()
    rowsListing()
    actors(home, ['inspect', '--json'])
    expect(Object.keys(cachedRows()).sort()).toEqual(['bad', 'ok'])
    expect(textIds().sort()).toEqual(['bad', 'ok'])
    // Every Run dir is listed, the live one too: the next listing finds the same dirs and takes each entry's by index.
    expect(textCache().dirs).toEqual(['bad', 'live', 'ok'])
    expect(textCache().entries.every((e) => e.dir === e.id)).toBe(true)

    // A relaunch under the same name replaces run.json: the new generation shows, not the cached one.
    const relaunched = actors(home, ['run', '--json', '--name', 'ok', '--', 'sleep', '30']).json
    await started(relaunched.state_dir)
    let runs = listing().runs
    expect(runs.find((r: {run: string}) => r.run === 'ok')).toMatchObject({
      status: 'running',
      run_instance_id: relaunched.run_instance_id,
    })
    expect(actors(home, ['control', 'ok', 'kill']).code).toBe(0)
    expect(actors(home, ['control', 'live', 'stop']).code).toBe(0)
    await waitForResult(live.state_dir)
    runs = listing().runs
    expect(Object.fromEntries(runs.map((r: {run: string; status: string}) => [r.run, r.status]))).toEqual({
      ok: 'killed',
      bad: 'failed',
      live: 'cancelled',
    })

    // A run.json damaged after it was cached is reported as damaged, never served from either cache.
    actors(home, ['inspect', '--json'])
    rowsListing()
    const badMeta = join(home, 'runs', 'bad', 'run.json')
    writeFileSync(badMeta, readFileSync(badMeta, 'utf8').replace('"actors-run-v1"', '"something-else"'))
    for (const damaged of [actors(home, ['inspect', '--json']).json, rowsListing().json]) {
      expect(damaged.runs.map((r: {run: string}) => r.run).sort()).toEqual(['live', 'ok'])
      expect(damaged.damaged).toEqual([expect.objectContaining({state_dir: join(home, 'runs', 'bad')})])
    }

    // Pruned Runs leave the caches too.
    expect(actors(home, ['prune', 'ok', '--json']).code).toBe(0)
    rowsListing()
    actors(home, ['inspect', '--json'])
    expect(Object.keys(cachedRows()).sort()).toEqual(['live'])
    expect(textIds()).toEqual(['live'])
  })

  it('ignores a cache file that is damaged, foreign or lies about a Run, and rebuilds it', async () => {
    const dir = await finished('one', 'true')
    await finished('two', 'false')
    const expected = listing()
    const foreign = [
      '{not json',
      JSON.stringify({schema: 'other', rows: []}),
      '[]',
      JSON.stringify({schema: 'actors-listing-cache-v3', entries: {}}),
      JSON.stringify({schema: 'actors-listing-cache-v4', rows: {}}),
    ]
    for (const text of foreign) {
      writeFileSync(cacheFile(), text)
      expect(rowsListing().json).toEqual(expected)
      expect(readJson(cacheFile()).schema).toBe('actors-listing-cache-v5')
      expect(Object.keys(cachedRows()).sort()).toEqual(['one', 'two'])
    }
    // Rows that are damaged, claim a live status, or moved under another Run's id are misses: the state dir is read.
    rowsListing()
    const cache = readJson(cacheFile())
    const {one: row, two: other} = cachedRows()
    const status = row.indexOf('done')
    for (const lie of [
      [row.slice(0, -1), other],
      [row.map((v, i) => (i === status ? 'running' : v)), other],
      // Each Run's row under the other's id.
      [
        ['one', ...other.slice(1)],
        ['two', ...row.slice(1)],
      ],
      ['one', 7, null, other],
    ]) {
      writeFileSync(cacheFile(), JSON.stringify({...cache, rows: lie}))
      expect(rowsListing().json.runs).toEqual([
        expect.objectContaining({run: 'one', status: 'done', state_dir: dir}),
        expect.objectContaining({run: 'two', status: 'failed', state_dir: join(home, 'runs', 'two')}),
      ])
    }
  })

  it("sees an in-place edit that keeps run.json's size, whichever way the key was taken", async () => {
    const dir = await finished('kept', 'true')
    const meta = join(dir, 'run.json')
    // Keys taken through statSync (Node's fs binding is not used when it would warn) serve the binding's reader:
    // the second listing hits every row, so the cache file is not rewritten (same inode).
    const viaStatSync = actors(home, ['inspect', '--json'], {env: {NODE_PENDING_DEPRECATION: '1'}})
    expect(viaStatSync.stderr).toBe('')
    const inode = statSync(textFile()).ino
    expect(actors(home, ['inspect', '--json']).stdout).toBe(viaStatSync.stdout)
    expect(statSync(textFile()).ino).toBe(inode)
    // The same bytes count, written over the file: only its times (and ctime) tell the edit.
    const text = readFileSync(meta, 'utf8')
    expect(text).toContain('"notification": "normal"')
    writeFileSync(meta, text.replace('"notification": "normal"', '"notification": "silent"'))
    expect(statSync(meta).size).toBe(text.length)
    expect(listing().runs).toEqual([expect.objectContaining({run: 'kept', notification: 'silent'})])
  })

  it('prints a cached Run exactly as a freshly read one, field order included', async () => {
    await finished('first', 'true')
    await finished('second', 'sh', '-c', 'exit 3')
    rmSync(cacheFile(), {force: true})
    rmSync(textFile(), {force: true})
    const fresh = rowsListing()
    expect(cachedRows()).toHaveProperty('second')
    const cached = rowsListing()
    expect(cached.stdout).toBe(fresh.stdout)
    expect(fresh.json.runs.map((r: {status: string}) => r.status)).toEqual(['done', 'failed'])
    // The text cache: cold, then warm, prints what the object path prints.
    expect(actors(home, ['inspect', '--json']).stdout).toBe(fresh.stdout)
    expect(textIds()).toHaveLength(2)
    expect(actors(home, ['inspect', '--json']).stdout).toBe(fresh.stdout)
  })

  it('prints the text-cached document byte for byte as the object path, odd characters and long values included', async () => {
    const odd = 'é "quoted" \\ back\u0001\u001f\u007f tab\t nl\n \u2028\u2029 😀 </script> \ud800'
    for (const [name, value] of [
      ['plain', 'ascii'],
      ['odd', odd],
      ['long', odd + 'x'.repeat(20_000)],
    ] as const) {
      const meta = join(await finished(name, 'true'), 'run.json')
      // Hand-edited values (run.json is the truth): every string a summary carries from it.
      const data = readJson(meta)
      writeFileSync(
        meta,
        JSON.stringify(
          {...data, recipe: value, owner: value, executor: {kind: value, job_id: value, node: value}},
          null,
          2,
        ),
      )
    }
    const live = actors(home, ['run', '--json', '--name', 'live', '--', 'sleep', '30']).json
    await started(live.state_dir)
    actors(home, ['control', 'live', 'pause'])
    const objects = () => {
      rmSync(cacheFile(), {force: true})
      return rowsListing()
    }
    const cold = actors(home, ['inspect', '--json'])
    const warm = actors(home, ['inspect', '--json'])
    expect(textIds().sort()).toEqual(['long', 'odd', 'plain'])
    const reference = objects()
    expect(reference.json.runs.find((r: {run: string}) => r.run === 'odd')).toMatchObject({
      recipe: odd,
      owner: odd,
      job_id: odd,
      node: odd,
    })
    // The live Run's duration ticks (a paused one's too), and its memory now is a reading of the moment (the kernel's
    // accounting moves for a frozen process too): compare with both settled, then the finished Runs' bytes exactly.
    const settle = (stdout: string) =>
      stdout.replace(/"duration_ms": \d+/g, '"duration_ms": 0').replace(/"memory_bytes": \d+/g, '"memory_bytes": 0')
    expect(settle(cold.stdout)).toBe(settle(reference.stdout))
    expect(settle(warm.stdout)).toBe(settle(reference.stdout))
    expect(actors(home, ['control', 'live', 'kill']).code).toBe(0)
    await waitForResult(live.state_dir)
    const finishedAll = objects()
    actors(home, ['inspect', '--json'])
    expect(actors(home, ['inspect', '--json']).stdout).toBe(finishedAll.stdout)
    expect(textIds()).toHaveLength(4)
  })

  it('ignores a text cache that is truncated, damaged, foreign, moved or oversized, and rebuilds it', async () => {
    await finished('one', 'true')
    await finished('two', 'sh', '-c', 'exit 2')
    rmSync(textFile(), {force: true})
    const expected = rowsListing().stdout
    expect(actors(home, ['inspect', '--json']).stdout).toBe(expected)
    const {data: good, header, at, entries} = textCache()
    expect(entries.map((e) => e.id)).toEqual(['one', 'two'])
    const head = good.toString('utf8', 0, at.keys - 1)
    const rest = good.subarray(at.keys)
    const withHeader = (changes: object) =>
      Buffer.concat([Buffer.from(JSON.stringify({...header, ...changes}) + '\n'), rest])
    /** `good` with `bytes` written at `offset`. */
    const patched = (offset: number, bytes: Uint8Array) => {
      const copy = Buffer.from(good)
      copy.set(bytes, offset)
      return copy
    }
    const u32 = (value: number) => new Uint8Array(new Uint32Array([value]).buffer)
    const firstLength = entries[0].text.length
    const damages: Array<string | Buffer> = [
      good.subarray(0, good.length - 1),
      good.subarray(0, good.length - 40),
      Buffer.concat([good, Buffer.from('x')]),
      // The first separator's NUL, then its newline, made something else.
      patched(entries[0].at + firstLength, Buffer.from(' ')),
      patched(entries[0].at + firstLength + 1, Buffer.from(' ')),
      // A NUL moved into the first entry's text, lengths unchanged.
      patched(entries[0].at + 10, Buffer.from([0])),
      patched(entries[1].at + 10, Buffer.from([0])),
      // Control bytes a JSON text never holds raw (a file edited in place): ESC, carriage return, tab.
      patched(entries[0].at + 10, Buffer.from([0x1b])),
      patched(entries[1].at + 10, Buffer.from([0x0d])),
      patched(entries[1].at + 12, Buffer.from([0x09])),
      // The first entry's length lies (its field, then the header's total too).
      patched(at.fields, u32(firstLength + 2)),
      patched(at.fields, u32(firstLength - 2)),
      Buffer.concat([
        withHeader({body: header.body + 2}).subarray(0, -rest.length),
        patched(at.fields, u32(firstLength + 2)).subarray(at.keys),
      ]),
      // Both entries claim the first Run dir; the first entry claims the second's (whose run.json has another key).
      patched(at.fields + 5 * 4 + 4, u32(0)),
      patched(at.fields + 4, u32(1)),
      // A Run dir index out of range.
      patched(at.fields + 4, u32(7)),
      withHeader({count: header.count + 1}),
      withHeader({names: header.names - 1}),
      withHeader({list: header.list + 1}),
      withHeader({schema: 'actors-listing-text-v1'}),
      withHeader({endian: header.endian === 'LE' ? 'BE' : 'LE'}),
      // A state root copied elsewhere: its cached state dirs are another root's.
      withHeader({base: '/elsewhere/runs/'}),
      Buffer.concat([Buffer.from('{not json\n'), rest]),
      // The layout this one replaced: a header of entries, then the texts.
      JSON.stringify({schema: 'actors-listing-text-v1', base: header.base, entries: []}) + '\n',
      '',
      'no header at all',
    ]
    expect(head).toBe(JSON.stringify(header))
    for (const damage of damages) {
      writeFileSync(textFile(), damage)
      expect(actors(home, ['inspect', '--json']).stdout).toBe(expected)
      expect(textCache().header).toMatchObject({schema: header.schema, base: header.base})
      expect(textIds()).toEqual(['one', 'two'])
      expect(actors(home, ['inspect', '--json']).stdout).toBe(expected)
    }
    // Names that are not ASCII: read (and found damaged) once a fresh text must be placed among the hits, here
    // 'two' after its run.json was rewritten (same bytes, a new key); then every Run is read and the file rebuilt.
    writeFileSync(textFile(), patched(at.names, Buffer.from([0xc3])))
    const two = join(home, 'runs', 'two', 'run.json')
    writeFileSync(two, readFileSync(two))
    expect(actors(home, ['inspect', '--json']).stdout).toBe(expected)
    expect(textIds()).toEqual(['one', 'two'])
    // Over the size limit (sparse): not read, rebuilt.
    rmSync(textFile())
    writeFileSync(textFile(), good)
    truncateSync(textFile(), 65 * 1024 * 1024)
    expect(actors(home, ['inspect', '--json']).stdout).toBe(expected)
    expect(statSync(textFile()).size).toBe(good.length)
  })
  it('streams a listing longer than its buffer from the cache, merges in the Runs read fresh, and survives damage found mid-listing', () => {
    // 300 finished Runs written directly (no processes), created a second apart: their texts span several 64 KiB windows.
    const start = Date.parse('2026-01-01T00:00:00Z')
    const at = (i: number) => new Date(start + i * 1000).toISOString()
    for (let i = 0; i < 300; i++) writeFinishedRun(home, `r-${String(i).padStart(3, '0')}`, {ended: at(i)})
    const reference = () => {
      rmSync(cacheFile(), {force: true})
      return rowsListing().stdout
    }
    const expected = reference()
    expect(actors(home, ['inspect', '--json']).stdout).toBe(expected)
    expect(textCache().data.length).toBeGreaterThan(2 * 64 * 1024)
    // Warm, every entry a hit: the file is not rewritten.
    const inode = statSync(textFile()).ino
    expect(actors(home, ['inspect', '--json']).stdout).toBe(expected)
    expect(statSync(textFile()).ino).toBe(inode)
    // With process.stdout made before the listing prints, the pieces (one reused buffer) go through the stream.
    const preload = join(home, 'stdout-first.cjs')
    writeFileSync(preload, 'process.stdout\n')
    expect(actors(home, ['inspect', '--json'], {env: {NODE_OPTIONS: `--require ${preload}`}}).stdout).toBe(expected)

    // A NUL inside a text far into the body, then a separator there made a space: found after pieces were printed,
    // that text and every one after it are read from their Runs; the listing stays exact and the file is rewritten.
    const late = textCache().entries[250]
    for (const [offset, byte] of [
      [late.at + 20, 0],
      [late.at + late.text.length, 32],
    ]) {
      const damaged = Buffer.from(textCache().data)
      damaged[offset] = byte
      writeFileSync(textFile(), damaged)
      expect(actors(home, ['inspect', '--json']).stdout).toBe(expected)
      expect(textIds()).toHaveLength(300)
      expect(textCache().entries[250].text).toBe(late.text)
    }

    // Hand edits: a run.json rewritten in place (same size) in the middle; Run dirs added that sort first, among the
    // cached ones and last; one removed. The fresh texts go where they sort, between cached pieces.
    const middle = join(home, 'runs', 'r-150', 'run.json')
    const text = readFileSync(middle, 'utf8')
    writeFileSync(middle, text.replace('"notification": "normal"', '"notification": "silent"'))
    expect(readFileSync(middle, 'utf8')).toHaveLength(text.length)
    writeFinishedRun(home, 'a-first', {ended: at(-5)})
    writeFinishedRun(home, 'm-among', {ended: at(100)})
    writeFinishedRun(home, 'z-last', {ended: at(400)})
    rmSync(join(home, 'runs', 'r-200'), {recursive: true})
    const edited = reference()
    expect(edited).toContain('"notification": "silent"')
    expect(edited.indexOf('"m-among"')).toBeLessThan(edited.indexOf('"r-100"'))
    expect(actors(home, ['inspect', '--json']).stdout).toBe(edited)
    expect(textIds()).toHaveLength(302)
    expect(textCache().entries.every((e) => e.dir === e.id)).toBe(true)
    expect(actors(home, ['inspect', '--json']).stdout).toBe(edited)
  })
})
