/**
 * The CLI's Low findings about flags and the state root: each gets a clear
 * error naming the value or path, the documented exit code and a fix, quickly
 * (SPEC: Authority over files and Runs; exit codes in README.md).
 */
import {spawnSync} from 'node:child_process'
import {chmodSync, chownSync, mkdirSync, rmSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {actors, homesPerTest, removeDir, tempDir} from './helpers.js'

const home = homesPerTest('actors-state-root-')
const FRONTS = [
  ['fast', {}],
  ['oclif', {ACTORS_FAST: '0'}],
] as const
const asRoot = process.getuid?.() === 0

describe.each(FRONTS)('zero durations and an empty --home (%s front end)', (_front, env) => {
  it('run --timeout 0 is a usage error naming --timeout, and launches nothing', () => {
    const h = home()
    const r = actors(h, ['run', '--timeout', '0', '--', 'true'], {env})
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('--timeout: "0" is zero')
    expect(r.stderr).toContain('fix: ')
    expect(actors(h, ['inspect', '--json']).json.runs ?? []).toEqual([])
  })

  it('lock acquire --lease 0 and lock renew --lease 0s are usage errors naming --lease', () => {
    const h = home()
    for (const args of [
      ['lock', 'acquire', 'deploy', '--holder', 'ci', '--lease', '0'],
      ['lock', 'renew', 'deploy', '--holder', 'ci', '--lease', '0s'],
    ]) {
      const r = actors(h, args, {env})
      expect(r.code, args.join(' ')).toBe(2)
      expect(r.stderr).toMatch(/--lease: "0s?" is zero/)
      expect(r.stderr).toContain('fix: ')
    }
    // Nothing was held.
    expect(actors(h, ['lock', 'status', 'deploy', '--json']).stdout).not.toContain('"ci"')
  })

  it('--home "" is a usage error naming --home, never the default root', () => {
    const h = home()
    for (const args of [
      ['inspect', '--home', ''],
      ['run', '--home', '', '--', 'true'],
    ]) {
      const r = actors(h, args, {env})
      expect(r.code, args.join(' ')).toBe(2)
      expect(r.stderr).toContain('--home is empty')
      expect(r.stderr).toContain('fix: ')
    }
  })
})

describe('a state root that cannot be used', () => {
  it('--home /proc: a clear error within seconds (it spun forever)', () => {
    const started = Date.now()
    const r = actors(home(), ['run', '--home', '/proc', '--', 'true'], {timeout: 20_000})
    expect(Date.now() - started).toBeLessThan(10_000)
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('cannot use /proc/runs')
    expect(r.stderr).toContain('fix: ')
    expect(r.stderr).not.toContain('internal error')
  })

  it('index/ replaced by a file: exit 1 naming index/ (not runs/), with a fix', () => {
    const h = home()
    expect(actors(h, ['run', '--', 'true']).code).toBe(0)
    rmSync(join(h, 'index'), {recursive: true})
    writeFileSync(join(h, 'index'), 'not a directory\n')
    const r = actors(h, ['run', '--', 'true'])
    expect(r.code).toBe(1)
    expect(r.stderr).toContain(`cannot use ${join(h, 'index')} as the state root's run index: a file is in the way`)
    expect(r.stderr).not.toContain('internal error')
    expect(r.stderr).toContain('fix: move the file away')
  })

  it.each([
    ['the state root', ''],
    ['runs/', 'runs'],
  ])('%s writable by every user is refused (exit 1), naming it, and nothing is launched', (_what, sub) => {
    const h = home()
    mkdirSync(join(h, 'runs'), {recursive: true})
    chmodSync(join(h, sub), 0o777)
    const r = actors(h, ['run', '--', 'true'])
    expect(r.code).toBe(1)
    expect(r.stderr).toContain(`${join(h, sub)} is writable by every user (mode 777)`)
    expect(r.stderr).toContain(`fix: make it private (chmod 700 "${join(h, sub)}")`)
    expect(actors(h, ['inspect', '--json']).json.runs ?? []).toEqual([])
  })

  it.runIf(asRoot)('a state root made by another user is refused (exit 1), naming it', () => {
    const h = home()
    mkdirSync(join(h, 'runs'), {recursive: true, mode: 0o700})
    chownSync(h, 65534, 65534)
    const r = actors(h, ['run', '--', 'true'])
    expect(r.code).toBe(1)
    expect(r.stderr).toContain(`permission denied: ${h} belongs to another user (uid 65534`)
    expect(r.stderr).toContain('fix: ')
  })

  it.runIf(asRoot)('a read-only state root: exit 1 naming the root, with a fix (not "internal error: EROFS")', () => {
    const source = tempDir()
    const mount = tempDir()
    try {
      const h = join(source, 'h')
      expect(actors(h, ['run', '--', 'true']).code).toBe(0)
      expect(spawnSync('mount', ['--bind', source, mount]).status).toBe(0)
      expect(spawnSync('mount', ['-o', 'remount,bind,ro', mount]).status).toBe(0)
      const r = actors(join(mount, 'h'), ['run', '--', 'true'])
      expect(r.code).toBe(1)
      expect(r.stderr).toContain(`the state root's file system is read-only: cannot write ${join(mount, 'h')}\n`)
      expect(r.stderr).toContain('fix: remount it read-write')
      const lock = actors(join(mount, 'h'), ['lock', 'acquire', 'x'])
      expect(lock.code).toBe(1)
      expect(lock.stderr).toContain("the state root's file system is read-only")
      expect(lock.stderr).not.toContain('internal error')
    } finally {
      spawnSync('umount', [mount])
      removeDir(mount)
      removeDir(source)
    }
  })
})
