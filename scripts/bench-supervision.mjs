// What supervising Runs costs, for `npm run bench` (SPEC: Supervision): the
// memory and CPU of every `actors` process that supervises, per live Run and
// per Run started (beyond the `actors run` that asked); 100 short Runs
// launched two at a time until all are finished; command end → `wait`
// returns (best of 3); and whether a Run whose supervisor is SIGKILLed keeps
// its exit status; each once as by default (the state root's supervision host) and once with
// ACTORS_SUPERVISION=run (a supervisor per Run).
// `node scripts/bench.mjs --only supervision` runs these alone.
import {spawn, spawnSync} from 'node:child_process'
import {existsSync, readdirSync, readFileSync} from 'node:fs'
import {join} from 'node:path'

const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
/** Clock ticks per second of /proc/PID/stat times (USER_HZ). */
const TICKS_PER_SECOND = 100

/** The live processes whose command line runs this package's code (bin/ or dist/ under `root`). */
function actorsProcesses(root) {
  const found = []
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      const argv = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0')
      if (argv.some((arg) => arg.startsWith(join(root, 'dist')) || arg.startsWith(join(root, 'bin'))))
        found.push(Number(name))
    } catch {}
  }
  return found
}

function pssKiB(pid) {
  try {
    return Number(/^Pss:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'))[1])
  } catch {
    return 0
  }
}

/** CPU time (user + system) process `pid` has spent, ms. */
function cpuMs(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND
  } catch {
    return 0
  }
}

async function untilFinished(dirs, withinMs) {
  const deadline = Date.now() + withinMs
  for (;;) {
    if (dirs.every((dir) => existsSync(join(dir, 'result.json')))) return true
    if (Date.now() > deadline) return false
    await sleep(5)
  }
}

/**
 * 50 live Runs of `sleep`: the PSS of every process running this package's
 * code, summed and divided by 50, and the CPU they spent, divided by 50
 * (what starting a Run costs beyond its caller, as the callers have exited).
 */
async function liveRunCosts({bin, root, home, env, record}) {
  const before = new Set(actorsProcesses(root))
  const dirs = []
  for (let i = 0; i < 50; i++) {
    const r = spawnSync(bin, ['run', '--json', '--', 'sleep', '300'], {env: env(home), encoding: 'utf8'})
    dirs.push(JSON.parse(r.stdout).state_dir)
  }
  await sleep(1500)
  const supervising = actorsProcesses(root).filter((pid) => !before.has(pid))
  const pss = supervising.reduce((sum, pid) => sum + pssKiB(pid), 0) / 50 / 1024
  const cpu = supervising.reduce((sum, pid) => sum + cpuMs(pid), 0) / 50
  record('supervision: PSS per live Run (50 live)', {
    mib: +pss.toFixed(2),
    processes: supervising.length,
    target: '<= 1 MiB',
  })
  record('supervision: CPU per Run started (50)', {ms: +cpu.toFixed(1), target: '<= 15 ms'})
  for (const dir of dirs) spawnSync(bin, ['control', dir, 'kill'], {env: env(home)})
}

/** `seq 100 | xargs -P 2 -I{} actors run --name tp{} -- true`, until every one has its result. */
async function throughput({bin, home, env, record}) {
  const start = process.hrtime.bigint()
  const xargs = spawnSync('sh', ['-c', `seq 100 | xargs -P 2 -I{} '${bin}' run --name tp{} -- true`], {
    env: env(home),
    stdio: 'ignore',
  })
  if (xargs.status !== 0) throw new Error(`the throughput launches failed (xargs ${xargs.status})`)
  const dirs = Array.from({length: 100}, (_, i) => join(home, 'runs', `tp${i + 1}`))
  const finished = await untilFinished(dirs, 120_000)
  const seconds = Number(process.hrtime.bigint() - start) / 1e9
  record('supervision: 100 Runs of true, 2 at a time, all finished', {
    s: finished ? +seconds.toFixed(2) : 'over 120',
    target: '<= 5 s',
  })
}

/** Command end (a timestamp written as its last act) → `wait RUN` returns, best of 3. */
async function endToWait({bin, tmp, home, env, record}) {
  const samples = []
  for (let i = 0; i < 3; i++) {
    const marker = join(tmp, `sup-end-${i}`)
    // The marker is written by the shell itself (no process start between it and the exit): epoch ns.
    const launched = JSON.parse(
      spawnSync(bin, ['run', '--json', '--', 'sh', '-c', `sleep 0.8; date +%s%N > '${marker}'`], {
        env: env(home),
        encoding: 'utf8',
      }).stdout,
    )
    const returned = await new Promise((resolve) => {
      const child = spawn(bin, ['wait', launched.run, '--json'], {env: env(home), stdio: 'ignore'})
      child.on('exit', () => resolve(performance.timeOrigin + performance.now()))
    })
    samples.push(returned - Number(readFileSync(marker, 'utf8')) / 1e6)
  }
  record('supervision: command end → wait returns, best of 3', {
    ms: +Math.min(...samples).toFixed(1),
    samples: samples.map((s) => s.toFixed(1)).join(','),
    target: '<= 10 ms',
  })
}

/** A Run whose every supervising process is SIGKILLed while its command runs: is its exit status (7) kept? */
async function supervisorKilled({bin, root, home, env, record}) {
  const before = new Set(actorsProcesses(root))
  const launched = JSON.parse(
    spawnSync(bin, ['run', '--json', '--', 'sh', '-c', 'sleep 1; exit 7'], {env: env(home), encoding: 'utf8'}).stdout,
  )
  await sleep(300)
  for (const pid of actorsProcesses(root).filter((pid) => !before.has(pid))) {
    try {
      process.kill(pid, 'SIGKILL')
    } catch {}
  }
  await sleep(1500)
  const inspect = JSON.parse(
    spawnSync(bin, ['inspect', launched.run, '--json'], {env: env(home), encoding: 'utf8'}).stdout,
  )
  record('supervision: supervisor SIGKILLed, exit 7 kept', {
    status: inspect.status,
    exit_code: inspect.exit_code ?? null,
    target: 'failed, exit_code 7',
  })
}

export async function benchSupervision({bin, root, tmp, env, record}) {
  await liveRunCosts({bin, root, home: join(tmp, 'sup-live'), env, record})
  await throughput({bin, home: join(tmp, 'sup-tp'), env, record})
  await endToWait({bin, tmp, home: join(tmp, 'sup-wait'), env, record})
  await supervisorKilled({bin, root, home: join(tmp, 'sup-kill'), env, record})
  // The same four with ACTORS_SUPERVISION=run: a supervisor per Run, the baseline the host is measured against
  // (docs/runs.md "Supervision").
  const perRun = {
    bin,
    root,
    tmp,
    env: (home) => ({...env(home), ACTORS_SUPERVISION: 'run'}),
    record: (name, value) => record(name.replace('supervision:', 'supervision (per Run):'), value),
  }
  await liveRunCosts({...perRun, home: join(tmp, 'sup-live-run')})
  await throughput({...perRun, home: join(tmp, 'sup-tp-run')})
  await endToWait({...perRun, home: join(tmp, 'sup-wait-run')})
  await supervisorKilled({...perRun, home: join(tmp, 'sup-kill-run')})
}
