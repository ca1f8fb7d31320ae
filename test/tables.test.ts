/**
 * Human tables fit the screen and say what an empty filter means (SPEC
 * "Commands", Conventions); the Runs table shows exit code, CPU, memory and
 * the command; `inspect --tree` honours the listing filters.
 */
import {spawn} from 'node:child_process'
import {readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {fitColumns, screenWidth} from '../src/lib/base/platform/fit-width.js'
import {formatTable} from '../src/lib/base/platform/text.js'
import {filterForest} from '../src/lib/services/tree/filter-forest.js'
import type {TreeNode} from '../src/lib/kernel/history/forest.js'
import {fitRows, type RunRow} from '../src/lib/services/view-state/run-rows.js'
import {BIN, actors, cliEnv, homesPerTest} from './helpers.js'

const home = homesPerTest('actors-tables-')
const widest = (text: string) => Math.max(...text.split('\n').map((line) => line.length))

describe('fitting the width', () => {
  it('takes $COLUMNS, else the terminal; piped with no $COLUMNS, no width at all', () => {
    expect(screenWidth({COLUMNS: '120'}, {isTTY: true, columns: 90})).toBe(120)
    expect(screenWidth({COLUMNS: 'x'}, {isTTY: true, columns: 90})).toBe(90)
    expect(screenWidth({}, {isTTY: false})).toBeUndefined()
  })

  it('cuts free text first, then leaves whole columns out rightmost first, never a key column', () => {
    const headers = ['ID', 'NOTE', 'WHEN', 'SIZE']
    const roles = {key: ['ID'], free: ['NOTE']}
    // NOTE gives way down to its floor (its header, at least 4) before anything else.
    expect(fitColumns(headers, [20, 30, 8, 4], 50, roles)).toEqual({widths: [20, 12, 8, 4], dropped: []})
    expect(fitColumns(headers, [20, 30, 8, 4], 42, roles)).toEqual({widths: [20, 4, 8, 4], dropped: []})
    // Then SIZE, then WHEN, then NOTE leave; ID stays whole even wider than the screen.
    expect(fitColumns(headers, [20, 30, 8, 4], 36, roles)).toEqual({widths: [20, 4, 8, 0], dropped: ['SIZE']})
    expect(fitColumns(headers, [20, 30, 8, 4], 10, roles)).toEqual({
      widths: [20, 0, 0, 0],
      dropped: ['NOTE', 'WHEN', 'SIZE'],
    })
    expect(fitColumns(headers, [20, 30, 8, 4], undefined, roles).widths).toEqual([20, 30, 8, 4])
    const text = formatTable(headers, [['x'.repeat(20), 'y'.repeat(30), '12:00:00', '1M']], 36, roles)
    expect(text).toContain('x'.repeat(20))
    expect(text).toContain('y…')
    expect(text.split('\n').at(-1)).toBe('(left out to fit 36 columns: SIZE)')
  })

  it('`actors recipes` fits 80 columns, each Recipe name whole', () => {
    const r = actors(home(), ['recipes'], {env: {COLUMNS: '80'}})
    expect(r.code).toBe(0)
    expect(widest(r.stdout)).toBeLessThanOrEqual(80)
    expect(r.stdout).toContain('…')
    for (const line of r.stdout.split('\n').slice(1, -1)) expect(line).toMatch(/^[a-z0-9/-]+\s/)
  })
})

describe('whole ids and statuses', () => {
  it('a narrow screen cuts commands, then leaves columns out with a note; piped, nothing is cut', () => {
    const h = home()
    const ids = ['fanout-a571a1-coordinator-1', 'fanout-a571a1-coordinator-2', 'fanout-a571a1-coordinator-3']
    for (const id of ids)
      expect(actors(h, ['run', '--name', id, '--wait', '--', 'sh', '-c', `echo ${'z'.repeat(150)}`]).code).toBe(0)
    expect(actors(h, ['run', '--name', 'held', '--', 'sleep', '30']).code).toBe(0)
    for (const columns of ['100', '60', '40']) {
      const r = actors(h, ['inspect'], {env: {COLUMNS: columns}})
      expect(r.code, r.stderr).toBe(0)
      // Every id and every status is whole, whatever the width.
      for (const id of ids) expect(r.stdout).toMatch(new RegExp(`^${id}\\s.*\\bdone\\b`, 'm'))
      expect(r.stdout).toMatch(/^held\s.*\brunning\b/m)
      expect(r.stdout).not.toMatch(/fanout-a571a1…|runni…|do…/)
    }
    const narrow = actors(h, ['inspect'], {env: {COLUMNS: '60'}}).stdout
    expect(widest(narrow.trimEnd().split('\n').slice(0, -1).join('\n'))).toBeLessThanOrEqual(60)
    expect(narrow.trimEnd().split('\n').at(-1)).toMatch(/^\(left out to fit 60 columns: .*PARENT\)$/)
    // Piped with no $COLUMNS: the whole command, every column, no note; grep finds an id.
    const piped = actors(h, ['inspect'], {env: {COLUMNS: ''}}).stdout
    expect(piped).not.toContain('…')
    expect(piped).not.toContain('left out')
    expect(piped).toContain(`echo ${'z'.repeat(150)}`)
    expect(piped.split('\n').filter((l) => l.includes('fanout-a571a1-coordinator-2'))).toHaveLength(1)
  }, 60_000)

  it('`inspect RUN --generations` fits 100 columns with whole instance ids; `lock status` lines up', () => {
    const h = home()
    for (let i = 0; i < 3; i++) expect(actors(h, ['run', '--name', 'greet', '--wait', '--', 'true']).code).toBe(0)
    const r = actors(h, ['inspect', 'greet', '--generations'], {env: {COLUMNS: '100'}})
    expect(r.code, r.stderr).toBe(0)
    expect(widest(r.stdout)).toBeLessThanOrEqual(100)
    const instances = actors(h, ['inspect', 'greet', '--generations', '--json']).json.generations.map(
      (g: {run_instance_id: string}) => g.run_instance_id,
    )
    expect(instances).toHaveLength(3)
    for (const id of instances) expect(r.stdout).toContain(id)
    expect(r.stdout).toMatch(/^3\s+\S+\s+done\s+\S+\s+\S+\s+0\s+current$/m)

    expect(actors(h, ['lock', 'acquire', 'repository-of-the-team', '--holder', 'me', '--lease', '10m']).code).toBe(0)
    expect(actors(h, ['lock', 'acquire', 'db', '--holder', 'someone-else', '--lease', '10m']).code).toBe(0)
    const lines = actors(h, ['lock', 'status']).stdout.trimEnd().split('\n')
    expect(lines[0]).toMatch(/^LOCK\s+HELD\s+HOLDERS\s+QUEUE$/)
    // Each column starts at the same place on every line.
    const at = (line: string, cell: string) => line.indexOf(cell)
    expect(lines.map((l) => l.search(/\d+\/\d+|HELD/))).toEqual([
      at(lines[0]!, 'HELD'),
      at(lines[0]!, 'HELD'),
      at(lines[0]!, 'HELD'),
    ])
  }, 60_000)
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

  it('--watch honours the filters too (piped: each snapshot is the filtered forest)', async () => {
    const h = home()
    expect(actors(h, ['run', '--name', 'finished', '--wait', '--', 'true']).code).toBe(0)
    expect(actors(h, ['run', '--name', 'live', '--', 'sleep', '30']).code).toBe(0)
    const snapshot = (args: string[]) =>
      new Promise<string>((resolve) => {
        const child = spawn(process.execPath, [BIN, 'inspect', '--tree', '--watch', ...args], {env: cliEnv(h)})
        let out = ''
        child.stdout.on('data', (chunk) => {
          out += chunk
          if (out.endsWith('\n')) child.kill()
        })
        child.on('close', () => resolve(out))
      })
    const running = await snapshot(['--status', 'running'])
    expect(running).toMatch(/^live\s+running/m)
    expect(running).not.toContain('finished')
    const rooted = await snapshot(['--root', 'finished'])
    expect(rooted).toMatch(/^finished\s+done/m)
    expect(rooted).not.toContain('live')
  }, 60_000)

  it('a live tree stays on a short screen: whole finished trees leave first, oldest first', () => {
    const row = (run: string, status: string, prefix = ''): RunRow => ({
      key: run,
      prefix,
      run,
      recipe: null,
      status,
      started_at: null,
      duration_ms: 1,
      parent: null,
      usage: '',
    })
    const rows = [
      row('old', 'done'),
      row('old.1', 'done', '└─ '),
      row('older-live', 'running'),
      row('older-live.1', 'done', '└─ '),
      row('mid', 'failed'),
      row('new', 'running'),
      row('new.1', 'running', '├─ '),
      row('new.2', 'done', '└─ '),
    ]
    const fitted = fitRows(rows, 6, 'tree')
    expect(fitted.rows.map((r) => r.run)).toEqual(['older-live', 'older-live.1', 'mid', 'new', 'new.1', 'new.2'])
    expect(fitted.hidden).toBe(2)
    // Only finished trees leave: a tree with a live Run stays whole.
    expect(fitRows(rows, 5, 'tree').rows.map((r) => r.run)).toEqual([
      'older-live',
      'older-live.1',
      'new',
      'new.1',
      'new.2',
    ])
  })

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
