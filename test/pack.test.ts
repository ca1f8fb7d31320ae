/**
 * What `npm pack` ships installs without asking npm to run anything (issue 37:
 * npm 11 warns about install scripts not covered by `allowScripts`, and the
 * tarball shipped `prepare` but not the `scripts/` it runs). So: no script that
 * npm runs at install, and every file the bin loads is in the pack list.
 *
 * The full check (installing the tarball into a temp prefix with
 * `npm install -g --prefix DIR actors-*.tgz`, then `DIR/bin/actors --version`)
 * takes 15 s and the registry; it printed no `install-scripts` warning with
 * npm 11.19 once `prepare` became `prepack`. This test keeps the two causes out.
 */
import {spawnSync} from 'node:child_process'
import {readdirSync, readFileSync} from 'node:fs'
import {join, relative} from 'node:path'
import {describe, expect, it} from 'vitest'
import {ROOT} from './helpers.js'

/** Scripts npm runs when a package is installed (from a tarball, a folder or git). */
const INSTALL_TIME = ['preinstall', 'install', 'postinstall', 'prepare', 'dependencies']

function filesUnder(dir: string): string[] {
  return readdirSync(dir, {withFileTypes: true, recursive: true})
    .filter((e) => e.isFile())
    .map((e) => relative(ROOT, join(e.parentPath, e.name)))
}

describe('npm pack', () => {
  it('ships no install-time script', () => {
    const scripts = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).scripts ?? {}
    expect(INSTALL_TIME.filter((name) => name in scripts)).toEqual([])
  })

  it('lists every file of bin/ and dist/ (what `actors` loads)', () => {
    // --ignore-scripts: list what is there; prepack would rebuild dist/ under the other tests' feet.
    const r = spawnSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {cwd: ROOT, encoding: 'utf8'})
    expect(r.status, r.stderr).toBe(0)
    const listed = new Set(JSON.parse(r.stdout)[0].files.map((f: {path: string}) => f.path))
    const needed = [...filesUnder(join(ROOT, 'bin')), ...filesUnder(join(ROOT, 'dist')), 'package.json']
    expect(needed.filter((file) => !file.endsWith('.cache') && !listed.has(file))).toEqual([])
    expect(listed.has('dist/cli.cjs')).toBe(true)
  }, 60_000)
})
