// Containment's costs for `npm run bench` (docs/containment.md): a Run from
// launch to its result (the supervisor makes, joins and removes the unit),
// and a kill of a Run with 20 processes (the sweep), each under cgroup and
// under ACTORS_CONTAINMENT=tracked, in the same run.
import {spawnSync} from 'node:child_process'
import {existsSync, readFileSync} from 'node:fs'
import {join} from 'node:path'

const sleep = (ms) => new Promise((r) => setTimeout(r, ms))

function median(values) {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]
}

/** Milliseconds from `run -- true` to its result.json mirrored in run.json. */
async function launchToResult(bin, env) {
  const start = process.hrtime.bigint()
  const launched = JSON.parse(spawnSync(bin, ['run', '--json', '--', 'true'], {env, encoding: 'utf8'}).stdout)
  for (;;) {
    if (
      existsSync(join(launched.state_dir, 'result.json')) &&
      JSON.parse(readFileSync(join(launched.state_dir, 'run.json'), 'utf8')).status === 'done'
    )
      break
    await sleep(2)
  }
  return Number(process.hrtime.bigint() - start) / 1e6
}

/** Milliseconds `control RUN kill` takes on a Run with 20 sleeping processes (until the result is written). */
async function killSweep(bin, env) {
  const launched = JSON.parse(
    spawnSync(bin, ['run', '--json', '--', 'sh', '-c', 'for i in $(seq 20); do sleep 300 & done; wait'], {
      env,
      encoding: 'utf8',
    }).stdout,
  )
  for (;;) {
    const status = JSON.parse(
      spawnSync(bin, ['control', launched.run, 'status', '--json'], {env, encoding: 'utf8'}).stdout,
    )
    if (status.pids.length >= 21) break
    await sleep(50)
  }
  const start = process.hrtime.bigint()
  spawnSync(bin, ['control', launched.run, 'kill', '--json'], {env, encoding: 'utf8'})
  return Number(process.hrtime.bigint() - start) / 1e6
}

/** Rows for both kinds of containment; `env(home, extra)` and `record(name, fields)` come from bench.mjs. */
export async function benchContainment({bin, tmp, env, record, repeat}) {
  for (const kind of ['cgroup', 'tracked']) {
    const home = join(tmp, `containment-${kind}`)
    const e = env(home, {ACTORS_CONTAINMENT: kind})
    const launches = []
    for (let i = 0; i < repeat; i++) launches.push(await launchToResult(bin, e))
    const kills = []
    for (let i = 0; i < Math.max(3, Math.floor(repeat / 3)); i++) kills.push(await killSweep(bin, e))
    record(`containment ${kind}: run -- true to result`, {median_ms: +median(launches).toFixed(1)})
    record(`containment ${kind}: kill of 21 processes`, {median_ms: +median(kills).toFixed(1)})
  }
}
