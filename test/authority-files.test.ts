/**
 * Authority over files: the state root is private whatever the umask, a user
 * who may not write it is told so, and no symbolic link inside it is ever
 * followed (reads, appends, writes, removals). Real processes, real files.
 */
import {spawnSync} from 'node:child_process'
import {
  chmodSync,
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {
  actors,
  actorsUmask000,
  BIN,
  cliEnv,
  homesPerTest,
  nobodyRunsNode,
  packageReadableByAll,
  processAlive,
  processesOfHome,
  readJson,
  tempDir,
  removeDir,
  waitFor,
  waitForResult,
} from './helpers.js'
import {serveLines} from '../src/lib/base/platform/line-socket.js'
import {writeJsonAtomic} from '../src/lib/base/platform/state-files.js'

const home = homesPerTest('actors-authority-')

/** Every path under `dir` (itself included) with its permission bits, links left out (a lock is a link: its mode means nothing). */
function modesUnder(dir: string): Array<{path: string; kind: string; mode: number}> {
  const found: Array<{path: string; kind: string; mode: number}> = []
  const visit = (path: string) => {
    const stat = lstatSync(path)
    if (stat.isSymbolicLink()) return
    const kind = stat.isDirectory() ? 'dir' : stat.isSocket() ? 'socket' : 'file'
    found.push({path, kind, mode: stat.mode & 0o777})
    if (stat.isDirectory()) for (const name of readdirSync(path)) visit(join(path, name))
  }
  visit(dir)
  return found
}

// The CLI as user nobody runs from a copy that user can read, wherever the checkout lies (root only: setpriv).
const NOBODY_RUNS_NODE = nobodyRunsNode()
let readableCopy: string | undefined
beforeAll(() => {
  if (NOBODY_RUNS_NODE) readableCopy = packageReadableByAll()
})
afterAll(() => {
  if (readableCopy) removeDir(readableCopy)
})

/** Run `argv` as user nobody (setpriv), in the test's environment for `h`, from the copy of the CLI that user can read. */
function asNobody(h: string, args: string[]): {code: number | null; stdout: string; stderr: string} {
  if (!readableCopy) throw new Error('asNobody needs root (setpriv) and the readable copy made in beforeAll')
  const r = spawnSync(
    'setpriv',
    [
      '--reuid=nobody',
      '--regid=nogroup',
      '--clear-groups',
      process.execPath,
      join(readableCopy, 'bin', 'actors'),
      ...args,
    ],
    {
      env: {...cliEnv(h), HOME: '/nonexistent'},
      cwd: '/',
      encoding: 'utf8',
      timeout: 30_000,
    },
  )
  return {code: r.status, stdout: r.stdout, stderr: r.stderr}
}

describe('private modes', () => {
  it('makes the state root and everything in it private (dirs 0700, files 0600) even with umask 000', async () => {
    const h = join(home(), 'state')
    // The Run emits from inside itself (a finished Run takes no events): its Trace and attention flag appear then.
    expect(
      actorsUmask000(h, [
        'run',
        '--name',
        'a',
        '--',
        'actors',
        'emit',
        'note',
        '--summary',
        's',
        '--attention',
        'notify',
      ]).code,
    ).toBe(0)
    await waitForResult(join(h, 'runs', 'a'))
    expect(actorsUmask000(h, ['wait', 'a']).code).toBe(0)
    expect(actorsUmask000(h, ['lock', 'acquire', 'db', '--holder', 'me', '--lease', '1m']).code).toBe(0)
    const entries = modesUnder(h)
    // The Run's files, the index, the delivery journal, the lock journal, the caches: all there, all private.
    for (const name of [
      'runs/a/run.json',
      'runs/a/stdout.log',
      'runs/a/trace.jsonl',
      'runs/a/reported.json',
      'locks',
    ]) {
      expect(entries.map((e) => e.path)).toContain(join(h, name))
    }
    const open = entries.filter((e) => e.mode !== (e.kind === 'dir' ? 0o700 : 0o600))
    expect(open.map((e) => `${e.path} ${e.mode.toString(8)}`)).toEqual([])
  })

  it('prune --keep-artifacts keeps the artifacts stored in a state dir, private (file 0600, dirs 0700) even with umask 000', async () => {
    const h = home()
    const outside = tempDir('actors-outside-')
    try {
      const dir = join(h, 'runs', 'K')
      const inside = join(dir, 'report.txt')
      const elsewhere = join(outside, 'elsewhere.txt')
      mkdirSync(join(h, 'recipes'), {recursive: true})
      // The command makes its artifacts readable by all: the kept copy is private all the same.
      const script = `echo report > ${inside}; echo other > ${elsewhere}; chmod 644 ${inside} ${elsewhere}`
      writeFileSync(
        join(h, 'recipes', 'art.yaml'),
        `description: artifacts\ntemplate: ${JSON.stringify(['sh', '-c', script])}\nartifacts:\n  report: ${inside}\n  elsewhere: ${elsewhere}\n`,
      )
      expect(actorsUmask000(h, ['run', 'art', '--name', 'K']).code).toBe(0)
      expect((await waitForResult(dir)).artifacts.map((a: {name: string}) => a.name)).toEqual(['report', 'elsewhere'])
      const pruned = actorsUmask000(h, ['prune', 'K', '--keep-artifacts', '--json'])
      expect(pruned.code, pruned.stderr).toBe(0)
      const kept = join(h, 'artifacts', 'K', 'report.txt')
      // Only the artifact stored inside the state dir is copied; the one outside stays where it is, untouched.
      expect(JSON.parse(pruned.stdout)).toMatchObject({
        pruned: ['K'],
        kept_artifacts: [{run: 'K', name: 'report', path: kept}],
      })
      expect(existsSync(dir)).toBe(false)
      expect(readFileSync(kept, 'utf8')).toBe('report\n')
      expect(readFileSync(elsewhere, 'utf8')).toBe('other\n')
      const modes = modesUnder(join(h, 'artifacts')).map((e) => `${e.path.slice(h.length)} ${e.mode.toString(8)}`)
      expect(modes).toEqual(['/artifacts 700', '/artifacts/K 700', '/artifacts/K/report.txt 600'])
    } finally {
      removeDir(outside)
    }
  })

  it('makes the sockets it listens on 0600', async () => {
    const dir = tempDir()
    try {
      const server = await serveLines(join(dir, 'control.sock'), async () => 'ok')
      expect(lstatSync(join(dir, 'control.sock')).mode & 0o777).toBe(0o600)
      await server.close()
    } finally {
      removeDir(dir)
    }
  })

  // As user nobody (root only), from a copy of the CLI that user can read; skipped where nobody cannot run this Node.
  it.runIf(NOBODY_RUNS_NODE)(
    'tells a user who may not write the state root which path and what to do (no "internal error")',
    () => {
      const h = home()
      expect(actors(h, ['run', 'hello', '--name', 'a']).code).toBe(0)
      // A root made by an older release: readable by all, writable by its owner only.
      for (const e of modesUnder(h)) chmodSync(e.path, e.kind === 'dir' ? 0o755 : 0o644)
      for (const args of [
        ['run', 'hello', '--name', 'b'],
        ['send', 'a', 'hi'],
        ['emit', 'x', '--run', 'a'],
      ]) {
        const r = asNobody(h, args)
        expect(r.stderr).not.toContain('internal error')
        expect(r.stderr).toMatch(/permission denied: \/\S+/)
        expect(r.stderr).toContain('fix: ')
        expect(r.code).toBe(1)
      }
    },
  )
})

describe('no link followed inside the state root', () => {
  /** A finished Run `id`, its state dir then replaced by a link to a copy of it outside the root holding a precious file. */
  async function linkedRun(h: string, id: string): Promise<string> {
    expect(actors(h, ['run', 'hello', '--name', id]).code).toBe(0)
    await waitForResult(join(h, 'runs', id))
    // The supervisor's after-run work (its lock files come and go) is over before the dir is copied.
    const supervisor = readJson(join(h, 'runs', id, 'run.json')).pid
    await waitFor(() => !processAlive(supervisor), 10_000, 'the supervisor to exit')
    const outside = join(h, 'outside')
    cpSync(join(h, 'runs', id), outside, {recursive: true})
    writeFileSync(join(outside, 'precious.txt'), 'x\n')
    rmSync(join(h, 'runs', id), {recursive: true})
    symlinkSync(outside, join(h, 'runs', id))
    return outside
  }

  it('prune keeps a linked state dir (named, exit 1) and never empties its target', async () => {
    const h = home()
    const outside = await linkedRun(h, 'P2')
    const before = readdirSync(outside).sort()
    const r = actors(h, ['prune', '--older-than', '0s'])
    expect(r.code).toBe(1)
    expect(r.stderr).toContain(`${join(h, 'runs', 'P2')} is a symbolic link`)
    expect(readdirSync(outside).sort()).toEqual(before)
    expect(readFileSync(join(outside, 'precious.txt'), 'utf8')).toBe('x\n')
    // Named, it is refused the same way.
    expect(actors(h, ['prune', 'P2']).code).toBe(1)
    expect(readdirSync(outside).sort()).toEqual(before)
  })

  it('a command on a Run whose state dir is a link refuses it (exit 1) and writes nothing there', async () => {
    const h = home()
    const outside = await linkedRun(h, 'L')
    const trace = readFileSync(join(outside, 'trace.jsonl'), 'utf8')
    const r = actors(h, ['emit', 'note', '--run', 'L', '--summary', 'x'])
    expect(r.code).toBe(1)
    expect(r.stderr).toContain('is a symbolic link')
    expect(readFileSync(join(outside, 'trace.jsonl'), 'utf8')).toBe(trace)
    expect(actors(h, ['run', 'hello', '--name', 'L']).code).toBe(1)
    expect(readFileSync(join(outside, 'run.json'), 'utf8')).toContain('"status": "done"')
  })

  it('a launch whose parent (by ACTORS_RUN) has a linked state dir is refused (exit 1), and the parent is not read through it', async () => {
    const h = home()
    const outside = await linkedRun(h, 'PL')
    const meta = readJson(join(outside, 'run.json'))
    const asChild = cliEnv(h, {
      ACTORS_RUN: 'PL',
      ACTORS_RUN_INSTANCE: meta.run_instance_id,
      ACTORS_STATE_DIR: join(h, 'runs', 'PL'),
    })
    const r = spawnSync(process.execPath, [BIN, 'run', '--name', 'kid', '--', 'true'], {env: asChild, encoding: 'utf8'})
    expect(r.status, r.stderr).toBe(1)
    expect(r.stderr).toContain(`${join(h, 'runs', 'PL')} is a symbolic link`)
    expect(existsSync(join(h, 'runs', 'kid'))).toBe(false)
    // Nor may a command of that tree speak for the linked Run: emit as its process is not taken as the caller's Run.
    const emit = spawnSync(process.execPath, [BIN, 'emit', 'note', '--summary', 'x'], {env: asChild, encoding: 'utf8'})
    expect(emit.status).not.toBe(0)
    expect(readFileSync(join(outside, 'trace.jsonl'), 'utf8')).not.toContain('"summary":"x"')
  })

  /** A file outside the root, and a link to it planted at `file`. */
  function plantLink(h: string, file: string): string {
    const target = join(h, 'elsewhere.txt')
    writeFileSync(target, 'mine\n')
    rmSync(file, {force: true})
    symlinkSync(target, file)
    return target
  }

  it("a step's stdout and stderr logs are never opened through a link planted between steps", async () => {
    const h = home()
    const outside = tempDir('actors-outside-')
    try {
      const dir = join(h, 'runs', 'S')
      const targets = {out: join(outside, 'out.txt'), err: join(outside, 'err.txt')}
      for (const target of Object.values(targets)) writeFileSync(target, 'mine\n')
      // Step 1 writes to both logs, then replaces each with a link to a file outside the root; step 2 writes again.
      const plant = `echo one; echo one-err >&2; ln -sf ${targets.out} ${dir}/stdout.log; ln -sf ${targets.err} ${dir}/stderr.log`
      mkdirSync(join(h, 'recipes'), {recursive: true})
      writeFileSync(
        join(h, 'recipes', 'two.yaml'),
        `description: two steps\nsequence:\n  - ${JSON.stringify(['sh', '-c', plant])}\n  - ${JSON.stringify(['sh', '-c', 'echo two; echo two-err >&2'])}\n`,
      )
      const r = actors(h, ['run', 'two', '--name', 'S'])
      expect(r.code, r.stderr).toBe(0)
      const result = await waitForResult(dir)
      // Step 2 never starts: its log is a link (named), and nothing reaches the files outside.
      expect(result.status).toBe('failed')
      expect(result.error).toContain(`${dir}/stdout.log is a symbolic link`)
      expect(readFileSync(targets.out, 'utf8')).toBe('mine\n')
      expect(readFileSync(targets.err, 'utf8')).toBe('mine\n')
      expect(lstatSync(join(dir, 'stdout.log')).isSymbolicLink()).toBe(true)
    } finally {
      removeDir(outside)
    }
  })

  it('emit --run does not append through a linked trace.jsonl', async () => {
    const h = home()
    expect(actors(h, ['run', '--name', 'T', '--', 'sleep', '30']).code).toBe(0)
    const target = plantLink(h, join(h, 'runs', 'T', 'trace.jsonl'))
    const r = actors(h, ['emit', 'note', '--run', 'T', '--summary', 'x'])
    expect(r.code).toBe(1)
    expect(r.stderr).toContain(`${join(h, 'runs', 'T', 'trace.jsonl')} is a symbolic link`)
    expect(readFileSync(target, 'utf8')).toBe('mine\n')
  })

  it('send does not append through a linked inbox.jsonl', async () => {
    const h = home()
    expect(actors(h, ['run', '--name', 'A', '--inbox', 'file', '--', 'sleep', '30']).code).toBe(0)
    const inbox = join(h, 'runs', 'A', 'inbox.jsonl')
    const target = plantLink(h, inbox)
    const r = actors(h, ['send', 'A', 'msg'])
    expect(r.code).toBe(1)
    expect(r.stderr).toContain(`${inbox} is a symbolic link`)
    expect(readFileSync(target, 'utf8')).toBe('mine\n')
  })

  it('lock acquire does not append through a linked locks/journal.jsonl: the link is moved aside, the slot taken', () => {
    const h = home()
    mkdirSync(join(h, 'locks'), {recursive: true})
    const journal = join(h, 'locks', 'journal.jsonl')
    const target = plantLink(h, journal)
    const r = actors(h, ['lock', 'acquire', 'db', '--holder', 'me', '--lease', '1m'])
    expect(r.code, r.stderr).toBe(0)
    expect(r.stderr).toContain(`the lock journal ${journal} was a symbolic link: moved aside`)
    expect(readFileSync(target, 'utf8')).toBe('mine\n')
  })
})

describe('abandoned state dirs', () => {
  /** Set a dir's modification time `seconds` in the past. */
  const backdate = (dir: string, seconds: number) => {
    const at = new Date(Date.now() - seconds * 1000)
    utimesSync(dir, at, at)
  }

  it('reclaims a state dir left without run.json for over 30 s on the next launch of its id', async () => {
    const h = home()
    mkdirSync(join(h, 'runs', 'zz'), {recursive: true})
    backdate(join(h, 'runs', 'zz'), 35)
    const r = actors(h, ['run', 'hello', '--name', 'zz', '--json'])
    expect(r.stderr).toBe('')
    expect(r.code).toBe(0)
    expect((await waitForResult(join(h, 'runs', 'zz'))).status).toBe('done')
  })

  it('refuses a younger one (exit 5) without restarting its clock', () => {
    const h = home()
    const dir = join(h, 'runs', 'zz')
    mkdirSync(dir, {recursive: true})
    backdate(dir, 20)
    const before = lstatSync(dir).mtimeMs
    const r = actors(h, ['run', 'hello', '--name', 'zz'])
    expect(r.code).toBe(5)
    expect(r.stderr).toContain('being created by another launch')
    // When to retry, not "in a moment": a dir something keeps touching (a Run can make one) is never reclaimed.
    expect(r.stderr).toMatch(/retry in (9|10)s; a state dir without run\.json is reclaimed 30s after its last change/)
    // Looking left the dir as it was: its age still counts from the same moment.
    expect(lstatSync(dir).mtimeMs).toBe(before)
    expect(readdirSync(dir)).toEqual([])
  })
})

/** A 2 MiB tmpfs mounted on a new temp dir for `fn`, filled up by `fill()` when asked; unmounted after. Needs root. */
async function withSmallDisk(fn: (mnt: string, fill: () => void) => Promise<void> | void): Promise<void> {
  const mnt = tempDir('actors-disk-')
  const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=2m', 'tmpfs', mnt], {encoding: 'utf8'})
  expect(mounted.stderr).toBe('')
  const fill = () => {
    spawnSync('dd', ['if=/dev/zero', `of=${join(mnt, 'fill')}`, 'bs=4k'], {encoding: 'utf8'})
    expect(spawnSync('df', ['--output=avail', mnt], {encoding: 'utf8'}).stdout.trim().split('\n')[1].trim()).toBe('0')
  }
  try {
    await fn(mnt, fill)
  } finally {
    for (const pid of processesOfHome(join(mnt, 'home'))) {
      try {
        process.kill(pid, 'SIGKILL')
      } catch {}
    }
    spawnSync('umount', ['-l', mnt])
    removeDir(mnt)
  }
}

/** Temporary files of the atomic writer (`.<name>.<pid>.<hex>.tmp`) anywhere under `dir`. */
function tempFilesUnder(dir: string): string[] {
  return modesUnder(dir)
    .map((e) => e.path)
    .filter((path) => path.endsWith('.tmp'))
}

describe.runIf(process.getuid?.() === 0)('a full disk', () => {
  it('prune of a Run prunes it whole (exit 0, nothing left aside), and a failed launch leaves no temporary file', async () => {
    await withSmallDisk(async (mnt, fill) => {
      const h = join(mnt, 'home')
      for (const id of ['f1', 'f2']) expect(actors(h, ['run', 'hello', '--name', id]).code).toBe(0)
      for (const id of ['f1', 'f2']) await waitForResult(join(h, 'runs', id))
      expect(actors(h, ['wait', 'f1', 'f2']).code).toBe(0)
      fill()
      const launch = actors(h, ['run', 'hello', '--name', 'f3'])
      expect(launch.code).toBe(1)
      expect(launch.stderr).toContain('no space left')
      const r = actors(h, ['prune', 'f1', '--json'])
      expect(r.stderr).toBe('')
      expect(r.code).toBe(0)
      expect(r.json.pruned).toEqual(['f1'])
      // Gone whole: not in runs/, not left aside half-deleted; the other Run untouched.
      expect(readdirSync(join(h, 'runs'))).not.toContain('f1')
      expect(readdirSync(h).filter((name) => name.startsWith('.pruning'))).toEqual([])
      expect(readFileSync(join(h, 'runs', 'f2', 'run.json'), 'utf8')).toContain('"status": "done"')
      expect(tempFilesUnder(h)).toEqual([])
    })
  })

  it('an atomic write that fails for want of space leaves no temporary file', async () => {
    await withSmallDisk((mnt, fill) => {
      fill()
      const file = join(mnt, 'state.json')
      expect(() => writeJsonAtomic(file, {schema: 's1', data: 'x'.repeat(64 * 1024)})).toThrow(/ENOSPC/)
      expect(readdirSync(mnt)).toEqual(['fill'])
    })
  })
})
