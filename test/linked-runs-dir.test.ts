/**
 * runs/ itself replaced by a link to a dir outside the state root (a Run can
 * write the state root): every command that reads or writes under runs/
 * refuses it as run and wait do (exit 1, naming the link and the fix), and
 * nothing there is deleted or written (issue 35, red-team pass: prune deleted
 * a finished-looking "project" dir there and wrote runs/.cache into it;
 * inspect, inspect RUN and logs RUN read through it). The same for
 * index/queue: the kernel made owners' queue dirs and end markers in the
 * link's target.
 */
import {readdirSync, readFileSync, renameSync, rmSync, symlinkSync, mkdirSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {actors, homesPerTest, readJson, removeDir, tempDir, waitForResult} from './helpers.js'

const home = homesPerTest('actors-linked-runs-')

describe('a link in runs/ place', () => {
  it('prune, inspect, inspect RUN and logs RUN refuse it (exit 1) and change nothing in its target', () => {
    const h = home()
    const donor = actors(h, ['run', '--name', 'donor', '--wait', '--json', '--', 'true'])
    expect(donor.code, donor.stderr).toBe(0)
    const out = tempDir('actors-linked-runs-target-')
    try {
      // A finished-looking Run dir that is someone's project, with a file that matters.
      const meta = readJson(join(h, 'runs', 'donor', 'run.json'))
      mkdirSync(join(out, 'proj'))
      writeFileSync(join(out, 'proj', 'important.txt'), 'IMPORTANT\n')
      const fake = {...meta, run: 'proj', root: 'proj', state_dir: join(h, 'runs', 'proj')}
      writeFileSync(join(out, 'proj', 'run.json'), JSON.stringify({...fake, ended_at: '2020-01-01T00:00:00.000Z'}))
      renameSync(join(h, 'runs'), join(h, 'runs.old'))
      symlinkSync(out, join(h, 'runs'))
      for (const args of [['prune'], ['prune', 'proj'], ['inspect'], ['inspect', 'proj'], ['logs', 'proj']]) {
        const r = actors(h, args)
        expect(r.code, `${args.join(' ')}: ${r.stdout}${r.stderr}`).toBe(1)
        expect(r.stderr).toContain(`${join(h, 'runs')} is a symbolic link`)
        expect(r.stderr).toContain('fix: remove the link')
      }
      expect(readdirSync(out)).toEqual(['proj'])
      expect(readdirSync(join(out, 'proj')).sort()).toEqual(['important.txt', 'run.json'])
      expect(readFileSync(join(out, 'proj', 'important.txt'), 'utf8')).toBe('IMPORTANT\n')
    } finally {
      removeDir(out)
    }
  })

  it('index/queue as a link: Runs still end, wait refuses it, and nothing is written into its target', async () => {
    const h = home()
    expect(actors(h, ['run', '--name', 'a', '--wait', '--', 'true']).code).toBe(0)
    expect(actors(h, ['inspect']).code).toBe(0)
    const out = tempDir('actors-linked-queue-target-')
    try {
      writeFileSync(join(out, 'keep'), 'precious\n')
      rmSync(join(h, 'index', 'queue'), {recursive: true, force: true})
      symlinkSync(out, join(h, 'index', 'queue'))
      const b = actors(h, ['run', '--name', 'b', '--json', '--', 'true'])
      expect(b.code, b.stderr).toBe(0)
      expect(await waitForResult(b.json.state_dir, 10_000)).toMatchObject({status: 'done'})
      const c = actors(h, ['run', '--name', 'c', '--json', '--', 'true'], {env: {ACTORS_OWNER: 'o2'}})
      expect(c.code, c.stderr).toBe(0)
      await waitForResult(c.json.state_dir, 10_000)
      actors(h, ['inspect'])
      const wait = actors(h, ['wait', 'a', '--timeout', '2s'])
      expect(wait.code, wait.stdout + wait.stderr).toBe(1)
      expect(wait.stderr).toContain(`${join(h, 'index', 'queue')} is a symbolic link`)
      expect(readdirSync(out)).toEqual(['keep'])
    } finally {
      removeDir(out)
    }
  }, 30_000)
})
