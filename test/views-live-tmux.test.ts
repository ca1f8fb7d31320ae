/**
 * The live views in a real terminal (tmux, CI unset so Ink draws): a Run
 * tree whose parent starts three children and emits `--attention notify`
 * only once the view is up. The live wait shows the notify line as it
 * happens, a done line for each of the three children, and a "waiting for
 * N" count that never rises; `inspect --watch` lists the children under
 * their parent, as the card does, and shows the notify line too; a
 * summary carrying OSC 52, ESC[2J and U+202E shows escaped there.
 */
import {spawnSync} from 'node:child_process'
import {chmodSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterAll, afterEach, beforeAll, describe, expect, it} from 'vitest'
import {ROOT, actors, removeHome, tempDir, tmuxOn, waitFor} from './helpers.js'
import {HOSTILE, HOSTILE_SHOWN} from './inert-support.js'

const SOCKET = `actors-live-${process.pid}`
let home: string
let sessions = 0

const tmux = tmuxOn(SOCKET)

/** A shell in a 120x40 pane with CI unset and bin/ on PATH; returns its session name. */
function terminal(): string {
  const name = `t${sessions++}`
  const env = `env -u CI -u NO_COLOR -u ACTORS_RUN -u ACTORS_OWNER TERM=xterm-256color ACTORS_HOME='${home}' PATH='${join(ROOT, 'bin')}:${process.env.PATH}' PS1='$ '`
  tmux('new-session', '-d', '-x', '120', '-y', '40', '-s', name, `${env} bash --norc --noprofile`)
  return name
}
const type = (name: string, command: string) => {
  tmux('send-keys', '-t', name, '-l', command)
  tmux('send-keys', '-t', name, 'Enter')
}
const screen = (name: string) => tmux('capture-pane', '-p', '-t', name)
const history = (name: string) => tmux('capture-pane', '-p', '-S', '-', '-t', name)
/** The last line of `screen` that is not blank, without trailing spaces. */
const lastLine = (screen: string) => screen.trimEnd().split('\n').at(-1)?.trimEnd()
const until = (name: string, check: (s: string) => boolean, what: string, ms = 40_000) =>
  waitFor(() => (check(screen(name)) ? true : undefined), ms, `${what}; screen:\n${screen(name)}`)

/** The parent: starts three children, emits a notify event, all after `go` exists (the view is up by then). */
function writeParent(name: string, hold: number): string {
  const go = join(home, `go-${name}`)
  const script = join(home, `${name}.sh`)
  writeFileSync(
    script,
    [
      '#!/bin/sh',
      `while [ ! -e '${go}' ]; do sleep 0.1; done`,
      `actors run --name ${name}1 -- sleep ${hold} >/dev/null`,
      'actors emit review.ready --attention notify --summary "first child started" >/dev/null',
      `actors run --name ${name}2 -- sleep ${hold + 1} >/dev/null`,
      `actors run --name ${name}3 -- sleep 0.1 >/dev/null`,
      `sleep ${hold + 2}`,
      '',
    ].join('\n'),
  )
  chmodSync(script, 0o755)
  return script
}

beforeAll(() => {
  if (spawnSync('tmux', ['-V']).status !== 0) throw new Error('tmux is required (apt-get install tmux)')
  home = tempDir('actors-live-tmux-')
})
afterEach(() => {
  spawnSync('tmux', ['-L', SOCKET, 'kill-server'])
})
afterAll(() => removeHome(home))

describe('the live wait view', () => {
  it('shows notify as it happens, a done line for every child, and a count that only goes down', async () => {
    const parent = writeParent('p', 2)
    expect(actors(home, ['run', '--name', 'p', '--', parent]).code).toBe(0)
    const t = terminal()
    type(t, 'actors wait p; echo "[wait exit $?]"')
    await until(t, (s) => s.includes('waiting for'), 'the live wait view')
    writeFileSync(join(home, 'go-p'), '')
    const counts: number[] = []
    await waitFor(
      () => {
        const s = screen(t)
        const m = /waiting for (\d+) Runs?/.exec(s)
        if (m) counts.push(Number(m[1]))
        return /^\[wait exit \d+\]$/m.test(s) ? true : undefined
      },
      60_000,
      'wait to print its card and exit',
    )
    const text = history(t)
    expect(text).toMatch(/^\[wait exit 0\]$/m)
    expect(text).toMatch(/! \d\d:\d\d:\d\d p notify review\.ready: first child started/)
    for (const child of ['p1', 'p2', 'p3'])
      expect(text.match(new RegExp(`^✔ ${child} done`, 'gm')) ?? []).toHaveLength(1)
    expect(counts.length).toBeGreaterThan(0)
    for (let i = 1; i < counts.length; i++)
      expect(counts[i], `counts seen: ${counts.join(' ')}`).toBeLessThanOrEqual(counts[i - 1]!)
  })
})

describe("the README's main job", () => {
  it('run fanout recipe=demo count=3 --wait draws a done line for each child, the last one too', async () => {
    const t = terminal()
    type(t, `cd '${ROOT}' && actors run fanout recipe=demo count=3 --wait; echo "[run exit $?]"`)
    await until(t, (s) => /^\[run exit \d+\]$/m.test(s), 'the card and the exit', 60_000)
    const text = history(t)
    expect(text).toMatch(/^\[run exit 0\]$/m)
    // One ✔ line each, above the card (the card's own lines start with │).
    for (const n of [1, 2, 3])
      expect(text.match(new RegExp(`^✔ fanout-[0-9a-f]+-${n} done`, 'gm')) ?? []).toHaveLength(1)
    expect(text).toMatch(/^✔ fanout-[0-9a-f]+ done/m)
  })
})

describe('inspect --watch', () => {
  it('lists children under their parent, like the card, and shows notify as it happens', async () => {
    const parent = writeParent('q', 30)
    expect(actors(home, ['run', '--name', 'q', '--', parent]).code).toBe(0)
    const t = terminal()
    type(t, 'actors inspect --watch')
    await until(t, (s) => /q\s/.test(s) && s.includes('q quit'), 'the live list')
    writeFileSync(join(home, 'go-q'), '')
    const s = await waitFor(
      () => {
        const now = screen(t)
        return /^\S+ q\s/m.test(now) && /├─ q1/.test(now) && /└─ q3/.test(now) && /q notify review\.ready/.test(now)
          ? now
          : undefined
      },
      40_000,
      'the tree and the notify line',
    ).catch((error) => {
      throw new Error(`${error.message}\n${screen(t)}`)
    })
    expect(s).toMatch(/! \d\d:\d\d:\d\d q notify review\.ready: first child started/)
    expect(s).toMatch(/├─ q2/)
    // Two keys in one chunk, as a busy terminal delivers them: the q among them still quits.
    tmux('send-keys', '-t', t, '-l', 'xq')
    // Keys typed before the view has quit are the view's to read (and drop): type once the prompt is back.
    await until(t, (now) => lastLine(now) === '$', 'the view to quit')
    type(t, 'echo CLEAN-$((6*7))')
    await until(t, (now) => /^CLEAN-42$/m.test(now), 'the shell to answer')
    expect(actors(home, ['control', 'q', 'kill']).code).toBe(0)
  })
})

describe('Run-written text in the Ink view', () => {
  it('shows an attention summary with OSC 52, ESC[2J and U+202E escaped, the view intact', async () => {
    const go = join(home, 'go-h')
    const script = join(home, 'h.sh')
    writeFileSync(
      script,
      `#!/bin/sh\nwhile [ ! -e '${go}' ]; do sleep 0.1; done\nactors emit review.ready --attention notify --summary "$HOSTILE" >/dev/null\nsleep 30\n`,
    )
    chmodSync(script, 0o755)
    expect(actors(home, ['run', '--name', 'h', '--', script], {env: {HOSTILE}}).code).toBe(0)
    const t = terminal()
    type(t, 'actors inspect --watch')
    await until(t, (s) => /h\s/.test(s) && s.includes('q quit'), 'the live list')
    writeFileSync(go, '')
    // Raw, ESC[2J would wipe the view and the rest would be swallowed as a control sequence.
    await until(t, (now) => now.includes(HOSTILE_SHOWN), 'the escaped notify line')
    expect(screen(t)).toMatch(/! \d\d:\d\d:\d\d h notify review\.ready: osc\\e\]52/)
    expect(screen(t)).toContain('q quit')
    tmux('send-keys', '-t', t, 'q')
    await until(t, (now) => lastLine(now) === '$', 'the view to quit')
    expect(actors(home, ['control', 'h', 'kill']).code).toBe(0)
  })
})
