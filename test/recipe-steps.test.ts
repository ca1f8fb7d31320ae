/**
 * `repeat` and `use` steps (SPEC: Recipes): real Runs through bin/actors,
 * type checks and cycles refused before start, positions in the Trace.
 */
import {existsSync, readFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {actors, homeWithRecipes, removeHome, waitForResult} from './helpers.js'

const GREET = `args: ["who:string", "n:int=1"]
template: [sh, -c, 'echo "hi $0 $1"', "{who}", "{n}"]
`

let homes: string[] = []
afterEach(() => {
  for (const home of homes) removeHome(home)
  homes = []
})

function setup(files: Record<string, string>) {
  const made = homeWithRecipes({'greet.yaml': GREET, ...files})
  homes.push(made.home)
  return made
}

function steps(home: string, run: string): Array<Record<string, unknown>> {
  return readFileSync(join(home, 'runs', run, 'trace.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l))
    .filter((e) => e.kind === 'runtime.step')
    .map((e) => e.data)
}

describe('repeat and use steps', () => {
  it('runs every iteration with {iteration}, imports another Recipe with typed with: values, and records each position', async () => {
    const {home} = setup({
      'loop.yaml': `args: ["count:int=2"]
sequence:
  - echo start
  - repeat:
      times: 3
      continue_on_failure: true
      sequence:
        - [sh, -c, 'echo iter $0; test $0 != 2', "{iteration}"]
        - use: greet
          with: {who: "w{iteration}", n: "{count}"}
  - echo end
`,
    })
    expect(actors(home, ['run', 'loop', '--name', 'L', 'count=7']).code).toBe(0)
    const result = await waitForResult(join(home, 'runs', 'L'))
    expect(result.status).toBe('done')
    // Iteration 2 fails its first step; continue_on_failure goes on to 3 (its use step is skipped).
    expect(readFileSync(join(home, 'runs', 'L', 'stdout.log'), 'utf8')).toBe(
      'start\niter 1\nhi w1 7\niter 2\niter 3\nhi w3 7\nend\n',
    )
    const paths = steps(home, 'L').map((d) => d.path)
    expect(paths).toContain('sequence[1].repeat[2]')
    expect(paths).toContain('sequence[1].repeat[3].sequence[1].use')
    expect(paths).toContain('sequence[1].repeat[3].sequence[1].use.template')
    expect(steps(home, 'L').find((d) => d.path === 'sequence[1].repeat[2]' && d.continued)).toMatchObject({
      iteration: 2,
      exit_code: 1,
    })
    expect(steps(home, 'L').find((d) => d.path === 'sequence[1].repeat[1].sequence[1].use')).toMatchObject({
      recipe: 'greet',
    })
  })

  it('stops at the first failing iteration without continue_on_failure: the Run fails', async () => {
    const {home} = setup({
      'stop.yaml': `parallel:
  - repeat: {times: 4, template: [sh, -c, 'echo it $0; test $0 != 2', "{iteration}"]}
  - use: greet
    with: {who: par}
`,
    })
    expect(actors(home, ['run', 'stop', '--name', 'S']).code).toBe(0)
    const result = await waitForResult(join(home, 'runs', 'S'))
    expect(result.status).toBe('failed')
    expect(result.exit_code).toBe(1)
    const out = readFileSync(join(home, 'runs', 'S', 'stdout.log'), 'utf8')
    expect(out).toContain('it 2')
    expect(out).not.toContain('it 3')
    expect(out).toContain('hi par 1')
    expect(steps(home, 'S').map((d) => d.path)).toEqual(
      expect.arrayContaining(['parallel[0].repeat[1]', 'parallel[0].repeat[2]', 'parallel[1].use.template']),
    )
  })

  it('refuses a cycle of use before start (exit 2, naming the chain), in run and in recipes validate', () => {
    const {home, recipes} = setup({'a.yaml': 'sequence: [{use: b}]\n', 'b.yaml': 'parallel: [echo b, {use: a}]\n'})
    const run = actors(home, ['run', 'a', '--name', 'A'])
    expect(run.code).toBe(2)
    expect(run.stderr).toContain('cycle of use: a -> b -> a')
    expect(existsSync(join(home, 'runs', 'A'))).toBe(false)
    const validate = actors(home, ['recipes', 'validate', join(recipes, 'a.yaml'), '--json'])
    expect(validate.code).toBe(2)
    expect(JSON.stringify(validate.json)).toContain('cycle of use')
  })

  it('checks with: against the used Recipe like a launch, before start', () => {
    const {home, recipes} = setup({
      'badtype.yaml': 'sequence: [{use: greet, with: {who: x, n: abc}}]\n',
      'missing.yaml': 'sequence: [{use: greet, with: {n: 2}}]\n',
      'unknown.yaml': 'sequence: [{use: greet, with: {who: x, nn: 2}}]\n',
      'nosuch.yaml': 'sequence: [{use: nothere}]\n',
      'late.yaml': 'args: [word]\nsequence: [{use: greet, with: {who: x, n: "{word}"}}]\n',
      'outside.yaml': 'sequence: ["echo {iteration}"]\n',
      'times.yaml': 'sequence: [{repeat: {times: 0, template: echo}}]\n',
    })
    const validate = actors(home, ['recipes', 'validate', recipes, '--json'])
    expect(validate.code).toBe(2)
    const byFile = Object.fromEntries(validate.json.files.map((r: any) => [r.file.split('/').pop(), r]))
    expect(byFile['badtype.yaml'].error).toMatch(/"abc" is not an integer/)
    expect(byFile['missing.yaml'].error).toMatch(/does not give "who"/)
    expect(byFile['unknown.yaml'].error).toMatch(/"nn"/)
    expect(byFile['nosuch.yaml'].error).toMatch(/"nothere"/)
    expect(byFile['outside.yaml'].error).toMatch(/\{iteration\}/)
    expect(byFile['times.yaml'].error).toMatch(/times/)
    expect(byFile['late.yaml'].ok).toBe(true)
    // A value made of placeholders is checked when the launch renders it.
    const late = actors(home, ['run', 'late', 'word=abc', '--name', 'LATE'])
    expect(late.code).toBe(2)
    expect(late.stderr).toMatch(/with.*"abc" is not an integer/)
    expect(existsSync(join(home, 'runs', 'LATE'))).toBe(false)
  })
})
