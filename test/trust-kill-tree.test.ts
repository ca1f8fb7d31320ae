/**
 * Nothing in a descendant's state dir, nor an `actors run` kept past its
 * launch, keeps a tree's end away (issue 35 "Trust", red-team pass 15). Real
 * Runs as the adversary: a parent that names its own plain Node process in
 * its child's `.lock` or `.children.lock` (N5-H1: kill, stop and close of the
 * parent waited 30 s per such child, the tree running meanwhile, and the
 * child read `running` after); a Run that names its own genuine `actors run
 * --wait`, or a process renamed as an ended supervisor, in its own
 * `.children.lock` (N5-M1: 30 s, then exit 5, the child `exited`); a Run that
 * puts a link at its own state dir naming a dir outside the state root with a
 * lock file in it (N5-L1: kill removed that file). Processes are found by a
 * unique token in their command line.
 */
import {existsSync, mkdirSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {ENDED_SUPERVISOR_TITLE} from '../src/lib/base/platform/kernel-process.js'
import {
  actors,
  BIN,
  homesPerTest,
  readJson,
  survivors,
  uniqueToken,
  waitFor,
  isLink,
  CONTAINMENT_MODES,
} from './helpers.js'

const home = homesPerTest('actors-trust-tree-')

/** A token nobody else uses: the command line of this test's processes carries it. */
const token = () => uniqueToken('tree')

/** Shell words that print the identity of process `pid` (a shell expression) as a lock names its holder. */
const identity = (pid: string) =>
  `"{\\"pid\\":${pid},\\"start\\":\\"$(cut -d" " -f22 /proc/${pid}/stat)\\",\\"boot\\":\\"$(cat /proc/sys/kernel/random/boot_id)\\"}"`

/**
 * Plant the identity of `pid` at `file` from inside a Run, once the kernel's own take of the moment lets go; then
 * `file.planted` says so (a link at `file` alone may be the kernel's own take).
 */
const plant = (pid: string, file: string) =>
  `until ln -s ${identity(pid)} "${file}" 2>/dev/null; do sleep 0.01; done; touch "${file}.planted"`

const planted = (file: string) => existsSync(`${file}.planted`)

/** A plain Node process (no script of the kernel), marked with `tag`. */
const plainNode = (tag: string) => `node -e "setInterval(()=>{},1e9)" ${tag}`

/**
 * Launch Run P, which starts a plain Node process, launches `children`
 * children C1..Cn (each `sleep 600`, marked `tag`c) and names that process in
 * each child's `lock`. Resolves once every lock is planted.
 */
async function parentKeepingChildLocks(
  h: string,
  tag: string,
  children: number,
  lock: string,
  env: NodeJS.ProcessEnv,
): Promise<void> {
  const launches = Array.from(
    {length: children},
    (_, i) =>
      `${BIN} run --name C${i + 1} -- sh -c ': ${tag}c; sleep 600' >/dev/null 2>&1; ${plant('$h', join(h, 'runs', `C${i + 1}`, lock))}`,
  ).join('; ')
  const script = `${plainNode(tag)} & h=$!; ${launches}; while :; do sleep 1; done`
  const r = actors(h, ['run', '--name', 'P', '--', 'sh', '-c', `: ${tag}p; ${script}`], {env})
  expect(r.code, r.stderr).toBe(0)
  await waitFor(
    () => Array.from({length: children}, (_, i) => planted(join(h, 'runs', `C${i + 1}`, lock))).every(Boolean),
    30_000,
    'every child lock planted',
  )
}

/** `args` run against P's tree: ended within `withinMs`, exit 1 naming the lock, nothing of the tree left, each child recorded `status`. */
async function endsTheTree(
  h: string,
  tag: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  children: number,
  lock: string,
  status: string,
  withinMs = 12_000,
): Promise<void> {
  const started = Date.now()
  const r = actors(h, args, {env, timeout: 120_000})
  const took = Date.now() - started
  expect(survivors(tag), r.stderr).toEqual([])
  expect(took, r.stderr).toBeLessThan(withinMs)
  expect(r.code, r.stderr).toBe(1)
  expect(r.stderr).toContain(join(h, 'runs', 'C1', lock))
  expect(r.stderr).toContain('which is no process of actors')
  for (let i = 1; i <= children; i++)
    await waitFor(
      () => readJson(join(h, 'runs', `C${i}`, 'run.json')).status === status,
      10_000,
      `C${i} recorded ${status}`,
    )
}

describe.each(CONTAINMENT_MODES)("a parent that keeps its child's lock ($mode)", ({env, skip}) => {
  it.skipIf(skip)(
    'control P kill ends P and C1 within seconds, not 30 s per child; C1 recorded killed',
    async () => {
      const h = home()
      const tag = token()
      await parentKeepingChildLocks(h, tag, 1, '.lock', env)
      await endsTheTree(h, tag, ['control', 'P', 'kill'], env, 1, '.lock', 'killed')
      expect(readJson(join(h, 'runs', 'P', 'run.json')).status).toBe('killed')
    },
    150_000,
  )

  it.skipIf(skip)(
    "control P stop past C1's .children.lock stops the whole tree, C1 recorded cancelled",
    async () => {
      const h = home()
      const tag = token()
      await parentKeepingChildLocks(h, tag, 1, '.children.lock', env)
      await endsTheTree(h, tag, ['control', 'P', 'stop'], env, 1, '.children.lock', 'cancelled')
    },
    150_000,
  )
})

describe("a parent that keeps its children's locks", () => {
  it('close P with three children whose .lock it keeps: bounded, every child recorded cancelled', async () => {
    const h = home()
    const tag = token()
    await parentKeepingChildLocks(h, tag, 3, '.lock', {})
    await endsTheTree(h, tag, ['close', 'P'], {}, 3, '.lock', 'cancelled')
  }, 200_000)
})

describe("a Run's own process in its own .children.lock, named as a launch", () => {
  it('a genuine `actors run --wait`, its launch long over, keeps kill away for a launch at most: sub recorded killed', async () => {
    const h = home()
    const tag = token()
    const children = join(h, 'runs', 'C', '.children.lock')
    // Its launch over (sub's command runs): a launch still going would take the lock named for itself, as stale.
    const launched = `until grep -qs '"status": "running"' "${join(h, 'runs', 'sub', 'run.json')}"; do sleep 0.1; done; sleep 0.5`
    const script = `${BIN} run --wait --name sub -- sh -c ': ${tag}s; sleep 600' >/dev/null 2>&1 & a=$!; ${launched}; ${plant('$a', children)}; while :; do sleep 1; done`
    expect(actors(h, ['run', '--name', 'C', '--', 'sh', '-c', `: ${tag}; ${script}`]).code).toBe(0)
    await waitFor(() => planted(children), 20_000, 'the lock planted')
    const started = Date.now()
    const r = actors(h, ['control', 'C', 'kill'], {timeout: 120_000})
    expect(Date.now() - started, r.stderr).toBeLessThan(12_000)
    expect(survivors(tag), r.stderr).toEqual([])
    expect(r.code, r.stderr).toBe(1)
    expect(r.stderr).toContain(`${children} is held by pid`)
    expect(readJson(join(h, 'runs', 'C', 'run.json')).status).toBe('killed')
    await waitFor(() => readJson(join(h, 'runs', 'sub', 'run.json')).status === 'killed', 10_000, 'sub recorded killed')
  }, 150_000)

  it('a process renamed as an ended supervisor, with `run` after its script, is no launch: 2 s, not 30', async () => {
    const h = home()
    const tag = token()
    const children = join(h, 'runs', 'C', '.children.lock')
    // `run` as its second word, as an `actors run` has it: only the script tells the two apart.
    const idle = join(h, 'idle.js')
    writeFileSync(idle, 'setInterval(() => {}, 1e9)\n')
    const forged = `(exec -a '${ENDED_SUPERVISOR_TITLE}' node ${idle} run ${tag}) & a=$!`
    const script = `${forged}; sleep 0.5; ${plant('$a', children)}; while :; do sleep 1; done`
    expect(actors(h, ['run', '--name', 'C', '--', 'bash', '-c', `: ${tag}; ${script}`]).code).toBe(0)
    await waitFor(() => planted(children), 20_000, 'the lock planted')
    const started = Date.now()
    const r = actors(h, ['control', 'C', 'kill'], {timeout: 120_000})
    expect(Date.now() - started, r.stderr).toBeLessThan(8_000)
    expect(survivors(tag), r.stderr).toEqual([])
    expect(r.code, r.stderr).toBe(1)
    expect(r.stderr).toContain('a process of the Run itself')
  }, 150_000)
})

describe('a link at the state dir of the Run being ended', () => {
  it('kill reads and removes nothing through it: the lock file in the dir it names stays', async () => {
    const h = home()
    const tag = token()
    const victim = join(h, 'victim')
    mkdirSync(victim)
    const link = join(h, 'runs', 'C')
    const script = `${plainNode(tag)} & a=$!; sleep 0.5; mv "$ACTORS_STATE_DIR" "${join(h, 'moved')}"; ln -s "${victim}" "${link}"; ${plant('$a', join(victim, '.trace.lock'))}; while :; do sleep 1; done`
    expect(actors(h, ['run', '--name', 'C', '--', 'sh', '-c', `: ${tag}; ${script}`]).code).toBe(0)
    await waitFor(() => isLink(link) && planted(join(victim, '.trace.lock')), 20_000, 'the link and the lock planted')
    const r = actors(h, ['control', 'C', 'kill'], {timeout: 120_000})
    expect(survivors(tag), r.stderr).toEqual([])
    expect(r.code, r.stderr).toBe(1)
    expect(isLink(join(victim, '.trace.lock')), r.stderr).toBe(true)
    expect(r.stderr).toContain('is a symbolic link')
  }, 60_000)
})
