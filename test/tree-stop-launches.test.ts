/**
 * A tree being stopped or killed takes no new Runs (SPEC: Trees; issue 35:
 * Runs launched while a stop walked the tree survived it). A parent that
 * keeps launching children (ignoring SIGTERM, so it launches all through its
 * grace) is stopped or killed: afterwards no Run of its tree is live and no
 * process of it survives. A launch under a Run being stopped is refused
 * (exit 3) naming that Run and its state. Under both containments; real
 * processes, found by a sleep of a length no other test uses.
 */
import {spawn, spawnSync} from 'node:child_process'
import {existsSync, readdirSync, readFileSync} from 'node:fs'
import {join} from 'node:path'
import {setTimeout as sleep} from 'node:timers/promises'
import {afterEach, describe, expect, it} from 'vitest'
import {actors, BIN, cliEnv, homesPerTest, readJson, waitFor, CONTAINMENT_MODES} from './helpers.js'

const home = homesPerTest('actors-tree-stop-')
const lengths: string[] = []
afterEach(() => {
  for (const length of lengths.splice(0)) spawnSync('pkill', ['-KILL', '-f', '-x', `sleep ${length}`])
})

/** A sleep length nobody else uses (its processes are found, and cleaned up, by it). */
function uniqueLength(): string {
  const length = `301.${process.pid}${Math.floor(Math.random() * 1e6)}`
  lengths.push(length)
  return length
}

function sleepers(length: string): number[] {
  const out = spawnSync('pgrep', ['-f', '-x', `sleep ${length}`], {encoding: 'utf8'}).stdout
  return out.split('\n').filter(Boolean).map(Number)
}

/** Every Run of the state root with its status (run.json, or result.json once written). */
function statuses(h: string): Record<string, string> {
  const found: Record<string, string> = {}
  for (const id of readdirSync(join(h, 'runs'))) {
    const dir = join(h, 'runs', id)
    if (!existsSync(join(dir, 'run.json'))) continue
    found[id] = existsSync(join(dir, 'result.json'))
      ? readJson(join(dir, 'result.json')).status
      : readJson(join(dir, 'run.json')).status
  }
  return found
}

describe.each(CONTAINMENT_MODES)('a tree that launches while it is ended ($mode)', ({env, skip}) => {
  for (const action of ['stop', 'kill'] as const)
    it.skipIf(skip)(
      `${action} of a parent launching children in a loop leaves no Run of its tree live and no process of it`,
      async () => {
        const h = home()
        const length = uniqueLength()
        // SIGTERM ignored, as the launches it starts inherit: the loop goes on all through a stop's grace.
        const loop = `trap '' TERM; while true; do actors run -- sleep ${length} >/dev/null 2>&1 & sleep 0.05; done`
        const r = actors(h, ['run', '--name', 'p', '--json', '--', 'sh', '-c', loop], {env})
        expect(r.code, r.stderr).toBe(0)
        const journal = join(h, 'runs', 'p', 'children.jsonl')
        await waitFor(
          () => existsSync(journal) && readFileSync(journal, 'utf8').split('\n').length > 4,
          20_000,
          'children launched',
        )
        const c = actors(h, ['control', 'p', action, '--json'], {env, timeout: 60_000})
        expect(c.code, c.stdout + c.stderr).toBe(0)
        // Launches that were under way when it returned have had time to finish (or be refused).
        await sleep(1500)
        const live = Object.entries(statuses(h)).filter(([, status]) =>
          ['running', 'queued', 'paused'].includes(status),
        )
        expect(live, JSON.stringify(statuses(h))).toEqual([])
        expect(sleepers(length)).toEqual([])
        expect(Object.keys(statuses(h)).length).toBeGreaterThan(4)
      },
      90_000,
    )

  it.skipIf(skip)(
    'a launch under a parent being stopped is refused, exit 3, naming the parent and its state',
    async () => {
      const h = home()
      const go = join(h, 'go')
      // The launch runs with SIGTERM blocked (node resets an ignored one): the stop's sweep does not end it first.
      const launch = `python3 -c "import signal,os; signal.pthread_sigmask(signal.SIG_BLOCK,[signal.SIGTERM]); os.execvp('actors',['actors','run','--','true'])"`
      const script = `trap '' TERM; touch '${h}/ready'; while [ ! -e '${go}' ]; do sleep 0.05; done; ${launch} >/dev/null 2>'${h}/err'; echo $? >'${h}/rc.x'; mv '${h}/rc.x' '${h}/rc'; sleep 30`
      const r = actors(h, ['run', '--name', 'p', '--json', '--', 'sh', '-c', script], {env})
      expect(r.code, r.stderr).toBe(0)
      await waitFor(() => existsSync(join(h, 'ready')), 10_000, 'p ignoring SIGTERM')
      // The stop waits out p's grace (5 s: p ignores SIGTERM); meanwhile p is being stopped.
      const stop = spawn(process.execPath, [BIN, 'control', 'p', 'stop'], {env: cliEnv(h, env), stdio: 'ignore'})
      const stopped = new Promise((resolve) => stop.on('exit', resolve))
      try {
        await waitFor(() => readJson(join(h, 'runs', 'p', 'run.json')).ending, 10_000, 'p marked as ending')
        spawnSync('touch', [go])
        await waitFor(() => existsSync(join(h, 'rc')), 10_000, 'the launch inside p')
        const said = readFileSync(join(h, 'err'), 'utf8')
        expect(readFileSync(join(h, 'rc'), 'utf8').trim(), said).toBe('3')
        expect(readFileSync(join(h, 'err'), 'utf8')).toContain('its parent Run p is being stopped')
        expect(Object.keys(statuses(h))).toEqual(['p'])
      } finally {
        await stopped
      }
    },
    40_000,
  )
})
