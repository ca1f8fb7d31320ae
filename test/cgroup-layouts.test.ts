/**
 * Both cgroup layouts (SPEC: Containment, usage and limits), whatever this
 * machine's own is: a directory laid out as a pure v2 mount, and one laid out
 * as a hybrid machine (a cgroup2 mount plus v1 memory, pids and cpu
 * hierarchies), handed to the containment layer as a mountinfo text. The
 * kernel's counters are files the test writes; what the unit reads back
 * (CPU, memory now and at its peak, which limit ended it) and the limits it
 * writes are the layout's own files, each checked by name.
 */
import {mkdirSync, readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {cgroupBasesFrom} from '../src/lib/kernel/containment/cgroup-fs.js'
import {createCgroupUnit, unitsDir} from '../src/lib/kernel/containment/cgroup-unit.js'
import {removeDir, tempDir} from './helpers.js'

let dirs: string[] = []
afterEach(() => {
  for (const dir of dirs) removeDir(dir)
  dirs = []
})

/** Write `files` (name → content) into `dir`, making it. */
function layFiles(dir: string, files: Record<string, string>): void {
  mkdirSync(dir, {recursive: true})
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text)
}

const read = (dir: string, name: string) => readFileSync(join(dir, name), 'utf8')
const HOME_KEY = '0123456789abcdef'
const LIMITS = {memory_bytes: 512 * 1024 * 1024, pids: 64, cpus: 1.5}
/** What the kernel keeps in a v2 unit's cgroup: the files kill, freeze and the counters live in. */
const V2_UNIT = {'cgroup.procs': '', 'cgroup.kill': '', 'cgroup.freeze': '0', 'cgroup.events': 'populated 0\nfrozen 0'}

describe('a pure cgroup v2 layout', () => {
  /** A v2 mount at <root>/mnt, this process in /user.slice/test, and unit `u1` already made there (as the kernel would, with its files). */
  function pureV2() {
    const root = tempDir('actors-cgv2-')
    dirs.push(root)
    const mount = join(root, 'mnt')
    const own = join(mount, 'user.slice', 'test')
    layFiles(own, {'cgroup.procs': `${process.pid}\n`, 'cgroup.controllers': 'cpuset cpu io memory pids'})
    const unit = join(unitsDir(own, HOME_KEY), 'u1')
    layFiles(unit, {
      ...V2_UNIT,
      'memory.max': 'max',
      'memory.swap.max': 'max',
      'pids.max': 'max',
      'cpu.max': 'max 100000',
      'cpu.stat': 'usage_usec 2500000\nuser_usec 2000000\nsystem_usec 500000',
      'memory.current': '1048576',
      'memory.peak': '8388608',
      'memory.events': 'low 0\nhigh 0\nmax 0\noom 0\noom_kill 0',
      'pids.events': 'max 0',
    })
    const mountinfo = `36 25 0:31 / ${mount} rw,nosuid,nodev,noexec,relatime shared:9 - cgroup2 cgroup2 rw,nsdelegate\n`
    return {mount, own, unit, mountinfo, ownCgroups: '0::/user.slice/test\n'}
  }

  it('is found from mountinfo with no v1 hierarchy, and a unit there sets its limits in memory.max, pids.max, cpu.max', () => {
    const {own, unit, mountinfo, ownCgroups} = pureV2()
    const bases = cgroupBasesFrom(mountinfo, ownCgroups, {})
    expect(bases).toEqual({unified: own, v1: {}})
    const made = createCgroupUnit(bases!, HOME_KEY, 'u1', LIMITS)!
    expect(made.record).toEqual({kind: 'cgroup', path: unit})
    expect(read(unit, 'memory.max')).toBe(String(LIMITS.memory_bytes))
    expect(read(unit, 'memory.swap.max')).toBe('0')
    expect(read(unit, 'pids.max')).toBe('64')
    expect(read(unit, 'cpu.max')).toBe('150000 100000')
    // The controllers are enabled on each level down to the state root's folder.
    expect(read(own, 'cgroup.subtree_control')).toBe('+memory +pids +cpu')
    expect(read(unitsDir(own, HOME_KEY), 'cgroup.subtree_control')).toBe('+memory +pids +cpu')
  })

  it('reads CPU from cpu.stat, memory from memory.current and memory.peak, and which limit ended it', () => {
    const {unit, mountinfo, ownCgroups} = pureV2()
    const made = createCgroupUnit(cgroupBasesFrom(mountinfo, ownCgroups, {})!, HOME_KEY, 'u1', {})!
    expect(made.usage()).toEqual({cpu_seconds: 2.5, memory_bytes: 1048576, peak_memory_bytes: 8388608})
    expect(made.limitHit()).toBeUndefined()
    writeFileSync(join(unit, 'pids.events'), 'max 3')
    expect(made.limitHit()).toBe('pids_limit')
    writeFileSync(join(unit, 'memory.events'), 'low 0\nhigh 0\nmax 4\noom 1\noom_kill 1')
    expect(made.limitHit()).toBe('memory_limit')
    // Its members are the live pids in cgroup.procs.
    writeFileSync(join(unit, 'cgroup.procs'), `${process.pid}\n`)
    expect(made.members()).toEqual([process.pid])
  })
})

describe('a hybrid layout (cgroup2 for kill and freeze; memory, pids and cpu in v1)', () => {
  function hybrid() {
    const root = tempDir('actors-cghybrid-')
    dirs.push(root)
    const mounts = {
      unified: join(root, 'unified'),
      memory: join(root, 'memory'),
      pids: join(root, 'pids'),
      cpu: join(root, 'cpu'),
    }
    const owns = {
      unified: join(mounts.unified, 'outer'),
      memory: join(mounts.memory, 'outer'),
      // A process at a v1 hierarchy's root (`pids:/`) has the mount itself as its base, as discovery joins it.
      pids: join(mounts.pids, '/'),
      cpu: join(mounts.cpu, '/'),
    }
    layFiles(owns.unified, {'cgroup.procs': `${process.pid}\n`, 'cgroup.controllers': ''})
    for (const base of [owns.memory, owns.pids, owns.cpu]) layFiles(base, {'cgroup.procs': `${process.pid}\n`})
    const unit = {
      unified: join(unitsDir(owns.unified, HOME_KEY), 'u1'),
      memory: join(unitsDir(owns.memory, HOME_KEY), 'u1'),
      pids: join(unitsDir(owns.pids, HOME_KEY), 'u1'),
      cpu: join(unitsDir(owns.cpu, HOME_KEY), 'u1'),
    }
    layFiles(unit.unified, {...V2_UNIT, 'cpu.stat': 'usage_usec 1250000'})
    layFiles(unit.memory, {
      'memory.limit_in_bytes': '9223372036854771712',
      'memory.memsw.limit_in_bytes': '9223372036854771712',
      'memory.usage_in_bytes': '2097152',
      'memory.max_usage_in_bytes': '4194304',
      'memory.oom_control': 'oom_kill_disable 0\nunder_oom 0\noom_kill 0',
    })
    layFiles(unit.pids, {'pids.max': 'max', 'pids.events': 'max 0'})
    layFiles(unit.cpu, {'cpu.cfs_period_us': '100000', 'cpu.cfs_quota_us': '-1'})
    const mountinfo = [
      `30 22 0:27 / ${mounts.unified} rw,relatime - cgroup2 cgroup2 rw`,
      `31 30 0:28 / ${mounts.cpu} rw,relatime - cgroup cgroup rw,cpu`,
      `34 30 0:31 / ${mounts.memory} rw,relatime - cgroup cgroup rw,memory`,
      `38 30 0:35 / ${mounts.pids} rw,relatime - cgroup cgroup rw,pids`,
    ].join('\n')
    return {owns, unit, mountinfo, ownCgroups: '8:pids:/\n4:memory:/outer\n1:cpu:/\n0::/outer\n'}
  }

  it('is found from mountinfo with its v1 hierarchies, and a unit sets its limits in the v1 files', () => {
    const {owns, unit, mountinfo, ownCgroups} = hybrid()
    const bases = cgroupBasesFrom(mountinfo, ownCgroups, {})
    expect(bases).toEqual({unified: owns.unified, v1: {memory: owns.memory, pids: owns.pids, cpu: owns.cpu}})
    const made = createCgroupUnit(bases!, HOME_KEY, 'u1', LIMITS)!
    expect(made.record).toEqual({
      kind: 'cgroup',
      path: unit.unified,
      v1: {memory: unit.memory, pids: unit.pids, cpu: unit.cpu},
    })
    expect(read(unit.memory, 'memory.limit_in_bytes')).toBe(String(LIMITS.memory_bytes))
    expect(read(unit.pids, 'pids.max')).toBe('64')
    expect(read(unit.cpu, 'cpu.cfs_quota_us')).toBe('150000')
  })

  it('reads CPU from the cgroup2 cpu.stat and memory from the v1 memory cgroup; limits from memory.oom_control and v1 pids.events', () => {
    const {unit, mountinfo, ownCgroups} = hybrid()
    const made = createCgroupUnit(cgroupBasesFrom(mountinfo, ownCgroups, {})!, HOME_KEY, 'u1', {pids: 10})!
    expect(made.usage()).toEqual({cpu_seconds: 1.25, memory_bytes: 2097152, peak_memory_bytes: 4194304})
    expect(made.limitHit()).toBeUndefined()
    writeFileSync(join(unit.pids, 'pids.events'), 'max 2')
    expect(made.limitHit()).toBe('pids_limit')
    writeFileSync(join(unit.memory, 'memory.oom_control'), 'oom_kill_disable 0\nunder_oom 0\noom_kill 1')
    expect(made.limitHit()).toBe('memory_limit')
  })
})

describe('no writable cgroup2 hierarchy', () => {
  it('gives no bases (the Run is tracked instead)', () => {
    expect(cgroupBasesFrom('31 30 0:28 / /nowhere rw - cgroup cgroup rw,cpu\n', '1:cpu:/\n0::/\n', {})).toBeNull()
  })
})
