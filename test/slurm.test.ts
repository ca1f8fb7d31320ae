/**
 * Runs on Slurm (SPEC: Executors), against the private single-node cluster that
 * scripts/slurm-dev-cluster.sh starts (CI starts it in .ci/run), reached through
 * SLURM_CONF (test/slurm-cluster.ts): a machine's own cluster is never used,
 * stopped or reconfigured. Without the private cluster these tests fail in CI
 * and are skipped, loudly, elsewhere.
 */
import {spawnSync} from 'node:child_process'
import {existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, describe, expect, it, onTestFinished} from 'vitest'
import {
  ROOT,
  actors,
  actorsAsync,
  cliEnv,
  homeWithRecipes,
  homesPerTest,
  packageWithout,
  readJson,
  removeDir,
  removeHome,
  waitFor,
} from './helpers.js'
import {findRunProcesses} from '../src/lib/base/platform/process-tree.js'
import {HAS_PRIVATE_SLURM, SLURM_DEV_DIR} from './slurm-cluster.js'

function clusterState(): string {
  if (!HAS_PRIVATE_SLURM) return ''
  const r = spawnSync('sinfo', ['-h', '-N', '-o', '%T'], {encoding: 'utf8', timeout: 10_000})
  return r.status === 0 ? r.stdout.trim() : ''
}

const UP = /^(idle|mixed|allocated|completing)/.test(clusterState())
/** The one node's name as Slurm calls it (a cluster may name it after the host, not `localhost`). */
const NODE = UP
  ? (spawnSync('sinfo', ['-h', '-N', '-o', '%N'], {encoding: 'utf8', timeout: 10_000}).stdout?.trim().split('\n')[0] ??
    '')
  : ''
const START = 'scripts/slurm-dev-cluster.sh start'

if (!UP && !process.env.CI) {
  console.warn(
    `\n${'!'.repeat(78)}\n!! test/slurm.test.ts SKIPPED: the private Slurm cluster (${SLURM_DEV_DIR}) does not answer \`sinfo\`.\n!! Start one (root): ${START}   (docs/slurm.md)\n${'!'.repeat(78)}\n`,
  )
}

/** Slurm's state of a job as `squeue -t all` sees it ('' once forgotten). */
function jobState(jobId: string): string {
  const r = spawnSync('squeue', ['-h', '-t', 'all', '-j', jobId, '-o', '%T'], {encoding: 'utf8'})
  return r.status === 0 ? r.stdout.trim() : ''
}

/** The job as plain `squeue` lists it (pending, running, suspended, completing); '' once it has left. */
function liveInSqueue(jobId: string): string {
  return spawnSync('squeue', ['-h', '-j', jobId, '-o', '%T'], {encoding: 'utf8'}).stdout.trim()
}

function scontrolField(jobId: string, field: string): string | undefined {
  const r = spawnSync('scontrol', ['show', 'job', '-o', jobId], {encoding: 'utf8'})
  return new RegExp(`\\b${field}=(\\S*)`).exec(r.stdout)?.[1]
}

const jobs: string[] = []
afterAll(() => {
  // Whatever a failed test left behind must not hold the cluster's cores.
  for (const job of jobs) spawnSync('scancel', [job])
})

const suite = UP || process.env.CI ? describe : describe.skip

suite('Runs on Slurm', () => {
  if (!UP) {
    it('needs a running Slurm cluster', () => {
      throw new Error(
        `CI=${process.env.CI}: the private Slurm cluster (${SLURM_DEV_DIR}) does not answer \`sinfo\`; .ci/run must start it with ${START}`,
      )
    })
    return
  }
  const home = homesPerTest('actors-slurm-')

  /** `actors run --on slurm ...` → its launch document (job id remembered for cleanup). */
  function submit(h: string, args: string[], env: NodeJS.ProcessEnv = {}): any {
    const r = actors(h, ['run', '--on', 'slurm', '--json', ...args], {env})
    expect(r.code, r.stderr).toBe(0)
    expect(r.json.status).toBe('queued')
    expect(r.json.executor).toMatchObject({kind: 'slurm', job_id: expect.stringMatching(/^\d+$/)})
    jobs.push(r.json.executor.job_id)
    return r.json
  }

  const status = (h: string, run: string) => actors(h, ['inspect', run, '--json']).json?.status
  const lines = (dir: string) =>
    existsSync(join(dir, 'stdout.log'))
      ? readFileSync(join(dir, 'stdout.log'), 'utf8').split('\n').filter(Boolean).length
      : 0
  const running = (h: string, run: string) =>
    waitFor(() => status(h, run) === 'running', 30_000, `${run} running on the node`)

  it('runs to done: queued at once, logs, wait, logs --follow, inspect with job id and node', async () => {
    const h = home()
    const launched = submit(h, [
      '--name',
      'hello',
      '--',
      'sh',
      '-c',
      'echo hello from $SLURM_JOB_ID; echo oops >&2; sleep 1; echo bye',
    ])
    const job = launched.executor.job_id
    // run returned before the job ran: the supervisor writes everything else on the node.
    expect(readJson(join(launched.state_dir, 'run.json'))).toMatchObject({
      status: 'queued',
      executor: {kind: 'slurm', job_id: job},
    })

    const follow = actorsAsync(h, ['logs', 'hello', '--follow'])
    const waited = actors(h, ['wait', 'hello', '--json', '--timeout', '60s'], {timeout: 70_000})
    expect(waited.code, waited.stderr).toBe(0)
    expect(waited.json.rows[0]).toMatchObject({run: 'hello', status: 'done'})
    expect(waited.json.rows[0].output).toBe(`hello from ${job}\nbye\n`)
    const followed = await follow
    expect(followed.code, followed.stderr).toBe(0)
    expect(followed.stdout).toBe(`hello from ${job}\nbye\n`)
    expect(actors(h, ['logs', 'hello', '--stderr']).stdout).toBe('oops\n')

    const meta = readJson(join(launched.state_dir, 'run.json'))
    expect(meta).toMatchObject({
      status: 'done',
      host: expect.any(String),
      executor: {kind: 'slurm', job_id: job, node: NODE},
    })
    const detail = actors(h, ['inspect', 'hello', '--json']).json
    expect(detail).toMatchObject({executor: 'slurm', job_id: job, node: NODE})
    expect(actors(h, ['inspect', 'hello']).stdout).toContain(`executor:   slurm job ${job} on ${NODE}`)
    const table = actors(h, ['inspect'], {env: {COLUMNS: '200'}}).stdout
    expect(table).toMatch(/WHERE\n/)
    expect(table).toContain(`slurm ${job}@${NODE}`)
    await waitFor(() => ['COMPLETED', ''].includes(jobState(job)), 30_000, `job ${job} completed`)
  })

  it('pause suspends the job and resume resumes it, each confirmed by Slurm; the Run then finishes done', async () => {
    const h = home()
    const launched = submit(h, [
      '--name',
      'tick',
      '--',
      'sh',
      '-c',
      'for i in $(seq 30); do echo tick; sleep 0.1; done',
    ])
    const job = launched.executor.job_id
    await running(h, 'tick')
    await waitFor(() => lines(launched.state_dir) > 3, 30_000, 'ticks')
    const paused = actors(h, ['control', 'tick', 'pause', '--json'])
    expect(paused.code, paused.stderr).toBe(0)
    expect(paused.json).toMatchObject({
      action: 'pause',
      status: 'paused',
      via: 'srun',
      job_id: job,
      job_state: 'SUSPENDED',
      handled_by: 'kernel',
    })
    expect(paused.json.confirmed_ms).toBeLessThan(5000)
    // Slurm itself holds the whole job (supervisor included), and every reader says paused.
    expect(jobState(job)).toBe('SUSPENDED')
    expect(status(h, 'tick')).toBe('paused')
    expect(actors(h, ['control', 'tick', 'status', '--json']).json).toMatchObject({
      status: 'paused',
      executor: {state: 'SUSPENDED'},
    })
    const held = lines(launched.state_dir)
    // Observing that nothing is written takes a stretch of time; 1 s is 10 ticks.
    await new Promise((r) => setTimeout(r, 1000))
    expect(lines(launched.state_dir)).toBe(held)
    const resumed = actors(h, ['control', 'tick', 'resume', '--json'])
    expect(resumed.code, resumed.stderr).toBe(0)
    expect(resumed.json).toMatchObject({status: 'running', via: 'srun', job_state: 'RUNNING', changed: true})
    expect(jobState(job)).toBe('RUNNING')
    expect(status(h, 'tick')).toBe('running')
    const waited = actors(h, ['wait', 'tick', '--json', '--timeout', '60s'], {timeout: 70_000})
    expect(waited.json.rows[0]).toMatchObject({run: 'tick', status: 'done'})
    expect(lines(launched.state_dir)).toBe(30)
    expect(readJson(join(launched.state_dir, 'run.json')).paused_via).toBeUndefined()
  })

  it("a pause Slurm cannot deliver (slurmd down) is exit 3 with Slurm's words, and leaves the Run running", async () => {
    const h = home()
    const launched = submit(h, ['--name', 'unreached', '--', 'sh', '-c', 'while true; do echo tick; sleep 0.1; done'])
    const job = launched.executor.job_id
    await running(h, 'unreached')
    const pidFile = /^SlurmdPidFile\s*=\s*(\S+)/m.exec(
      spawnSync('scontrol', ['show', 'config'], {encoding: 'utf8'}).stdout,
    )?.[1]
    expect(pidFile && existsSync(pidFile), 'slurmd writes its pid file').toBeTruthy()
    // Only the private cluster's own slurmd, by the pid file in its own directory: never a machine's.
    expect(pidFile).toBe(join(SLURM_DEV_DIR, 'slurmd.pid'))
    const slurmd = Number(readFileSync(pidFile!, 'utf8').trim())
    try {
      process.kill(slurmd, 'SIGTERM')
      await waitFor(
        () => {
          try {
            process.kill(slurmd, 0)
            return false
          } catch {
            return true
          }
        },
        15_000,
        'slurmd gone',
      )
      const pause = actors(h, ['control', 'unreached', 'pause'], {timeout: 60_000})
      expect(pause.code, pause.stderr).toBe(3)
      expect(pause.stderr).toContain('Run unreached: not paused')
      expect(pause.stderr).toMatch(new RegExp(`node ${NODE} is \\S*NOT_RESPONDING`))
      expect(pause.stderr).toContain('fix: check the node and its slurmd')
      expect(pause.stderr).not.toMatch(/internal error|\n\s+at /)
      // Taken back: Slurm's records and the Run agree that it runs.
      expect(jobState(job)).toBe('RUNNING')
      expect(status(h, 'unreached')).toBe('running')
    } finally {
      spawnSync('bash', [join(ROOT, 'scripts', 'slurm-dev-cluster.sh'), 'start'], {
        encoding: 'utf8',
        timeout: 60_000,
        env: {...process.env, SLURM_DEV_DIR},
      })
      await waitFor(
        () => !/NOT_RESPONDING/.test(spawnSync('scontrol', ['show', 'node', NODE], {encoding: 'utf8'}).stdout),
        30_000,
        'the node answering',
      )
    }
    const before = lines(launched.state_dir)
    await waitFor(() => lines(launched.state_dir) > before + 3, 15_000, 'ticks: the command was never stopped')
    expect(actors(h, ['control', 'unreached', 'kill', '--json'], {timeout: 60_000}).json?.status).toBe('killed')
    // Slurm itself takes its time here: the failed suspend waits on the dead slurmd, the restarted one registers.
  }, 150_000)

  it('kill through a job step: the Run ends killed, the job leaves squeue, no process of it remains', async () => {
    const h = home()
    const launched = submit(h, ['--name', 'killme', '--', 'sh', '-c', 'sleep 300 & sleep 300'])
    const job = launched.executor.job_id
    await running(h, 'killme')
    const killed = actors(h, ['control', 'killme', 'kill', '--json'], {timeout: 60_000})
    expect(killed.code, killed.stderr).toBe(0)
    expect(killed.json).toMatchObject({action: 'kill', status: 'killed', via: 'srun', job_id: job, settled: true})
    expect(killed.json.fallback).toBeUndefined()
    expect(readJson(join(launched.state_dir, 'result.json'))).toMatchObject({status: 'killed', reason: 'kill'})
    await waitFor(() => liveInSqueue(job) === '', 30_000, 'the job out of squeue')
    expect(findRunProcesses({rootPids: [], pgids: [], runInstanceId: launched.run_instance_id})).toEqual([])
  })

  it('kill when no job step can start (srun not on PATH): scancel ends the job and the Run is killed', async () => {
    const h = home()
    const launched = submit(h, ['--name', 'nosrun', '--', 'sh', '-c', 'sleep 300 & sleep 300'])
    const job = launched.executor.job_id
    await running(h, 'nosrun')
    // A PATH with Slurm's other commands but no srun, for this one control call.
    const bin = mkdtempSync(join(tmpdir(), 'actors-no-srun-'))
    onTestFinished(() => rmSync(bin, {recursive: true, force: true}))
    for (const command of ['squeue', 'scontrol', 'scancel', 'sinfo']) {
      symlinkSync(
        spawnSync('sh', ['-c', `command -v ${command}`], {encoding: 'utf8'}).stdout.trim(),
        join(bin, command),
      )
    }
    const killed = actors(h, ['control', 'nosrun', 'kill', '--json'], {timeout: 60_000, env: {PATH: bin}})
    expect(killed.code, killed.stderr).toBe(0)
    expect(killed.json).toMatchObject({action: 'kill', status: 'killed', via: 'slurm', job_id: job, settled: true})
    expect(killed.json.fallback).toMatch(/no job step could start .*srun ENOENT; scancel/)
    expect(readJson(join(launched.state_dir, 'result.json'))).toMatchObject({status: 'killed', reason: 'kill'})
    // Killed from outside its tree: a wait counts it without a row (and exits 0).
    const waited = actors(h, ['wait', '--json', '--timeout', '10s'])
    expect(waited.code).toBe(0)
    expect(waited.json).toMatchObject({rows: [], stopped_runs: [{run: 'nosrun', status: 'killed'}]})
    await waitFor(() => liveInSqueue(job) === '', 30_000, 'the job out of squeue')
    expect(findRunProcesses({rootPids: [], pgids: [], runInstanceId: launched.run_instance_id})).toEqual([])
  })

  it('stop ends the Run cancelled and the job with it', async () => {
    const h = home()
    const launched = submit(h, ['--name', 'stopme', '--', 'sleep', '300'])
    await running(h, 'stopme')
    const stopped = actors(h, ['control', 'stopme', 'stop', '--json'], {timeout: 60_000})
    expect(stopped.code, stopped.stderr).toBe(0)
    expect(stopped.json).toMatchObject({action: 'stop', status: 'cancelled', settled: true})
    expect(readJson(join(launched.state_dir, 'result.json'))).toMatchObject({status: 'cancelled', reason: 'stop'})
    // Stopped from outside its tree: a wait counts it without a row.
    const waited = actors(h, ['wait', '--json', '--timeout', '10s'])
    expect(waited.json).toMatchObject({rows: [], stopped_runs: [{run: 'stopme', status: 'cancelled'}]})
    await waitFor(
      () => !['RUNNING', 'COMPLETING', 'PENDING'].includes(jobState(launched.executor.job_id)),
      30_000,
      'the job gone',
    )
    expect(findRunProcesses({rootPids: [], pgids: [], runInstanceId: launched.run_instance_id})).toEqual([])
  })

  it('reading a Slurm Run, and its supervisor on the node, never evaluate the execa bundle that submitting loads', async () => {
    // dist/execa.cjs costs about 30 ms an invocation (src/lib/base/platform/execa.ts): squeue and scontrol show go through
    // node:child_process. The Run is submitted from a copy of the package (sbatch goes through execa), whose bundle
    // is then removed: its supervisor, its inspect and its wait must not need it.
    const h = home()
    const pkg = packageWithout([])
    onTestFinished(() => removeDir(pkg))
    const lean = (args: string[]) =>
      spawnSync(process.execPath, [join(pkg, 'bin', 'actors'), ...args], {
        env: cliEnv(h),
        encoding: 'utf8',
        timeout: 70_000,
      })
    const launched = JSON.parse(lean(['run', '--on', 'slurm', '--json', '--name', 'lean', '--', 'sleep', '300']).stdout)
    jobs.push(launched.executor.job_id)
    rmSync(join(pkg, 'dist', 'execa.cjs'))
    await waitFor(() => JSON.parse(lean(['inspect', 'lean', '--json']).stdout).status === 'running', 30_000, 'running')
    // Ended from outside: the supervisor asks Slurm whether it is a time limit or a cancel, and records cancelled.
    expect(spawnSync('scancel', [launched.executor.job_id]).status).toBe(0)
    const waited = lean(['wait', 'lean', '--json', '--timeout', '60s'])
    expect(waited.stderr).toBe('')
    expect(JSON.parse(waited.stdout).rows[0]).toMatchObject({run: 'lean', status: 'cancelled'})
    // Recorded by the supervisor itself (`stop`), not settled by a reader after it died (`slurm_cancelled`).
    expect(readJson(join(launched.state_dir, 'result.json'))).toMatchObject({status: 'cancelled', reason: 'stop'})
    // The copy really lacks it: what goes through execa fails there.
    expect(lean(['run', '--on', 'slurm', '--json', '--', 'true']).status).not.toBe(0)
  })

  it('scancel from outside: the supervisor records cancelled; a killed batch script is settled exited with the Slurm state', async () => {
    const h = home()
    const a = submit(h, ['--name', 'cancelled', '--', 'sleep', '300'])
    const b = submit(h, ['--name', 'lost', '--', 'sleep', '300'])
    await running(h, 'cancelled')
    await running(h, 'lost')
    expect(spawnSync('scancel', [a.executor.job_id]).status).toBe(0)
    expect(spawnSync('scancel', ['--batch', '--signal=KILL', b.executor.job_id]).status).toBe(0)
    const waited = actors(h, ['wait', 'cancelled', 'lost', '--json', '--timeout', '60s'], {timeout: 70_000})
    const rows = Object.fromEntries(waited.json.rows.map((r: any) => [r.run, r.status]))
    expect(rows).toEqual({cancelled: 'cancelled', lost: 'exited'})
    expect(waited.code).toBe(1) // exited makes wait exit 1 (SPEC: Exit codes)
    expect(readJson(join(b.state_dir, 'result.json'))).toMatchObject({status: 'exited', executor_state: 'FAILED'})
  })

  it('a timeout fails the Run with no process left; the job time limit is timeout plus kill_grace, in minutes', async () => {
    const h = home()
    const launched = submit(h, ['--name', 'slow', '--timeout', '2s', '--', 'sleep', '300'])
    const job = launched.executor.job_id
    expect(scontrolField(job, 'TimeLimit')).toBe('00:01:00')
    const waited = actors(h, ['wait', 'slow', '--json', '--timeout', '60s'], {timeout: 70_000})
    expect(waited.code).toBe(1)
    expect(readJson(join(launched.state_dir, 'result.json'))).toMatchObject({status: 'failed', reason: 'timeout'})
    await waitFor(() => !['RUNNING', 'COMPLETING'].includes(jobState(job)), 30_000, 'the job gone')
    expect(findRunProcesses({rootPids: [], pgids: [], runInstanceId: launched.run_instance_id})).toEqual([])
  })

  it('a declared action reaches the service on the node', async () => {
    const serviceUrl = `file://${join(ROOT, 'dist', 'service.js')}`
    const service = `import {serveControlEndpoint} from '${serviceUrl}'\nlet n = 0\nawait serveControlEndpoint({handle: async ({action}) => (action === 'ping' ? {pong: ++n, job: process.env.SLURM_JOB_ID} : {ok: false, error: 'no'})})\n`
    const {home: h, recipes} = homeWithRecipes({
      'svc.yaml': "template: [node, '{recipe_dir}/svc.mjs']\ncontrol: [ping]\nexecutor: {kind: slurm}\n",
    })
    try {
      writeFileSync(join(recipes, 'svc.mjs'), service)
      const r = actors(h, ['run', 'svc', '--name', 'svc', '--recipes', recipes, '--json'])
      expect(r.code, r.stderr).toBe(0)
      jobs.push(r.json.executor.job_id)
      await waitFor(() => existsSync(join(r.json.state_dir, 'control-endpoint.json')), 30_000, 'the service endpoint')
      const ping = actors(h, ['control', 'svc', 'ping', '--json'])
      expect(ping.code, ping.stderr).toBe(0)
      expect(ping.json).toMatchObject({
        handled_by: 'service',
        reply: {ok: true, pong: 1, job: r.json.executor.job_id},
        via: 'srun',
      })
      const stop = actors(h, ['control', 'svc', 'stop', '--json'], {timeout: 60_000})
      expect(stop.json?.status, stop.stderr).toBe('cancelled')
    } finally {
      removeHome(h)
    }
  })

  it('a Recipe executor submits with its sbatch options; --on local overrides it; a bad field is refused', async () => {
    const {home: h, recipes} = homeWithRecipes({
      'job.yaml':
        'template: [echo, from-recipe]\nexecutor: {kind: slurm, cpus: 1, time: 2m, sbatch_args: ["--comment=actors-test"]}\n',
      'bad.yaml': 'template: [echo]\nexecutor: {kind: pbs}\n',
      'nowhere.yaml': 'template: [echo]\nexecutor: {kind: slurm, partition: no-such-partition}\n',
    })
    try {
      const r = actors(h, ['run', 'job', '--recipes', recipes, '--json'])
      expect(r.code, r.stderr).toBe(0)
      const job = r.json.executor.job_id
      jobs.push(job)
      expect(r.json.executor).toMatchObject({kind: 'slurm', cpus: 1, time: '2m'})
      expect(scontrolField(job, 'TimeLimit')).toBe('00:02:00')
      expect(scontrolField(job, 'Comment')).toBe('actors-test')
      const waited = actors(h, ['wait', r.json.run, '--json', '--timeout', '60s'], {timeout: 70_000})
      expect(waited.json.rows[0]).toMatchObject({status: 'done', output: 'from-recipe\n'})

      const local = actors(h, ['run', 'job', '--recipes', recipes, '--on', 'local', '--wait', '--json'])
      expect(local.code, local.stderr).toBe(0)
      expect(readJson(join(h, 'runs', local.json.rows[0].run, 'run.json')).executor).toEqual({kind: 'local'})

      const bad = actors(h, ['run', 'bad', '--recipes', recipes])
      expect(bad.code).toBe(2)
      expect(bad.stderr).toContain('field "executor.kind" "pbs" is not local or slurm')

      // Slurm refuses the job: a failed Run carrying sbatch's message, exit 1, no stack trace.
      const refused = actors(h, ['run', 'nowhere', '--recipes', recipes, '--json'])
      expect(refused.code).toBe(1)
      expect(refused.json).toMatchObject({status: 'failed', error: expect.stringMatching(/invalid partition/i)})
      expect(refused.stderr).not.toMatch(/internal error|\n\s+at /)
      expect(readJson(join(refused.json.state_dir, 'result.json'))).toMatchObject({
        status: 'failed',
        reason: 'submit_failed',
      })
    } finally {
      removeHome(h)
    }
  })

  it('refuses a bad --on or ACTORS_EXECUTOR (exit 2) and a missing sbatch (exit 2), creating nothing', () => {
    const h = home()
    const bad = actors(h, ['run', '--on', 'moon', '--', 'true'])
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain('--on "moon" is not an executor')
    expect(bad.stderr).toContain('--on local or --on slurm')
    const env = actors(h, ['run', '--', 'true'], {env: {ACTORS_EXECUTOR: 'moon'}})
    expect(env.code).toBe(2)
    expect(env.stderr).toContain('ACTORS_EXECUTOR "moon" is not an executor')
    const missing = actors(h, ['run', '--on', 'slurm', '--json', '--', 'true'], {env: {PATH: '/nonexistent'}})
    expect(missing.code).toBe(2)
    expect(missing.stderr).toContain('sbatch not found on PATH')
    expect(missing.json.error.fix).toContain('--on local')
    expect(existsSync(join(h, 'runs')) ? readdirSync(join(h, 'runs')) : []).toEqual([])
  })

  it('through Slurm itself when no step can start: a pending job is queued and stop cancels it; a suspended one is paused and resume continues it', async () => {
    const {home: h, recipes} = homeWithRecipes({
      'held.yaml': 'template: ["true"]\nexecutor: {kind: slurm, sbatch_args: [--hold]}\n',
    })
    onTestFinished(() => removeHome(h))
    // Submitted held: the job stays PENDING.
    const held = submit(h, ['held', '--name', 'held', '--recipes', recipes])
    expect(jobState(held.executor.job_id)).toBe('PENDING')
    expect(status(h, 'held')).toBe('queued')
    const pause = actors(h, ['control', 'held', 'pause'])
    expect(pause.code).toBe(3)
    expect(pause.stderr).toContain('is queued')
    const stop = actors(h, ['control', 'held', 'stop', '--json'], {timeout: 60_000})
    expect(stop.code, stop.stderr).toBe(0)
    expect(stop.json).toMatchObject({status: 'cancelled', via: 'slurm', settled: true})
    expect(readJson(join(held.state_dir, 'result.json'))).toMatchObject({
      status: 'cancelled',
      reason: 'stop',
      executor_state: 'CANCELLED',
    })

    const tick = submit(h, ['--name', 'susp', '--', 'sh', '-c', 'while true; do echo tick; sleep 0.1; done'])
    await running(h, 'susp')
    expect(spawnSync('scontrol', ['suspend', tick.executor.job_id]).status).toBe(0)
    expect(status(h, 'susp')).toBe('paused')
    const resumed = actors(h, ['control', 'susp', 'resume', '--json'])
    expect(resumed.code, resumed.stderr).toBe(0)
    // Slurm resumes the job (every step and the supervisor), then a step on the node writes `running`.
    expect(resumed.json).toMatchObject({status: 'running', via: 'srun', job_state: 'RUNNING', changed: true})
    expect(jobState(tick.executor.job_id)).toBe('RUNNING')
    const before = lines(tick.state_dir)
    await waitFor(() => lines(tick.state_dir) > before + 3, 15_000, 'ticks after scontrol resume')
  })

  it('ACTORS_EXECUTOR=slurm sends a Run to Slurm; a child it launches runs local to the node, tied to the job', async () => {
    const h = home()
    const r = actors(
      h,
      [
        'run',
        '--name',
        'parent',
        '--json',
        '--',
        'sh',
        '-c',
        'actors run --name child --json -- echo child-output && actors wait child --json',
      ],
      {env: {ACTORS_EXECUTOR: 'slurm'}},
    )
    expect(r.code, r.stderr).toBe(0)
    jobs.push(r.json.executor.job_id)
    const waited = actors(h, ['wait', 'parent', '--json', '--timeout', '60s'], {timeout: 70_000})
    // The parent's own `wait` collected (and reported) its child; the outer wait gets the parent.
    expect(waited.json.rows[0]).toMatchObject({run: 'parent', status: 'done'})
    expect(actors(h, ['inspect', 'child', '--json']).json).toMatchObject({
      status: 'done',
      parent: 'parent',
      executor: 'local',
    })
    const child = readJson(join(h, 'runs', 'child', 'run.json'))
    expect(child).toMatchObject({
      parent: {run: 'parent'},
      executor: {kind: 'local', slurm_job_id: r.json.executor.job_id},
    })
    expect(readFileSync(join(h, 'runs', 'child', 'stdout.log'), 'utf8')).toBe('child-output\n')
  })

  it('stopping a Slurm Run ends its descendants that run in jobs of their own', async () => {
    const h = home()
    const r = submit(h, [
      '--name',
      'boss',
      '--',
      'sh',
      '-c',
      'actors run --on slurm --name worker -- sleep 300 && sleep 300',
    ])
    await waitFor(
      () =>
        existsSync(join(h, 'runs', 'worker', 'run.json')) &&
        readJson(join(h, 'runs', 'worker', 'run.json')).executor?.job_id,
      30_000,
      'the worker submitted from inside the job',
    )
    const worker = readJson(join(h, 'runs', 'worker', 'run.json')).executor.job_id
    jobs.push(worker)
    expect(worker).not.toBe(r.executor.job_id)
    const stop = actors(h, ['control', 'boss', 'stop', '--json'], {timeout: 90_000})
    expect(stop.code, stop.stderr).toBe(0)
    expect(stop.json.status).toBe('cancelled')
    expect(stop.json.descendants).toMatchObject({ended: ['worker']})
    expect(readJson(join(h, 'runs', 'worker', 'result.json')).status).toBe('cancelled')
    await waitFor(
      () => !['RUNNING', 'COMPLETING', 'PENDING'].includes(jobState(worker)),
      30_000,
      "the worker's job gone",
    )
  })

  it('a job Slurm has forgotten, without a result, is settled exited on the next read', () => {
    const h = home()
    const launched = actors(h, ['run', '--name', 'ghost', '--json', '--', 'true'])
    expect(launched.code).toBe(0)
    const dir = launched.json.state_dir
    actors(h, ['wait', 'ghost', '--json'])
    const meta = readJson(join(dir, 'run.json'))
    // The same Run as a Slurm Run whose job (an id Slurm never gave out) left nothing behind.
    writeFileSync(
      join(dir, 'run.json'),
      JSON.stringify({...meta, status: 'running', executor: {kind: 'slurm', job_id: '987654321'}}),
    )
    spawnSync('rm', [join(dir, 'result.json')])
    const seen = actors(h, ['inspect', 'ghost', '--json']).json
    expect(seen).toMatchObject({status: 'exited', result: {reason: 'job_forgotten', executor_state: null}})
  })
})
