/**
 * A Run's cgroup is a tree (SPEC: Containment; issue 35): as root a Run can
 * mkdir a cgroup inside its own and move a process there. What read only
 * its own cgroup.procs missed that process: a normal end left it running,
 * `wait` delivered an end the Run wrote itself while it ran, `control kill`
 * of the ended Run found nothing, and rmdir failed on the non-empty tree,
 * so prune and close left the cgroup behind. Root and cgroup containment
 * only (moving a process needs write access to its cgroup); the process has
 * no environment (`env -i`), so only its cgroup ties it to the Run.
 */
import {spawnSync} from 'node:child_process'
import {existsSync, readdirSync, rmdirSync} from 'node:fs'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {discoverCgroupBases} from '../src/lib/kernel/containment/cgroup-fs.js'
import {actors, cgroup2Root, homesPerTest, readJson, waitFor} from './helpers.js'

const SKIP = discoverCgroupBases() === null || process.getuid?.() !== 0
const env = {ACTORS_CONTAINMENT: 'cgroup'}
const ROOT = cgroup2Root() ?? ''

const home = homesPerTest('actors-subtree-')
const cleanups: Array<() => void> = []
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup()
})

/** The Run's own result.json claiming done, exit 0, written as the kernel would (a rename). */
const FORGED_RESULT =
  'printf \'{"status":"done","exit_code":0,"run_instance_id":"%s","artifacts":[]}\' "$ACTORS_RUN_INSTANCE" > "$ACTORS_STATE_DIR/r.x" && mv "$ACTORS_STATE_DIR/r.x" "$ACTORS_STATE_DIR/result.json"'

/**
 * Launch Run `v` whose command makes `sub` inside its own cgroup, moves an
 * `env -i sleep` there, then runs `then`. Returns the sleep's length (its
 * marker), v's cgroup, and v's state dir; cleans both up after the test.
 */
async function launchWithSubCgroup(h: string, then: string): Promise<{length: string; cgroup: string; dir: string}> {
  const length = `304.${process.pid}${Math.floor(Math.random() * 1e6)}`
  const own = `cg='${ROOT}'$(sed -n 's/^0:://p' /proc/self/cgroup)`
  const script = `${own}; mkdir "$cg/sub" || exit 9; env -i sleep ${length} & echo $! > "$cg/sub/cgroup.procs" || exit 8; touch '${h}/moved'; ${then}`
  const r = actors(h, ['run', '--name', 'v', '--json', '--', 'sh', '-c', script], {env})
  expect(r.code, r.stderr).toBe(0)
  const dir = r.json.state_dir
  const cgroup: string = await waitFor(() => readJson(join(dir, 'run.json')).containment?.path, 10_000, 'the cgroup')
  cleanups.push(() => {
    spawnSync('pkill', ['-KILL', '-f', '-x', `sleep ${length}`])
    spawnSync('sleep', ['0.1'])
    for (const path of [join(cgroup, 'sub'), cgroup])
      try {
        rmdirSync(path)
      } catch {}
  })
  await waitFor(() => existsSync(join(h, 'moved')), 10_000, 'the sleep moved into the sub-cgroup')
  return {length, cgroup, dir}
}

function sleepers(length: string): number[] {
  const out = spawnSync('pgrep', ['-f', '-x', `sleep ${length}`], {encoding: 'utf8'}).stdout
  return out.split('\n').filter(Boolean).map(Number)
}

describe.skipIf(SKIP)('a process in a cgroup a Run made inside its own', () => {
  it('is ended with the Run at its normal end, and the cgroup tree is removed', async () => {
    const h = home()
    const {length, cgroup} = await launchWithSubCgroup(h, 'exit 0')
    const w = actors(h, ['wait', 'v', '--timeout', '15s', '--json'], {env})
    expect(w.code, w.stdout + w.stderr).toBe(0)
    expect(sleepers(length)).toEqual([])
    await waitFor(() => !existsSync(cgroup), 5000, 'the cgroup tree removed')
  }, 40_000)

  it('holds back an end the Run wrote itself (its supervisor killed); kill ends it; prune leaves no cgroup', async () => {
    const h = home()
    const forge = `kill -9 $(cut -d' ' -f4 /proc/$PPID/stat); ${FORGED_RESULT} && touch '${h}/forged'`
    const {length, cgroup} = await launchWithSubCgroup(h, forge)
    await waitFor(() => existsSync(join(h, 'forged')), 10_000, 'the forgery')
    const early = actors(h, ['wait', 'v', '--timeout', '1s', '--json'], {env})
    expect(early.code, early.stdout + early.stderr).toBe(124)
    expect(early.json.members).toBe(0)
    expect(sleepers(length).length).toBe(1)
    const k = actors(h, ['control', 'v', 'kill', '--json'], {env})
    expect(k.code, k.stdout + k.stderr).toBe(0)
    await waitFor(() => sleepers(length).length === 0, 5000, 'the sleep killed')
    const p = actors(h, ['prune', '--json'], {env})
    expect(p.code, p.stdout + p.stderr).toBe(0)
    expect(existsSync(cgroup), `${cgroup}: ${existsSync(cgroup) ? readdirSync(cgroup).join(' ') : ''}`).toBe(false)
  }, 40_000)

  it('close of the live Run ends the process and leaves no cgroup', async () => {
    const h = home()
    const {length, cgroup} = await launchWithSubCgroup(h, 'exec sleep 300')
    const c = actors(h, ['close', 'v', '--json'], {env})
    expect(c.code, c.stdout + c.stderr).toBe(0)
    expect(sleepers(length)).toEqual([])
    await waitFor(() => !existsSync(cgroup), 5000, 'the cgroup tree removed')
  }, 40_000)
})
