/**
 * Human tables fit the screen and say what an empty filter means (SPEC
 * "Commands", Conventions); the Runs table shows exit code, CPU, memory and
 * the command; `inspect --tree` honours the listing filters.
 */
import {readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {fittedWidths, screenWidth} from '../src/lib/platform/fit-width.js'
import {formatTable} from '../src/lib/platform/text.js'
import {filterForest} from '../src/lib/tree/filter-forest.js'
import type {TreeNode} from '../src/lib/history/forest.js'
import {actors, homesPerTest} from './helpers.js'

const home = homesPerTest('actors-tables-')
const widest = (text: string) => Math.max(...text.split('\n').map((line) => line.length))

describe('fitting the width', () => {
  it('takes $COLUMNS, else the terminal, else 80', () => {
    expect(screenWidth({COLUMNS: '120'}, {isTTY: true, columns: 90})).toBe(120)
    expect(screenWidth({COLUMNS: 'x'}, {isTTY: true, columns: 90})).toBe(90)
    expect(screenWidth({}, {isTTY: false})).toBe(80)
  })

  it('narrows the widest column first and cuts its cells with …', () => {
    expect(fittedWidths([10, 30, 5], [3, 3, 3], 40)).toEqual([10, 21, 5])
    // Equally wide: the rightmost gives way first, so a Run id in the first column stays whole.
    expect(fittedWidths([8, 6, 8], [3, 3, 3], 25)).toEqual([8, 6, 7])
    const text = formatTable(['A', 'LONG'], [['x', 'y'.repeat(50)]], 20)
    expect(widest(text)).toBeLessThanOrEqual(20)
    expect(text).toContain('y…')
  })

  it('`actors recipes` fits 80 columns', () => {
    const r = actors(home(), ['recipes'], {env: {COLUMNS: '80'}})
    expect(r.code).toBe(0)
    expect(widest(r.stdout)).toBeLessThanOrEqual(80)
    expect(r.stdout).toContain('…')
  })
})

describe('the Runs table', () => {
  it('shows exit code, CPU, memory and the command (cut to the width), and says when a filter matches nothing', () => {
    const h = home()
    expect(
      actors(h, ['run', '--name', 'long', '--wait', '--', 'sh', '-c', `echo ${'x'.repeat(100)}; exit 3`]).code,
    ).toBe(1)
    expect(actors(h, ['run', '--name', 'short', '--wait', '--', 'true']).code).toBe(0)
    // Usage as the supervisor records it (result.json, mirrored in run.json).
    for (const file of ['run.json', 'result.json']) {
      const path = join(h, 'runs', 'short', file)
      writeFileSync(
        path,
        JSON.stringify({
          ...JSON.parse(readFileSync(path, 'utf8')),
          resources: {cpu_seconds: 1.5, peak_memory_bytes: 12 * 1024 * 1024},
        }),
      )
    }
    const narrow = actors(h, ['inspect'], {env: {COLUMNS: '80'}})
    expect(narrow.stdout.split('\n')[0]).toMatch(
      /^RUN\s+RECIPE\s+STATUS\s+EXIT\s+STARTED\s+DURATION\s+CPU\s+MEM\s+COMMAND\s+PARENT$/,
    )
    expect(widest(narrow.stdout)).toBeLessThanOrEqual(80)
    expect(narrow.stdout).toMatch(/\nlong\s+-\s+failed\s+3\s.*sh -c .*…/)
    expect(narrow.stdout).toMatch(/\nshort\s+-\s+done\s+0\s+\S+\s+\S+\s+1\.5s\s+12M\s+true\s+-\n/)
    const wide = actors(h, ['inspect'], {env: {COLUMNS: '300'}})
    expect(wide.stdout).toContain(`echo ${'x'.repeat(100)}; exit 3`)
    expect(actors(h, ['inspect', '--json']).json.runs.find((r: {run: string}) => r.run === 'short').resources).toEqual({
      cpu_seconds: 1.5,
      peak_memory_bytes: 12 * 1024 * 1024,
    })

    const none = actors(h, ['inspect', '--status', 'running'])
    expect(none.code).toBe(0)
    expect(none.stderr).toBe('no Runs match --status running\n')
    expect(actors(h, ['inspect', '--tree', '--recipe', 'hello']).stderr).toBe('no Runs match --recipe hello\n')
  }, 60_000)
})

describe('inspect --tree', () => {
  it('honours --status, --limit and --root', () => {
    const h = home()
    expect(actors(h, ['run', '--name', 'finished', '--wait', '--', 'true']).code).toBe(0)
    expect(actors(h, ['run', '--name', 'live', '--', 'sleep', '30']).code).toBe(0)
    const running = actors(h, ['inspect', '--tree', '--status', 'running', '--json']).json
    expect(running.forest.map((n: TreeNode) => n.run)).toEqual(['live'])
    expect(
      actors(h, ['inspect', '--tree', '--root', 'finished', '--json']).json.forest.map((n: TreeNode) => n.run),
    ).toEqual(['finished'])
    const plain = actors(h, ['inspect', '--tree', '--status', 'done'])
    expect(plain.stdout).toMatch(/^finished\s+done/)
    expect(plain.stdout).not.toContain('live')
  }, 60_000)

  it('hangs a kept Run from its nearest kept ancestor', () => {
    const n = (run: string, children: TreeNode[] = []): TreeNode => ({
      run,
      run_instance_id: run,
      recipe: null,
      status: 'done',
      depth: 0,
      created_at: '',
      duration_ms: 1,
      usage: null,
      state_dir: `/s/${run}`,
      children,
    })
    const forest = {forest: [n('a', [n('b', [n('c'), n('d')])]), n('e')], damaged: []}
    const kept = filterForest(forest, new Set(['/s/a', '/s/c', '/s/e']))
    expect(kept.forest.map((t) => [t.run, t.children.map((c) => c.run)])).toEqual([
      ['a', ['c']],
      ['e', []],
    ])
  })
})
