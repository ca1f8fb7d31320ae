/**
 * Terminal views, layer 3: the real commands in a real terminal. Each test
 * opens a tmux session (140x40, CI unset), types the command, reads the
 * screen with capture-pane, presses keys with send-keys, and checks that
 * views update in place (a Run appears once on screen and in scrollback, not
 * once per frame), that keys act, and that the terminal is left clean.
 */
import {spawnSync} from 'node:child_process'
import {mkdirSync, readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterAll, afterEach, beforeAll, beforeEach, describe, expect, it} from 'vitest'
import {BIN, ROOT, actors, tempDir, tmuxOn, waitFor, writeTone, removeHome} from './helpers.js'
import {loadedHeavyModules, writeLoadTracer} from './views-support.js'

const SOCKET = `actors-views-${process.pid}`

const tmux = tmuxOn(SOCKET)

const quote = (value: string) => `'${value.replaceAll("'", `'\\''`)}'`

/** One shell in a tmux pane, with CI unset and a colour terminal. */
class Terminal {
  private static count = 0
  readonly name = `t${Terminal.count++}`

  constructor(home: string, env: Record<string, string> = {}, size = {columns: 140, rows: 40}) {
    const vars = Object.entries({TERM: 'xterm-256color', ACTORS_HOME: home, PS1: '$ ', ...env}).map(
      ([k, v]) => `${k}=${quote(v)}`,
    )
    tmux(
      'new-session',
      '-d',
      '-x',
      String(size.columns),
      '-y',
      String(size.rows),
      '-s',
      this.name,
      '-c',
      ROOT,
      `env -u CI -u NO_COLOR -u ACTORS_RUN -u ACTORS_OWNER ${vars.join(' ')} bash --norc --noprofile`,
    )
    // Type only once the shell shows its prompt (keys sent earlier are echoed twice on a busy machine).
    const deadline = Date.now() + 10_000
    while (!/^\$ ?$/m.test(this.screen()) && Date.now() < deadline) spawnSync('sleep', ['0.05'])
  }
  run(command: string): void {
    tmux('send-keys', '-t', this.name, '-l', command)
    tmux('send-keys', '-t', this.name, 'Enter')
  }
  keys(...keys: string[]): void {
    for (const key of keys) tmux('send-keys', '-t', this.name, key)
  }
  screen(): string {
    return tmux('capture-pane', '-p', '-t', this.name)
  }
  /** The screen with its colour and style escapes kept. */
  styledScreen(): string {
    return tmux('capture-pane', '-p', '-e', '-t', this.name)
  }
  /** The screen and everything scrolled off it. */
  history(): string {
    return tmux('capture-pane', '-p', '-S', '-', '-t', this.name)
  }
  cursorVisible(): boolean {
    return tmux('display', '-p', '-t', this.name, '#{cursor_flag}').trim() === '1'
  }
  until(check: (screen: string) => boolean, what: string, timeoutMs = 30_000): Promise<string> {
    return waitFor(
      () => {
        const screen = this.screen()
        return check(screen) ? screen : undefined
      },
      timeoutMs,
      `${what}; screen was:\n${this.screen()}\n${spawnSync('ps', ['-eo', 'pid,stat,args'], {encoding: 'utf8'})
        .stdout.split('\n')
        .filter((l) => l.includes('actors'))
        .join('\n')}`,
    )
  }
  /** Type a probe command: it runs (and echoes normally) only if the shell got the terminal back in a sane state. */
  async expectShellBack(): Promise<void> {
    this.run('echo CLEAN-$((6*7))')
    await this.until((s) => /^CLEAN-42$/m.test(s), 'the shell to answer')
    expect(this.cursorVisible()).toBe(true)
  }
}

const count = (text: string, pattern: RegExp) =>
  (text.match(new RegExp(pattern.source, pattern.flags.includes('g') ? pattern.flags : pattern.flags + 'g')) ?? [])
    .length

let home: string
beforeAll(() => {
  const version = spawnSync('tmux', ['-V'], {encoding: 'utf8'})
  if (version.status !== 0) throw new Error('tmux is required for the terminal tests (apt-get install tmux)')
})
beforeEach(() => {
  home = tempDir()
})
afterEach(() => {
  spawnSync('tmux', ['-L', SOCKET, 'kill-server'])
  removeHome(home)
})
afterAll(() => {
  spawnSync('tmux', ['-L', SOCKET, 'kill-server'])
})

describe('in a real terminal', () => {
  it('inspect --watch updates the table in place, ticks durations, and q leaves a clean terminal', async () => {
    const trace = join(home, 'trace.txt')
    writeFileSync(trace, '')
    const gate = join(home, 'gate-1') // not named after the Run: the COMMAND column shows the command
    actors(home, ['run', '--name', 'slow', '--', 'sh', '-c', `while [ ! -e ${gate} ]; do sleep 0.05; done`])
    const term = new Terminal(home, {TRACE_FILE: trace, NODE_OPTIONS: `--require ${writeLoadTracer(home)}`})
    term.run('bin/actors inspect --watch')
    const first = await term.until((s) => /● slow\s+-\s+running/.test(s), 'slow running')
    const firstLine = first.split('\n').find((l) => l.includes('slow'))!
    // The duration ticks without any change on disk.
    await term.until(
      (s) => s.split('\n').some((l) => l.includes('● slow') && l !== firstLine),
      'the duration to tick',
      5000,
    )
    actors(home, ['run', '--name', 'quick', '--', 'true'])
    await term.until((s) => /✔ quick\s+-\s+done/.test(s), 'quick done')
    writeFileSync(gate, '')
    const done = await term.until((s) => /✔ slow\s+-\s+done\s+0\s+\S+\s+\d+(\.\d)?s/.test(s), 'slow done')
    expect(done).toMatch(/1 done|2 done/)
    expect(done).toContain('2 done')
    // Updated in place: every Run and the title once, on screen and in scrollback.
    const history = term.history()
    expect(count(history, /slow/)).toBe(1)
    expect(count(history, /quick/)).toBe(1)
    expect(count(history, /actors · Runs/)).toBe(1)
    term.keys('q')
    await term.until((s) => /^\$ ?$/m.test(s.split('actors · Runs')[1] ?? ''), 'the prompt after q')
    await term.expectShellBack()
    // The same load tracer that finds no ink off the TTY sees it here.
    expect(loadedHeavyModules(readFileSync(trace, 'utf8').split('\n')).length).toBeGreaterThan(0)
  })

  it('inspect --watch on a narrow terminal keeps every Run id and status whole and says which columns it left out', async () => {
    const ids = ['fanout-a571a1-coordinator-1', 'fanout-a571a1-coordinator-2']
    for (const id of ids) actors(home, ['run', '--name', id, '--wait', '--', 'true'])
    const term = new Terminal(home, {}, {columns: 60, rows: 20})
    term.run('bin/actors inspect --watch')
    const screen = await term.until((s) => s.includes('2 done'), 'the table')
    for (const id of ids) expect(screen).toMatch(new RegExp(`✔ ${id}\\s.*\\bdone\\b`))
    expect(screen).not.toMatch(/fanout-a571a1…|do…/)
    expect(screen).toMatch(/\(left out to fit \d+ columns: [^)]*PARENT\)/)
    for (const line of screen.split('\n')) expect(line.length).toBeLessThanOrEqual(60)
    // Ink reads keys once its input is set up, a moment after the first frame (a loaded CI box once lost an early q).
    await new Promise((resolve) => setTimeout(resolve, 1500))
    term.keys('q')
    await term.until((s) => /^\$ ?$/m.test(s.split('actors · Runs')[1] ?? ''), 'the prompt after q')
    await term.expectShellBack()
  })

  it('NO_COLOR keeps the Ink views free of colour', async () => {
    actors(home, ['run', '--name', 'tint', '--', 'false'])
    const term = new Terminal(home, {NO_COLOR: '1'})
    term.run('bin/actors inspect --watch')
    await term.until((s) => /✖ tint\s+-\s+failed/.test(s), 'tint failed')
    expect(term.styledScreen()).not.toMatch(/\u001B\[(3\d|9\d|38;)/)
    term.keys('q')
    await term.until((s) => /^\$ ?$/m.test(s.split('actors · Runs')[1] ?? ''), 'the prompt after q')
    await term.expectShellBack()
  })

  it('inspect --tree --watch shows the forest with a queued child, and Ctrl-C leaves a clean terminal', async () => {
    // coord and each child run until the test opens their gates, so every state is seen however slow the machine.
    const gate = (name: string) => join(home, `gate-${name}`)
    const child = (name: string) =>
      `${process.execPath} ${BIN} run --name ${name} -- sh -c ${quote(`while [ ! -e ${gate(name)} ]; do sleep 0.05; done`)}`
    actors(home, [
      'run',
      '--name',
      'coord',
      '--max-parallel',
      '1',
      '--',
      'sh',
      '-c',
      `${child('c1')}; ${child('c2')}; while [ ! -e ${gate('coord')} ]; do sleep 0.05; done`,
    ])
    const term = new Terminal(home)
    term.run('bin/actors inspect --tree --watch')
    const screen = await term.until(
      (s) => /├─ c1\s+running/.test(s) && /└─ c2\s+queued/.test(s),
      'c1 running and c2 queued under coord',
    )
    expect(screen).toMatch(/● coord\s+running/)
    expect(screen).toMatch(/RUN\s+STATUS\s+DURATION\s+USAGE/)
    writeFileSync(gate('c1'), '')
    await term.until((s) => /├─ c1\s+done/.test(s) && /└─ c2\s+running/.test(s), 'c2 to start once c1 is done')
    writeFileSync(gate('c2'), '')
    writeFileSync(gate('coord'), '')
    // The live frame is redrawn in place: c2 is on the screen once. (Its scrollback is not checked here: once, under
    // a loaded CI machine, it held a second copy of a frame; the history is printed when the screen check fails.)
    expect(count(term.screen(), /c2/), term.history()).toBe(1)
    term.keys('C-c')
    await term.until((s) => /^\$ ?$/m.test(s.split('Run tree')[1] ?? ''), 'the prompt after Ctrl-C')
    await term.expectShellBack()
  })

  it('run --follow streams stdout and marked stderr, then the result line and exit code', async () => {
    // The Run stays live until the test opens its gate, so the live view is seen however slow the machine.
    const gate = join(home, 'gate-fol')
    const term = new Terminal(home)
    term.run(
      `bin/actors run --name fol --follow -- sh -c 'echo to-out; echo to-err >&2; while [ ! -e ${gate} ]; do sleep 0.05; done; echo again; exit 3'; echo rc=$?`,
    )
    // The live footer may be drawn a moment after the lines (a loaded machine): both, while the Run is held live.
    const live = await term.until((s) => s.includes('┃ to-err') && /● fol running/.test(s), 'stderr and the footer')
    expect(live).toMatch(/^to-out$/m)
    writeFileSync(gate, '')
    const end = await term.until((s) => /^rc=1$/m.test(s), 'the exit code')
    expect(end).toMatch(/^again$/m)
    expect(end).toContain('actors: fol failed (exit 3)')
    expect(end).not.toContain('Ctrl-C stops following')
    expect(count(term.history(), /^to-out$/m)).toBe(1)
    await term.expectShellBack()
  })

  it('wait shows pending Runs live, finished ones once, then the completion card', async () => {
    // Each Run ends when the test opens its gate, so every state is seen however slow the machine.
    const gate = (name: string) => join(home, `gate-${name}`)
    const untilGate = (name: string) => `while [ ! -e ${gate(name)} ]; do sleep 0.05; done`
    actors(home, ['run', '--name', 'later', '--', 'sh', '-c', untilGate('later')])
    actors(home, ['run', '--name', 'broken', '--', 'sh', '-c', `${untilGate('broken')}; echo oops >&2; exit 2`])
    const term = new Terminal(home)
    term.run('bin/actors wait; echo rc=$?')
    const waiting = await term.until((s) => s.includes('waiting for 2 Runs'), 'both pending')
    expect(waiting).toMatch(/● later running/)
    writeFileSync(gate('broken'), '')
    await term.until((s) => /^✖ broken failed/m.test(s) && s.includes('waiting for 1 Run'), 'broken finished first')
    writeFileSync(gate('later'), '')
    const end = await term.until((s) => /^rc=1$/m.test(s), 'the card and exit code')
    expect(end).toContain('2 Runs finished')
    expect(end).toMatch(/1 done · 1 failed/)
    expect(end).toMatch(/✔ later\s+done/)
    expect(end).toMatch(/✖ broken\s+failed/)
    expect(end).toContain('more: actors inspect')
    expect(end).not.toContain('waiting for')
    expect(count(term.history(), /^✖ broken failed/m)).toBe(1)
    // The last Run to end gets its scrollback line too, before the card.
    expect(count(term.history(), /^✔ later done/m)).toBe(1)
    // Delivered once: the next wait has nothing new.
    expect(actors(home, ['wait', '--json']).json.members).toBe(0)
  })

  it('music play shows now-playing and its keys drive the same service actors control reaches', async () => {
    const music = join(home, 'music')
    mkdirSync(music)
    for (const [name, hz] of [
      ['01 first.wav', 440],
      ['02 second.wav', 660],
    ] as const) {
      writeTone(join(music, name), 30, hz, {rate: 8000, channels: 1})
    }
    const stateDir = join(home, 'player')
    const term = new Terminal(home, {ACTORS_MUSIC_OUTPUT: 'null'})
    term.run(`bin/actors music play ${music} --player mpv --state-dir ${stateDir}; echo rc=$?`)
    await term.until(
      (s) => /▶ playing\s+01 first\.wav\s+1\/2/.test(s) && /\d:\d\d \/ 0:30/.test(s),
      'the first track playing',
    )
    term.keys('n')
    await term.until((s) => /02 second\.wav\s+2\/2/.test(s), 'n to skip to the second track')
    const position = (s: string) => {
      const m = /(\d+):(\d\d) \/ 0:30/.exec(s)
      return m ? Number(m[1]) * 60 + Number(m[2]) : -1
    }
    const before = position(await term.until((s) => position(s) >= 1, 'the second track to be under way'))
    term.keys('Right')
    await term.until((s) => position(s) >= before + 5, 'right arrow to seek forward 5 s')
    term.keys('Space')
    await term.until((s) => s.includes('‖ paused'), 'space to pause')
    const status = actors(home, ['control', stateDir, 'status', '--json'])
    expect(status.json.status).toMatchObject({state: 'paused', index: 1})
    term.keys('+')
    await term.until((s) => s.includes('vol 75%'), '+ to raise the volume')
    // And the other way: a control from outside shows up in the view.
    expect(actors(home, ['control', stateDir, 'volume', '20']).code).toBe(0)
    await term.until((s) => s.includes('vol 20%'), 'the view to follow actors control')
    term.keys('q')
    const end = await term.until((s) => /^rc=0$/m.test(s), 'q to stop the player and exit')
    expect(end).toContain('■ stopped')
    expect(count(term.history(), /02 second\.wav\s+2\/2/)).toBe(1)
    await term.expectShellBack()
    expect(actors(home, ['control', stateDir, 'status', '--json']).json.status.state).not.toBe('playing')
  })
})
