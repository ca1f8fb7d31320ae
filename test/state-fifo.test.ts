/**
 * A FIFO a Run plants where the kernel writes a state file is damage, named,
 * never a hang: a blocking open for writing would wait for a reader forever,
 * so a Run could make `control kill` (which records the kill in the trace)
 * never return. Issue 35, red-team pass.
 */
import {spawnSync} from 'node:child_process'
import {lstatSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {actors, homesPerTest, readJson, waitFor, waitForResult} from './helpers.js'

const home = homesPerTest('actors-fifo-')

function plantFifo(path: string): void {
  // The supervisor may create the file between the rm and the mkfifo (it opens its logs as it starts): try again.
  const plant =
    'for i in 1 2 3 4 5 6 7 8 9 10; do rm -f "$0"; mkfifo "$0" 2>/dev/null && exit 0; sleep 0.05; done; exit 1'
  expect(spawnSync('sh', ['-c', plant, path]).status).toBe(0)
  expect(lstatSync(path).isFIFO()).toBe(true)
}

describe('a FIFO where a state file belongs', () => {
  it('control kill of a Run with a FIFO at its trace.jsonl kills it and returns at once', async () => {
    const h = home()
    expect(actors(h, ['run', '--name', 'F', '--', 'sleep', '60']).code).toBe(0)
    const dir = join(h, 'runs', 'F')
    await waitFor(() => readJson(join(dir, 'run.json')).containment, 10_000, 'the unit')
    plantFifo(join(dir, 'trace.jsonl'))
    const started = Date.now()
    // 20 s: a blocking open waits for a reader without end; the kill itself takes well under a second.
    const r = actors(h, ['control', 'F', 'kill'], {timeout: 20_000})
    expect(r.code, r.stderr).not.toBeNull()
    expect(Date.now() - started).toBeLessThan(15_000)
    expect((await waitForResult(dir)).status).toBe('killed')
  })

  it('a live Run with a FIFO at its result.json is still running in inspect (a FIFO is no end), and control kill ends it over it', async () => {
    const h = home()
    expect(actors(h, ['run', '--name', 'H', '--', 'sleep', '60']).code).toBe(0)
    const dir = join(h, 'runs', 'H')
    await waitFor(() => readJson(join(dir, 'run.json')).containment, 10_000, 'the unit')
    plantFifo(join(dir, 'result.json'))
    const table = actors(h, ['inspect'], {timeout: 20_000})
    expect(table.code, table.stderr).toBe(0)
    expect(table.stdout).toMatch(/^H\s+-\s+running\s/m)
    const pid = readJson(join(dir, 'run.json')).children_processes[0].pid
    const killed = actors(h, ['control', 'H', 'kill'], {timeout: 20_000})
    expect(killed.code, killed.stderr).toBe(0)
    await waitFor(() => spawnSync('kill', ['-0', String(pid)]).status !== 0, 10_000, 'the command ended')
    // The end is written over the FIFO (a rename replaces it), as a regular file.
    const result = await waitForResult(dir)
    expect(result.status).toBe('killed')
    expect(lstatSync(join(dir, 'result.json')).isFile()).toBe(true)
  })

  it('logs of a Run with a FIFO at its stdout.log says so (exit 1) instead of waiting for a writer', async () => {
    const h = home()
    expect(actors(h, ['run', '--name', 'L', '--', 'sleep', '60']).code).toBe(0)
    const dir = join(h, 'runs', 'L')
    await waitFor(() => readJson(join(dir, 'run.json')).containment, 10_000, 'the unit')
    plantFifo(join(dir, 'stdout.log'))
    for (const args of [
      ['logs', 'L'],
      ['logs', 'L', '--json'],
    ]) {
      const r = actors(h, args, {timeout: 20_000})
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(1)
      expect(r.stderr).toContain(`${join(dir, 'stdout.log')}: is not a regular file`)
    }
    actors(h, ['control', 'L', 'kill'], {timeout: 20_000})
  })

  it('emit --run into a FIFO trace.jsonl is refused, naming the file (exit 1)', () => {
    const h = home()
    expect(actors(h, ['run', '--name', 'E', '--', 'sleep', '30']).code).toBe(0)
    const trace = join(h, 'runs', 'E', 'trace.jsonl')
    plantFifo(trace)
    const r = actors(h, ['emit', 'note', '--run', 'E', '--summary', 'x'], {timeout: 20_000})
    expect(r.code).toBe(1)
    expect(r.stderr).toContain(`${trace}: is not a regular file`)
    actors(h, ['control', 'E', 'kill'], {timeout: 20_000})
  })
})
