/**
 * Listings never read through a link in runs/ (SPEC: Authority over files and
 * Runs): `inspect` in every form, `wait` and the run index's rebuild name a
 * linked state dir as damage or pass it over, and leave its target as it
 * was. Real Runs, real links, the real CLI.
 */
import {spawn} from 'node:child_process'
import {
  cpSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {
  actors,
  BIN,
  cliEnv,
  homesPerTest,
  indexEntries,
  processAlive,
  readJson,
  ROOT,
  waitFor,
  waitForResult,
} from './helpers.js'

const home = homesPerTest('actors-authority-listings-')

/**
 * Wait until the Run in `dir` is finished and its supervisor gone: after its
 * result the supervisor still takes the Run's lock (a link made in its state
 * dir) for its last steps, and must not find a link there in the middle.
 */
async function settled(dir: string): Promise<void> {
  await waitForResult(dir)
  const {pid} = readJson(join(dir, 'run.json'))
  await waitFor(() => !processAlive(pid), 10_000, `the supervisor of ${dir} to exit`)
}

/** A finished Run `id` of `h`, launched with `-- true`; returns its state dir. */
async function finishedRun(h: string, id: string): Promise<string> {
  const r = actors(h, ['run', '--json', '--name', id, '--', 'true'])
  expect(r.code, r.stderr).toBe(0)
  await settled(r.json.state_dir)
  return r.json.state_dir
}

/**
 * Replace the state dir of `id` by a link to its files outside runs/: a copy
 * (`move: false`) or the dir itself moved out (same inode: a listing cache
 * keyed on its run.json would still match). A precious file is planted there.
 */
function linkOut(h: string, id: string, move: boolean): string {
  const dir = join(h, 'runs', id)
  const target = join(h, `outside-${id}`)
  if (move) renameSync(dir, target)
  else {
    // Not a lock (a link made and removed while the kernel works on the Run): it may vanish mid-copy.
    cpSync(dir, target, {recursive: true, filter: (path) => !path.endsWith('.lock')})
    rmSync(dir, {recursive: true})
  }
  writeFileSync(join(target, 'precious.txt'), 'x\n')
  symlinkSync(target, dir)
  return target
}

/**
 * Every path under `dir` with its modification time and (files) content, to
 * compare before and after. Not the change time: a reported.json is one
 * inode hard-linked into each member of its batch, so pruning another member
 * changes its link count.
 */
function snapshot(dir: string): Record<string, string> {
  const found: Record<string, string> = {}
  const visit = (path: string) => {
    const stat = lstatSync(path, {bigint: true})
    found[path] = String(stat.mtimeNs)
    if (stat.isFile()) found[path] += ` ${readFileSync(path, 'base64')}`
    if (stat.isDirectory()) for (const name of readdirSync(path)) visit(join(path, name))
  }
  visit(dir)
  return found
}

/** The Run ids the run index holds entries for (live and queued markers). */
const indexedIds = (h: string) =>
  indexEntries(h).map((name) => name.slice(name.lastIndexOf('~') + 1, name.lastIndexOf('@')))

/** The first NDJSON snapshot of `inspect --watch --json` (then SIGTERM). */
async function firstWatchSnapshot(h: string, args: string[] = []): Promise<any> {
  const child = spawn(process.execPath, [BIN, 'inspect', '--watch', '--json', ...args], {
    cwd: ROOT,
    env: cliEnv(h),
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stdout = ''
  child.stdout.on('data', (d) => (stdout += d))
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve))
  await waitFor(() => stdout.includes('\n'), 10_000, 'the first snapshot')
  child.kill('SIGTERM')
  await exited
  return JSON.parse(stdout.slice(0, stdout.indexOf('\n')))
}

describe('listings never read through a linked state dir', () => {
  it('inspect names a link in runs/ as damage in every form, never lists its target, and changes nothing there', async () => {
    const h = home()
    for (const id of ['good', 'copied', 'moved']) await finishedRun(h, id)
    // Warm the listing caches: the moved dir's run.json keeps its cached key once linked.
    expect(actors(h, ['inspect', '--json']).json.runs).toHaveLength(3)
    expect(actors(h, ['inspect', '--status', 'done', '--json']).json.runs).toHaveLength(3)
    // All three reported, and their markers dropped by the next look: the run index (its stamp of runs/ written)
    // holds none of them, so --limit and --since find the links' ids in the launch log alone.
    expect(actors(h, ['wait', '--timeout', '0', '--json']).json.members).toBe(3)
    expect(actors(h, ['inspect', '--status', 'running', '--json']).code).toBe(0)
    expect(indexedIds(h)).toEqual([])
    const targets = [linkOut(h, 'copied', false), linkOut(h, 'moved', true)]
    writeFileSync(join(h, 'runs', 'stray'), '{}\n')
    // Two dirs being created keep the count of state dirs, so no index rebuild drops the links' ids from the launch
    // log: --limit and --since read them by id from there.
    for (const id of ['creating-1', 'creating-2']) mkdirSync(join(h, 'runs', id))
    const before = targets.map(snapshot)
    const links = ['copied', 'moved'].map((id) => join(h, 'runs', id))
    const linkDamage = links.map((dir) => ({
      state_dir: dir,
      error: expect.stringContaining(`${dir} is a symbolic link`),
    }))
    const strayDamage = {state_dir: join(h, 'runs', 'stray'), error: expect.stringContaining('is not a directory')}

    // Every listing shows the healthy Run alone, and names each link (and the stray file) as damage.
    for (const args of [
      [],
      ['--status', 'done'],
      ['--limit', '5'],
      ['--since', '1h'],
      ['--recipe', 'none', '--status', 'done,failed'],
    ]) {
      const listed = actors(h, ['inspect', '--json', ...args])
      expect(listed.code, `${args.join(' ')}: ${listed.stderr}`).toBe(0)
      const wanted = args.includes('none') ? [] : ['good']
      expect(listed.json.runs.map((r: {run: string}) => r.run)).toEqual(wanted)
      // --limit and --since read the ids the launch log names, which never held the stray file.
      const damage = args[0] === '--limit' || args[0] === '--since' ? linkDamage : [...linkDamage, strayDamage]
      expect(listed.json.damaged).toEqual(expect.arrayContaining(damage))
      expect(listed.json.damaged).toHaveLength(damage.length)
    }
    const table = actors(h, ['inspect'])
    expect(table.code).toBe(0)
    expect(table.stdout).toMatch(/^good\s/m)
    // Listed by their own names as damaged, never with what the link's target holds.
    expect(table.stdout).toMatch(/^copied\s+-\s+damaged\s+-\s+-\s/m)
    expect(table.stdout).toMatch(/^moved\s+-\s+damaged\s+-\s+-\s/m)
    expect(table.stdout.match(/\bdone\b/g)).toHaveLength(1)
    for (const dir of links) expect(table.stderr).toContain(`actors: skipped ${dir}: ${dir} is a symbolic link`)

    const tree = actors(h, ['inspect', '--tree', '--json'])
    expect(tree.code).toBe(0)
    expect(tree.json.forest.map((n: {run: string}) => n.run)).toEqual(['good'])
    expect(tree.json.damaged).toEqual(expect.arrayContaining([...linkDamage, strayDamage]))
    const treeText = actors(h, ['inspect', '--tree'])
    expect(treeText.stdout).not.toMatch(/copied|moved/)
    for (const dir of links) expect(treeText.stderr).toContain(`${dir} is a symbolic link`)

    for (const args of [[], ['--tree']]) {
      const watched = await firstWatchSnapshot(h, args)
      const shown = args.length
        ? watched.forest.map((n: {run: string}) => n.run)
        : watched.runs.map((r: {run: string}) => r.run)
      expect(shown).toEqual(['good'])
      expect(watched.damaged).toEqual(expect.arrayContaining(linkDamage))
    }
    // Named, each is refused (exit 1) as before.
    for (const id of ['copied', 'moved']) expect(actors(h, ['inspect', id]).code).toBe(1)

    // prune names the links (exit 1) and removes neither them nor anything behind them.
    const pruned = actors(h, ['prune', '--older-than', '0s', '--json'])
    expect(pruned.code).toBe(1)
    expect(pruned.json.pruned).toEqual(['good'])
    expect(pruned.json.skipped.map((s: {run: string}) => s.run).sort()).toEqual(['copied', 'moved', 'stray'])
    for (const dir of links) expect(lstatSync(dir).isSymbolicLink()).toBe(true)
    expect(targets.map(snapshot)).toEqual(before)
  })

  it('inspect --root passes over a child whose state dir became a link, and reads nothing through it', async () => {
    const h = home()
    expect(actors(h, ['run', '--name', 'P', '--', 'actors', 'run', '--wait', '--name', 'C', '--', 'true']).code).toBe(0)
    await settled(join(h, 'runs', 'P'))
    await settled(join(h, 'runs', 'C'))
    const subtree = () => actors(h, ['inspect', '--root', 'P', '--json']).json.runs.map((r: {run: string}) => r.run)
    expect(subtree()).toEqual(['P', 'C'])
    // Found through P's children journal, by id: its link is never read through.
    const target = linkOut(h, 'C', false)
    const before = snapshot(target)
    expect(subtree()).toEqual(['P'])
    expect(snapshot(target)).toEqual(before)
  })

  it("wait delivers a child whose parent's state dir became a link, without the parent or anything read through it", async () => {
    const h = home()
    // C ends before P, and neither is reported (P does not wait for it).
    expect(actors(h, ['run', '--name', 'P', '--', 'sh', '-c', 'actors run --name C -- true && sleep 0.3']).code).toBe(0)
    await settled(join(h, 'runs', 'P'))
    await settled(join(h, 'runs', 'C'))
    const target = linkOut(h, 'P', false)
    const before = snapshot(target)
    // The batch places C under its parent by reading P by id: the link is passed over, C stands alone.
    const batch = actors(h, ['wait', '--timeout', '0', '--json'])
    expect(batch.code, batch.stderr).toBe(0)
    expect(batch.json.rows.map((r: {run: string}) => r.run)).toEqual(['C'])
    expect(snapshot(target)).toEqual(before)
  })

  it('wait never counts or delivers a Run through a link, and an index rebuild never indexes one', async () => {
    const h = home()
    await finishedRun(h, 'kept')
    await finishedRun(h, 'linked')
    // Finished and unreported: its queued marker is in the run index when its dir becomes a link.
    expect(indexedIds(h)).toContain('linked')
    const target = linkOut(h, 'linked', false)
    const before = snapshot(target)

    const first = actors(h, ['wait', '--timeout', '0', '--json'])
    expect(first.code, first.stderr).toBe(0)
    expect(first.json.rows.map((m: {run: string}) => m.run)).toEqual(['kept'])
    expect(first.stdout).not.toContain('linked')
    const again = actors(h, ['wait', '--timeout', '0', '--json'])
    expect(again.json).toMatchObject({members: 0, pending_count: 0})
    expect(again.stdout).not.toContain('linked')
    const live = actors(h, ['inspect', '--status', 'running,done', '--json'])
    expect(live.json.runs.map((r: {run: string}) => r.run)).toEqual(['kept'])

    // The index rebuilt from runs/ (index/ removed): the new Run is entered, the link is not.
    await finishedRun(h, 'later')
    rmSync(join(h, 'index'), {recursive: true})
    expect(actors(h, ['inspect', '--status', 'running', '--json']).code).toBe(0)
    expect(indexedIds(h)).toContain('later')
    expect(indexedIds(h)).not.toContain('linked')
    const afterRebuild = actors(h, ['wait', '--timeout', '0', '--json'])
    expect(afterRebuild.json.rows.map((m: {run: string}) => m.run)).toEqual(['later'])
    expect(afterRebuild.stdout).not.toContain('linked')
    // Named, it is refused as damage.
    const named = actors(h, ['wait', 'linked', '--timeout', '0'])
    expect(named.code).toBe(1)
    expect(named.stderr).toContain(`${join(h, 'runs', 'linked')} is a symbolic link`)
    expect(snapshot(target)).toEqual(before)
  })
})
