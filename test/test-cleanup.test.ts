/**
 * The suite's own hygiene: removeHome (test/helpers.ts) leaves no cgroup of the root behind, even when every
 * process of it was SIGKILLed and its records removed first, so no kernel code got to remove a unit, and a parent
 * Run's cgroup holds its child's (`<run>/actors/<key>/<child>`). Empty cgroups left by earlier suites piled up by the hundred.
 */
import {existsSync, readdirSync, rmSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {discoverCgroupBases} from '../src/lib/kernel/containment/cgroup-fs.js'
import {unitsDir} from '../src/lib/kernel/containment/cgroup-unit.js'
import {homeKey} from '../src/lib/kernel/containment/index.js'
import {actors, processesOfHome, removeHome, tempDir} from './helpers.js'

const bases = discoverCgroupBases()

/** Every cgroup directory at or below `dir`. */
function cgroupsBelow(dir: string): string[] {
  if (!existsSync(dir)) return []
  const below = readdirSync(dir, {withFileTypes: true}).filter((e) => e.isDirectory())
  return [dir, ...below.flatMap((e) => cgroupsBelow(join(dir, e.name)))]
}

describe.skipIf(bases === null)('removeHome', () => {
  it("removes a killed parent's cgroup and its child's nested below it", async () => {
    const home = tempDir('actors-cleanup-')
    const env = {ACTORS_CONTAINMENT: 'cgroup'}
    const launched = actors(
      home,
      ['run', '--name', 'parent', '--', 'sh', '-c', 'actors run --name kid -- sleep 60; sleep 60'],
      {env},
    )
    expect(launched.code, launched.stderr).toBe(0)
    const units = unitsDir(bases!.unified, homeKey(home))
    // The child's cgroup is made below the parent's: wait for two levels of this root's cgroups.
    const deadline = Date.now() + 15_000
    while (cgroupsBelow(units).filter((dir) => /\/kid@[^/]+$/.test(dir)).length === 0) {
      expect(Date.now(), `no nested cgroup under ${units}: ${cgroupsBelow(units).join(', ')}`).toBeLessThan(deadline)
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    const nested = cgroupsBelow(units)
    expect(nested.some((dir) => dir.slice(units.length).split('/').length > 3)).toBe(true)
    // Killed outright, and the records gone with them: no supervisor removes a unit, and no `control kill` can.
    for (const pid of processesOfHome(home)) process.kill(pid, 'SIGKILL')
    rmSync(join(home, 'runs'), {recursive: true, force: true})
    removeHome(home)
    for (const base of [bases!.unified, ...Object.values(bases!.v1)])
      if (base) expect(cgroupsBelow(unitsDir(base, homeKey(home)))).toEqual([])
  })
})
