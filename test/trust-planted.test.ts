/**
 * A pid and start time in a run.json prove that a process is the same one,
 * not whose it is (issue 35: a Run planted `runs/fake/run.json` naming an
 * unrelated process, read from /proc; a plain `inspect` killed it while
 * settling the "lost" Run, and `control fake stop` killed it too). A recorded
 * process is signalled only while it carries the Run's state dir in its
 * environment, or is a child of the Run's own live supervisor.
 */
import {spawn} from 'node:child_process'
import {mkdirSync, readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {actors, homesPerTest, processAlive, readJson, waitForResult} from './helpers.js'

const home = homesPerTest('actors-planted-')

/** An unrelated process (this test's own, by a unique sleep length), and its pid and start time as /proc shows them. */
function bystander(): {pid: number; start: string; boot: string} {
  const child = spawn('sleep', [`301.${process.pid}${Math.floor(Math.random() * 1e6)}`], {
    detached: true,
    stdio: 'ignore',
  })
  child.unref()
  const pid = child.pid!
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  const start = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]!
  return {pid, start, boot: readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim()}
}

describe.each(['tracked', 'cgroup'] as const)('a planted run.json (%s record) naming an unrelated process', (kind) => {
  it('inspect and control stop, pause and kill leave that process alone', async () => {
    const h = home()
    const real = actors(h, ['run', '--name', 'real', '--json', '--', 'true'])
    await waitForResult(real.json.state_dir)
    const victim = bystander()
    try {
      const meta = readJson(join(real.json.state_dir, 'run.json'))
      const instance = '11111111-2222-3333-4444-555555555555'
      const planted = {
        ...meta,
        run: 'fake',
        run_instance_id: instance,
        status: 'running',
        ended_at: undefined,
        exit_code: undefined,
        pid: 999_999,
        process_identity: {pid: 999_999, start: '1', boot: victim.boot},
        containment:
          kind === 'tracked'
            ? {kind: 'tracked'}
            : {kind: 'cgroup', path: `/sys/fs/cgroup/actors/0000000000000000/fake@${instance}`},
        children_processes: [{pid: victim.pid, pgid: victim.pid, identity: victim}],
      }
      mkdirSync(join(h, 'runs', 'fake'))
      writeFileSync(join(h, 'runs', 'fake', 'run.json'), JSON.stringify(planted))
      actors(h, ['inspect'])
      expect(processAlive(victim.pid)).toBe(true)
      for (const action of ['stop', 'pause', 'kill']) {
        actors(h, ['control', 'fake', action])
        expect(processAlive(victim.pid), action).toBe(true)
      }
    } finally {
      process.kill(victim.pid, 'SIGKILL')
    }
  }, 30_000)
})
