/**
 * locks/ itself replaced by a link (a Run can write the state root): lock
 * commands refuse it, naming it, and write nothing through it (issue 35,
 * red-team pass: `lock acquire` made db.json and journal.jsonl in the
 * link's target).
 */
import {readdirSync, renameSync, symlinkSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {actors, homesPerTest, removeDir, tempDir} from './helpers.js'

const home = homesPerTest('actors-linked-locks-')

describe('a link in locks/ place', () => {
  it('lock acquire refuses it (exit 1) and writes nothing into its target', () => {
    const h = home()
    expect(actors(h, ['lock', 'acquire', 'a', '--holder', 'me', '--lease', '1m']).code).toBe(0)
    const target = tempDir('actors-linked-locks-target-')
    try {
      renameSync(join(h, 'locks'), join(h, 'locks.moved'))
      symlinkSync(target, join(h, 'locks'))
      const r = actors(h, ['lock', 'acquire', 'b', '--holder', 'me', '--lease', '1m'])
      expect(r.code).toBe(1)
      expect(r.stderr).toContain(`${join(h, 'locks')} is a symbolic link`)
      expect(readdirSync(target)).toEqual([])
    } finally {
      removeDir(target)
    }
  })
})
