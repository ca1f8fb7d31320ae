/**
 * `prune --keep-artifacts` copies a Run's artifacts out of its state dir
 * before removing it, and a Run can link anything it can write (issue 35,
 * red-team pass 6): `artifacts/` in the state root (the copies went wherever
 * it pointed) and a folder of its own dir (a file from outside the state
 * root was copied in). Real Runs make the links.
 */
import {existsSync, mkdirSync, readdirSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'
import {actors, homesPerTest, removeDir, tempDir, waitForResult} from './helpers.js'

const home = homesPerTest('actors-trust-artifacts-')
const outside = tempDir('actors-outside-')
afterAll(() => removeDir(outside))

/** A Recipe `art` whose command runs `script` and declares `{state_dir}/sub/report.txt` as its artifact. */
function artRecipe(h: string, script: string): void {
  mkdirSync(join(h, 'recipes'), {recursive: true})
  writeFileSync(
    join(h, 'recipes', 'art.yaml'),
    `description: artifacts\ntemplate: ${JSON.stringify(['sh', '-c', script])}\nartifacts:\n  report: "{state_dir}/sub/report.txt"\n`,
  )
}

describe('prune --keep-artifacts and links a Run made', () => {
  it('artifacts/ linked elsewhere: refused, naming it; nothing is written there and the Run is kept', async () => {
    const h = home()
    const target = join(outside, 'taken')
    mkdirSync(target)
    artRecipe(
      h,
      `mkdir -p "$ACTORS_STATE_DIR/sub"; echo report > "$ACTORS_STATE_DIR/sub/report.txt"; ln -s '${target}' '${h}/artifacts'`,
    )
    expect(actors(h, ['run', 'art', '--name', 'K']).code).toBe(0)
    await waitForResult(join(h, 'runs', 'K'))
    const pruned = actors(h, ['prune', 'K', '--keep-artifacts'])
    expect(pruned.code).toBe(1)
    expect(pruned.stderr).toContain(`${join(h, 'artifacts')} is a symbolic link`)
    expect(readdirSync(target)).toEqual([])
    expect(existsSync(join(h, 'runs', 'K', 'run.json'))).toBe(true)
  })

  it("an artifact reached through a folder the Run linked outside the state root: not copied, the Run's own are", async () => {
    const h = home()
    const secret = join(outside, 'secret-dir')
    mkdirSync(secret)
    writeFileSync(join(secret, 'report.txt'), 'not the Run’s\n')
    artRecipe(h, `ln -s '${secret}' "$ACTORS_STATE_DIR/sub"`)
    expect(actors(h, ['run', 'art', '--name', 'K']).code).toBe(0)
    const result = await waitForResult(join(h, 'runs', 'K'))
    // Declared and found (through the link) when the Run ended.
    expect(result.artifacts).toMatchObject([{name: 'report', bytes: 16}])
    const pruned = actors(h, ['prune', 'K', '--keep-artifacts', '--json'])
    expect(pruned.code, pruned.stderr).toBe(0)
    expect(pruned.json).toMatchObject({pruned: ['K'], kept_artifacts: []})
    expect(existsSync(join(h, 'artifacts', 'K', 'report.txt'))).toBe(false)
  })
})

describe("recording a Run's artifacts at its end (the Run chooses what it declares)", () => {
  it('a 300 MiB sparse file is recorded with its size and no hash, without holding the end; a FIFO is missing, not waited on', async () => {
    const h = home()
    mkdirSync(join(h, 'recipes'), {recursive: true})
    const script =
      'mkdir -p "$ACTORS_STATE_DIR/sub"; truncate -s 300M "$ACTORS_STATE_DIR/sub/big.bin"; ' +
      'mkfifo "$ACTORS_STATE_DIR/sub/pipe"; echo small > "$ACTORS_STATE_DIR/sub/small.txt"'
    writeFileSync(
      join(h, 'recipes', 'art.yaml'),
      `description: artifacts\ntemplate: ${JSON.stringify(['sh', '-c', script])}\nartifacts:\n` +
        '  big: "{state_dir}/sub/big.bin"\n  pipe: "{state_dir}/sub/pipe"\n  small: "{state_dir}/sub/small.txt"\n',
    )
    const started = Date.now()
    expect(actors(h, ['run', 'art', '--name', 'A']).code).toBe(0)
    const result = await waitForResult(join(h, 'runs', 'A'), 20_000)
    // Hashing 300 MiB takes about a second here; a FIFO opened for reading would block for good.
    expect(Date.now() - started).toBeLessThan(10_000)
    const byName = Object.fromEntries(result.artifacts.map((a: {name: string}) => [a.name, a]))
    expect(byName.big).toMatchObject({bytes: 300 * 1024 * 1024, sha256: null, hash_skipped: 'too_large'})
    expect(byName.pipe).toMatchObject({bytes: null, sha256: null, missing: true})
    expect(byName.small).toMatchObject({bytes: 6, sha256: expect.stringMatching(/^[0-9a-f]{64}$/)})
    expect(result.status).toBe('done')
  })
})
