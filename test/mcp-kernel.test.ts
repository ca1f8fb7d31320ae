/**
 * The pieces of `actors mcp` that need no server: the policy's glob rules,
 * log pages on character boundaries, and the bounding of large documents.
 */
import {writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {isActorsError} from '../src/lib/base/platform/errors.js'
import {readLogPage} from '../src/lib/kernel/runs/logs.js'
import {boundBatch, boundForest, resultBytes, MAX_RESULT_BYTES} from '../src/lib/surface/mcp/bound.js'
import {enforceLaunchPolicy, globMatches, policyFromFlags} from '../src/lib/surface/mcp/policy.js'
import type {TreeNode} from '../src/lib/kernel/history/forest.js'
import type {BatchDocument, BatchRow} from '../src/lib/services/wait/batch.js'
import {removeDir, tempDir} from './helpers.js'

let dirs: string[] = []
afterEach(() => {
  for (const dir of dirs) removeDir(dir)
  dirs = []
})

describe('mcp policy', () => {
  it('matches Recipe names with *, ** and ?', () => {
    expect(globMatches('build/*', 'build/test')).toBe(true)
    expect(globMatches('build/*', 'build/a/b')).toBe(false)
    expect(globMatches('build/**', 'build/a/b')).toBe(true)
    expect(globMatches('hel?o', 'hello')).toBe(true)
    expect(globMatches('hello', 'hello2')).toBe(false)
    expect(globMatches('a.b', 'axb')).toBe(false)
  })

  it('refuses with the rule named (exit 5) and reads the owner from --owner, ACTORS_OWNER, else the client', () => {
    const policy = policyFromFlags({allow: 'build/*, hello'}, {})
    expect(policy).toEqual({allow: ['build/*', 'hello'], allowAdhoc: false, owner: 'mcp-client', ownerFromClient: true})
    expect(policyFromFlags({}, {ACTORS_OWNER: 'bot'}).owner).toBe('bot')
    expect(policyFromFlags({owner: 'me'}, {ACTORS_OWNER: 'bot'}).owner).toBe('me')
    expect(() => policyFromFlags({owner: '../x'}, {})).toThrow(/not a valid owner/)
    expect(() => enforceLaunchPolicy(policy, {recipe: 'build/test'})).not.toThrow()
    const refusal = (launch: Parameters<typeof enforceLaunchPolicy>[1]) => {
      try {
        enforceLaunchPolicy(policy, launch)
      } catch (error) {
        if (isActorsError(error)) return {message: error.message, exit: error.exitCode, fix: error.fix}
      }
      return undefined
    }
    expect(refusal({recipe: 'deploy'})).toMatchObject({
      message: expect.stringContaining('--allow build/*,hello'),
      exit: 5,
      fix: expect.any(String),
    })
    expect(refusal({command: true})).toMatchObject({message: expect.stringContaining('--allow-adhoc'), exit: 5})
    expect(refusal({recipe: './x.yaml'})).toMatchObject({message: expect.stringContaining('--allow-adhoc'), exit: 5})
    expect(() => enforceLaunchPolicy({...policy, allowAdhoc: true}, {command: true})).not.toThrow()
  })
})

describe('log pages', () => {
  it('end on character boundaries and concatenate to the exact bytes', () => {
    const dir = tempDir()
    dirs.push(dir)
    const file = join(dir, 'stdout.log')
    const text = 'aé😀\u0001"\n'.repeat(300)
    writeFileSync(file, text)
    for (const limit of [1, 2, 3, 5, 7, 64, 1000]) {
      const parts: string[] = []
      let offset = 0
      for (;;) {
        const page = readLogPage(file, offset, limit)
        expect(Buffer.byteLength(page.text)).toBe(page.next_offset - page.offset)
        expect(page.text).not.toContain('\uFFFD')
        parts.push(page.text)
        offset = page.next_offset
        if (page.eof) break
      }
      expect(parts.join(''), `limit ${limit}`).toBe(text)
    }
    // `fits` shrinks a page; an offset past the end is an empty page at eof.
    expect(readLogPage(file, 0, 65536, (t) => t.length < 100).text.length).toBeLessThan(100)
    expect(readLogPage(file, 10 ** 9, 100)).toMatchObject({text: '', eof: true})
  })
})

describe('bounded documents', () => {
  it('a forest keeps parents before children and the newest trees', () => {
    const node = (i: number, children: TreeNode[] = []): TreeNode => ({
      run: `r-${i}`,
      run_instance_id: `i-${i}`,
      recipe: null,
      status: 'done',
      depth: 0,
      created_at: '',
      duration_ms: 1,
      usage: null,
      state_dir: 'x'.repeat(1000),
      children,
    })
    const forest = {forest: Array.from({length: 200}, (_, i) => node(i, [node(1000 + i)])), damaged: []}
    const bounded = boundForest(forest, '')
    expect(resultBytes('', bounded)).toBeLessThanOrEqual(MAX_RESULT_BYTES)
    expect(bounded.forest.at(-1)!.run).toBe('r-199')
    expect(bounded.cut).toMatchObject({runs_total: 400})
  })

  it('a batch shortens outputs first, then moves rows to overflow', () => {
    const row = (i: number): BatchRow => ({
      run: `r-${i}`,
      run_instance_id: 'i',
      generation: 1,
      status: 'done',
      depth: 0,
      parent: null,
      summary: 's',
      output: 'o'.repeat(4000),
      artifacts: [],
      artifacts_total: 0,
      usage: null,
      collected: [],
      collected_total: 0,
      exit_code: 0,
      duration_ms: 1,
      budget_exceeded: false,
      ended_at: null,
      state_dir: 'd',
    })
    const batch = {
      rows: Array.from({length: 64}, (_, i) => row(i)),
      overflow: 0,
      overflow_runs: [] as string[],
    } as unknown as BatchDocument
    const shortened = boundBatch(batch, '')
    expect(shortened.rows).toHaveLength(64)
    expect(shortened.rows[0].output.length).toBeLessThan(4000)
    const fat = {...batch, rows: batch.rows.map((r) => ({...r, summary: 's'.repeat(2000)}))}
    const moved = boundBatch(fat, '')
    expect(moved.rows.length).toBeLessThan(64)
    expect(moved.overflow + moved.rows.length).toBe(64)
    expect(moved.overflow_runs).toContain('r-63')
    expect(resultBytes('', moved)).toBeLessThanOrEqual(MAX_RESULT_BYTES)
  })
})
