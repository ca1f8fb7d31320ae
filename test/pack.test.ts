/**
 * What `npm pack` ships works without a build at install: every file the bin
 * loads is in the pack list, and the one lifecycle script is `prepare`, which
 * a checkout needs (`npm ci` must leave a working bin/actors) and npm runs
 * only in a checkout or a git install, never for a tarball. npm 11 still
 * named it in its `install-scripts` notice when the tarball was installed, so
 * the packed manifest leaves it out (scripts/pack-manifest.mjs, run by
 * prepack and postpack).
 *
 * The full check (installing the tarball into a temp prefix with
 * `npm install -g --prefix DIR actors-*.tgz`, then `DIR/bin/actors --version`)
 * takes 15 s and the registry, so it is not part of the suite.
 */
import {spawnSync} from 'node:child_process'
import {copyFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync} from 'node:fs'
import {join, relative} from 'node:path'
import {describe, expect, it} from 'vitest'
import {removeDir, ROOT, tempDir} from './helpers.js'

/** Scripts npm runs when a package is installed from a tarball. */
const INSTALL_TIME = ['preinstall', 'install', 'postinstall', 'dependencies']

function filesUnder(dir: string): string[] {
  return readdirSync(dir, {withFileTypes: true, recursive: true})
    .filter((e) => e.isFile())
    .map((e) => relative(ROOT, join(e.parentPath, e.name)))
}

describe('npm pack', () => {
  it('runs no script at a tarball install; prepare builds a checkout', () => {
    const scripts = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).scripts ?? {}
    expect(INSTALL_TIME.filter((name) => name in scripts)).toEqual([])
    expect(scripts.prepare).toBe('node scripts/build.mjs')
  })

  it("packs a manifest without the checkout's lifecycle scripts, and leaves the checkout's package.json as it was", () => {
    const scripts = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).scripts
    expect(scripts.prepack).toMatch(/node scripts\/build\.mjs && node scripts\/pack-manifest\.mjs strip$/)
    expect(scripts.postpack).toBe('node scripts/pack-manifest.mjs restore')
    // The same dance on a small package of its own: packing this checkout would rebuild dist/ under other tests.
    const dir = tempDir('actors-pack-')
    mkdirSync(join(dir, 'scripts'))
    copyFileSync(join(ROOT, 'scripts', 'pack-manifest.mjs'), join(dir, 'scripts', 'pack-manifest.mjs'))
    const manifest = {
      name: 'pack-probe',
      version: '1.0.0',
      files: ['index.js'],
      scripts: {
        prepare: 'node -e 0',
        prepack: 'node scripts/pack-manifest.mjs strip',
        postpack: 'node scripts/pack-manifest.mjs restore',
        build: 'node -e 0',
      },
    }
    const text = `${JSON.stringify(manifest, null, 4)}\n`
    writeFileSync(join(dir, 'package.json'), text)
    writeFileSync(join(dir, 'index.js'), '')
    try {
      const r = spawnSync('npm', ['pack', '--json'], {cwd: dir, encoding: 'utf8'})
      expect(r.status, r.stderr).toBe(0)
      const packed = spawnSync(
        'tar',
        ['xzf', join(dir, JSON.parse(r.stdout)[0].filename), '-O', 'package/package.json'],
        {
          encoding: 'utf8',
        },
      )
      expect(JSON.parse(packed.stdout).scripts).toEqual({build: 'node -e 0'})
      expect(readFileSync(join(dir, 'package.json'), 'utf8')).toBe(text)
    } finally {
      removeDir(dir)
    }
  }, 60_000)

  it('lists every file of bin/ and dist/ (what `actors` loads)', () => {
    // --ignore-scripts: list what is there; prepare would rebuild dist/ under the other tests' feet.
    const r = spawnSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {cwd: ROOT, encoding: 'utf8'})
    expect(r.status, r.stderr).toBe(0)
    const listed = new Set(JSON.parse(r.stdout)[0].files.map((f: {path: string}) => f.path))
    const needed = [...filesUnder(join(ROOT, 'bin')), ...filesUnder(join(ROOT, 'dist')), 'package.json']
    expect(needed.filter((file) => !file.endsWith('.cache') && !listed.has(file))).toEqual([])
    expect(listed.has('dist/cli.cjs')).toBe(true)
  }, 60_000)
})
