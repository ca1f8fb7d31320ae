/**
 * A paused parent's children read paused (issue: the surface tells the
 * truth). Under cgroup containment a child Run's cgroup sits below its
 * parent's, so the parent's freeze holds the child too; the listing says so
 * from the child's own cgroup (`frozen`), and says running again once thawed.
 */
import {describe, expect, it} from 'vitest'
import {discoverCgroupBases} from '../src/lib/kernel/containment/cgroup-fs.js'
import {actors, homesPerTest, waitFor} from './helpers.js'

const CGROUPS = discoverCgroupBases() !== null
const home = homesPerTest('actors-paused-parent-')

describe.skipIf(!CGROUPS)('children of a paused parent (cgroup containment)', () => {
  it('read paused (frozen: true) while the parent is paused, and running after resume', async () => {
    const h = home()
    const env = {ACTORS_CONTAINMENT: 'cgroup'}
    const launched = actors(
      h,
      ['run', '--name', 'par', '--', 'sh', '-c', 'actors run --name kid -- sleep 300; sleep 300'],
      {env},
    )
    expect(launched.code, launched.stderr).toBe(0)
    const row = (run: string) =>
      actors(h, ['inspect', '--json'], {env}).json.runs.find((r: {run: string}) => r.run === run)
    await waitFor(() => row('kid')?.status === 'running', 20_000, 'kid running')
    expect(actors(h, ['control', 'par', 'pause'], {env}).code).toBe(0)
    expect(row('par')).toMatchObject({status: 'paused'})
    // The parent's freeze reaches the child's cgroup below it; the kernel reports it there a moment later at most.
    await waitFor(() => row('kid')?.frozen, 10_000, 'kid frozen with its parent')
    expect(row('kid')).toMatchObject({status: 'paused', frozen: true})
    expect(actors(h, ['inspect'], {env}).stdout).toMatch(/\nkid\s+-\s+paused\s/)
    expect(
      actors(h, ['inspect', '--status', 'paused', '--json'], {env})
        .json.runs.map((r: {run: string}) => r.run)
        .sort(),
    ).toEqual(['kid', 'par'])
    expect(actors(h, ['control', 'par', 'resume'], {env}).code).toBe(0)
    const thawed = row('kid')
    expect(thawed.status).toBe('running')
    expect(thawed.frozen).toBeUndefined()
    actors(h, ['control', 'par', 'kill'], {env})
  })

  it("reads paused while the parent's pause holds the child's supervisor before it started the command, and starts it on resume", async () => {
    const h = home()
    const env = {ACTORS_CONTAINMENT: 'cgroup'}
    // The child's supervisor (in the parent's cgroup) waits 4 s before it makes its unit: the pause catches it there.
    const script = 'ACTORS_TEST_START_DELAY_MS=4000 actors run --name kid -- sleep 300; sleep 300'
    expect(actors(h, ['run', '--name', 'par', '--', 'sh', '-c', script], {env}).code).toBe(0)
    const row = (run: string) =>
      actors(h, ['inspect', '--json'], {env}).json.runs.find((r: {run: string}) => r.run === run)
    await waitFor(() => row('kid')?.status === 'running', 20_000, 'kid recorded running')
    expect(actors(h, ['control', 'par', 'pause'], {env}).code).toBe(0)
    const held = row('kid')
    expect(held).toMatchObject({status: 'paused', frozen: true, started_at: null})
    expect(actors(h, ['control', 'par', 'resume'], {env}).code).toBe(0)
    await waitFor(() => row('kid')?.started_at, 20_000, 'kid started after the resume')
    expect(row('kid')).toMatchObject({status: 'running'})
    actors(h, ['control', 'par', 'kill'], {env})
  })
})
