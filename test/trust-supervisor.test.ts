/**
 * A Run cannot outlive its timeout by disabling its own supervisor (issue 35,
 * red-team pass 3 H1: the timeout lives in the supervisor). A Run that
 * SIGSTOPped its supervisor, or killed it and recorded a stand-in whose
 * command line read `… dist/supervisor.cjs DIR`, read `running` for ever and
 * was never timed out. Readers now continue a stopped supervisor, and count
 * as a supervisor only node running the supervisor script for that dir.
 * A supervisor lost that way is not a lost Run (SPEC: Supervision): a new one
 * takes the Run over, and its timeout still ends it. The command's parent is
 * the unit's wrapper, which records its end: the supervisor is its parent.
 */
import {spawnSync} from 'node:child_process'
import {existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync} from 'node:fs'
import {dirname, join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {discoverCgroupBases} from '../src/lib/kernel/containment/cgroup-fs.js'
import {actors, homesPerTest, processAlive, readJson, waitFor, CONTAINMENT_MODES} from './helpers.js'

const home = homesPerTest('actors-trust-supervisor-')

/** sh: the supervisor's pid, from the command (its parent is the unit's wrapper, whose parent is the supervisor). */
const SUPERVISOR_SH = `$(cut -d' ' -f4 /proc/$PPID/stat)`
/** perl: the same, as `$sup`. */
const SUPERVISOR_PERL =
  'open(my $ps, "<", "/proc/" . getppid() . "/stat") or die; my $pst = <$ps>; $pst =~ s/.*\\) //s; my $sup = 0 + (split / /, $pst)[1];'

/**
 * Node code for the Run's command: SIGKILL its supervisor (its parent), start
 * a stand-in named as a supervisor of this dir, record that process as the
 * Run's supervisor in run.json, write the pids to the file named by its last
 * argument, and idle. The stand-in (`tail`) is GNU tail given the script
 * path, the dir and `-F` (it waits for missing files for ever) under the
 * name `node`; or (`node`) node itself running a file of the Run's own at a
 * path ending in `dist/supervisor.cjs`; or (`adopter`) the same file as an
 * adopting supervisor (`... adopt`), with no environment, in a session of
 * its own: no marker, no group, no recorded command ties it to the Run.
 */
function standIn(fake: 'tail' | 'node' | 'adopter'): string {
  const own = (args: string, env: string) =>
    `(fs.mkdirSync(d+'/x/dist',{recursive:true}),fs.writeFileSync(d+'/x/dist/supervisor.cjs','setInterval(()=>{},1e6)'),cp.spawn(process.execPath,[d+'/x/dist/supervisor.cjs',d,${args}],{detached:true,stdio:'ignore'${env}}))`
  const spawn =
    fake === 'tail'
      ? "cp.spawn('tail',['/x/dist/supervisor.cjs',d,'local','5000','-F'],{argv0:'node',detached:true,stdio:'ignore'})"
      : fake === 'node'
        ? own("'local','5000'", '')
        : own("'local','5000','0','adopt'", ',env:{}')
  return [
    "const fs=require('fs'),cp=require('child_process'),d=process.env.ACTORS_STATE_DIR",
    "const sup=Number(fs.readFileSync('/proc/'+process.ppid+'/stat','utf8').split(') ')[1].split(' ')[1])",
    "process.kill(sup,'SIGKILL')",
    `const s=${spawn}`,
    "const st=fs.readFileSync('/proc/'+s.pid+'/stat','utf8'),start=st.slice(st.lastIndexOf(')')+2).split(' ')[19]",
    "const boot=fs.readFileSync('/proc/sys/kernel/random/boot_id','utf8').trim()",
    "const f=d+'/run.json',m=JSON.parse(fs.readFileSync(f,'utf8'))",
    'm.pid=s.pid;m.process_identity={pid:s.pid,start,boot}',
    "fs.writeFileSync(f+'.x',JSON.stringify(m));fs.renameSync(f+'.x',f)",
    'fs.writeFileSync(process.argv[process.argv.length-1],JSON.stringify([process.pid,s.pid]))',
    'setInterval(()=>{},1e6)',
  ].join(';')
}

/** Ask `inspect` (a reader) about Run `v` until it no longer reads live; its final JSON. */
async function inspectUntilEnded(h: string, within: number): Promise<Record<string, unknown>> {
  return waitFor(
    () => {
      const r = actors(h, ['inspect', 'v', '--json'])
      return r.json && !['running', 'paused', 'queued'].includes(r.json.status) ? r.json : undefined
    },
    within,
    'the Run to end',
  )
}

describe.each(CONTAINMENT_MODES)('a Run that disables its own supervisor ($mode)', ({mode, env, skip}) => {
  it.skipIf(skip)(
    'one that SIGSTOPs it is still timed out, once anything reads it',
    async () => {
      const h = home()
      const r = actors(
        h,
        [
          'run',
          '--name',
          'v',
          '--timeout',
          '2s',
          '--json',
          '--',
          'sh',
          '-c',
          `kill -STOP ${SUPERVISOR_SH}; exec sleep 300`,
        ],
        {env},
      )
      expect(r.code, r.stderr).toBe(0)
      try {
        const ended = await inspectUntilEnded(h, 20_000)
        expect(ended).toMatchObject({status: 'failed', result: {reason: 'timeout'}})
      } finally {
        actors(h, ['control', 'v', 'kill'])
      }
    },
    40_000,
  )

  // PTRACE_ATTACH through perl's syscall (perl-base is on every Debian): x86-64's number for ptrace is 101.
  // `holding`: the Run's lock is first made to name the supervisor, as if the Run had caught it holding the lock.
  for (const holding of process.arch === 'x64' ? [false, true] : [])
    it.skipIf(skip)(
      `one that ptraces it (it cannot be continued)${holding ? ', holding the Run lock' : ''}: taken over, and timed out`,
      async () => {
        const h = home()
        // Once the supervisor has recorded the command and let go of the Run's lock (it then only waits), as a Run
        // would time it: readers continue or kill a supervisor the Run holds before they wait for its lock.
        const recorded =
          'sub recorded { return 0 if -l "$ENV{ACTORS_STATE_DIR}/.lock"; open(my $f, "<", "$ENV{ACTORS_STATE_DIR}/run.json") or return 0; local $/; <$f> =~ /children_processes/ }'
        const plant =
          'open(my $s, "<", "/proc/$sup/stat") or die; my $st = <$s>; $st =~ s/.*\\) //s; my $start = (split / /, $st)[19]; open(my $b, "<", "/proc/sys/kernel/random/boot_id") or die; chomp(my $boot = <$b>); symlink(sprintf(\'{"pid":%d,"start":"%s","boot":"%s"}\', $sup, $start, $boot), "$ENV{ACTORS_STATE_DIR}/.lock") or die "lock: $!";'
        const attach = `${SUPERVISOR_PERL} ${recorded} select(undef, undef, undef, 0.05) until recorded(); ${holding ? plant : ''} syscall(101, 16, $sup, 0, 0) == 0 or die "ptrace: $!"; sleep 300`
        const r = actors(h, ['run', '--name', 'v', '--timeout', '4s', '--json', '--', 'perl', '-e', attach], {env})
        expect(r.code, r.stderr).toBe(0)
        try {
          // A link to no file: lstat, not existsSync.
          if (holding)
            await waitFor(
              () => lstatSync(join(h, 'runs', 'v', '.lock'), {throwIfNoEntry: false}),
              10_000,
              'the planted lock',
            )
          const began = Date.now()
          // Killed by the reader that found it traced; a new supervisor takes the Run over (SPEC: Supervision).
          await waitFor(
            () => actors(h, ['inspect', 'v', '--json']).json && readJson(join(h, 'runs', 'v', 'run.json')).adopted_at,
            10_000,
            'the Run taken over',
          )
          // Not the 30 s a lock held by a live process is waited for.
          expect(Date.now() - began).toBeLessThan(10_000)
          const ended = await inspectUntilEnded(h, 15_000)
          expect(ended).toMatchObject({status: 'failed', result: {reason: 'timeout'}})
        } finally {
          actors(h, ['control', 'v', 'kill'])
        }
      },
      40_000,
    )

  // A tracer that cut every tie to the Run (its own session, parent pid 1, no environment) cannot be told from
  // someone else's debugger, so no reader kills it; the Run's timeout is still enforced once it is overdue.
  for (const _ of mode === 'tracked' && process.arch === 'x64' ? [1] : [])
    it.skipIf(skip)(
      'one that has an untied tracer hold it is still timed out once overdue, by whoever reads it',
      async () => {
        const h = home()
        const tracerPid = join(h, 'tracer.pid')
        const recorded =
          'sub recorded { my $d = $ARGV[0]; return 0 if -l "$d/.lock"; open(my $f, "<", "$d/run.json") or return 0; local $/; <$f> =~ /children_processes/ }'
        const tracer = `${recorded} open(my $p, ">", $ARGV[2]) or die; print $p $$; close $p; select(undef, undef, undef, 0.05) until recorded(); syscall(101, 16, 0 + $ARGV[1], 0, 0) == 0 or die "ptrace: $!"; sleep 300`
        const run = `use POSIX; ${SUPERVISOR_PERL} if (fork() == 0) { POSIX::setsid(); exec("env", "-i", "/usr/bin/perl", "-e", $ARGV[0], $ENV{ACTORS_STATE_DIR}, $sup, $ARGV[1]) if fork() == 0; exit 0 } sleep 300`
        const r = actors(
          h,
          ['run', '--name', 'v', '--timeout', '2s', '--json', '--', 'perl', '-e', run, tracer, tracerPid],
          {env},
        )
        expect(r.code, r.stderr).toBe(0)
        try {
          const began = Date.now()
          const ended = await inspectUntilEnded(h, 40_000)
          expect(ended).toMatchObject({status: 'failed', result: {reason: 'timeout'}})
          // Overdue: its 2 s timeout, the 5 s kill grace and the room left for both (overdue.ts), not sooner.
          expect(Date.now() - began).toBeGreaterThan(8_000)
          const supervisor = (r.json as {pid: number}).pid
          await waitFor(() => !processAlive(supervisor), 5_000, 'the held supervisor to be gone')
        } finally {
          actors(h, ['control', 'v', 'kill'])
          if (existsSync(tracerPid)) spawnSync('kill', ['-9', readFileSync(tracerPid, 'utf8')])
        }
      },
      60_000,
    )

  // Moving a process to a cgroup of one's own needs write access there: root here (CI runs as root).
  for (const _ of mode === 'cgroup' && process.getuid?.() === 0 ? [1] : [])
    it.skipIf(skip)(
      'one that freezes it in a cgroup of its own is still timed out, once anything reads it',
      async () => {
        const h = home()
        const base = discoverCgroupBases()!.unified
        const freeze = `d='${base}'/actors-test-freeze-$$; mkdir "$d" && echo ${SUPERVISOR_SH} > "$d/cgroup.procs" && echo 1 > "$d/cgroup.freeze" && exec sleep 300`
        const r = actors(h, ['run', '--name', 'v', '--timeout', '2s', '--json', '--', 'sh', '-c', freeze], {env})
        expect(r.code, r.stderr).toBe(0)
        try {
          const ended = await inspectUntilEnded(h, 20_000)
          expect(ended).toMatchObject({status: 'failed', result: {reason: 'timeout'}})
        } finally {
          actors(h, ['control', 'v', 'kill'])
          for (const name of readdirSync(base).filter((n) => n.startsWith('actors-test-freeze-'))) {
            try {
              rmdirSync(join(base, name))
            } catch {}
          }
        }
      },
      40_000,
    )

  // node running a file of the Run's own is told apart by its cgroup, and (tracked too) by the Run's marker it carries.
  for (const fake of ['tail', 'node', 'adopter'] as const)
    it.skipIf(skip)(
      `one that kills it and records a stand-in (${fake}): taken over, and its processes ended at its timeout`,
      async () => {
        const h = home()
        const pidsFile = join(h, 'pids')
        const r = actors(
          h,
          ['run', '--name', 'v', '--timeout', '3s', '--json', '--', process.execPath, '-e', standIn(fake), pidsFile],
          {env},
        )
        expect(r.code, r.stderr).toBe(0)
        const pids = await waitFor(
          () => {
            try {
              return JSON.parse(readFileSync(pidsFile, 'utf8')) as number[]
            } catch {
              return undefined
            }
          },
          10_000,
          'the stand-in',
        )
        try {
          const ended = await inspectUntilEnded(h, 20_000)
          expect(ended).toMatchObject({status: 'failed', result: {reason: 'timeout'}})
          expect(readJson(join(h, 'runs', 'v', 'run.json')).adopted_at).toBeDefined()
          await waitFor(
            // The env-less adopter left every tie to the Run (tracked): only its command is the Run's to end.
            () => pids.slice(0, fake === 'adopter' ? 1 : 2).every((pid) => !processAlive(pid)) || undefined,
            10_000,
            "the Run's processes to end",
          )
        } finally {
          actors(h, ['control', 'v', 'kill'])
          for (const pid of pids) {
            try {
              process.kill(pid, 'SIGKILL')
            } catch {}
          }
          writeFileSync(pidsFile, '[]')
        }
      },
      40_000,
    )

  it.skipIf(skip)(
    'one whose command becomes a stand-in with no environment: its own supervisor is found again, and kill ends it',
    async () => {
      const h = home()
      const pidFile = join(h, 'pid')
      // The command execs, environment dropped, into node running a file of its own named dist/supervisor.cjs for
      // this dir, which records itself as the Run's supervisor (the real one lives on as its parent).
      const code = [
        "const fs=require('fs'),d=process.argv[2],f=d+'/run.json',m=JSON.parse(fs.readFileSync(f,'utf8'))",
        "const st=fs.readFileSync('/proc/self/stat','utf8'),start=st.slice(st.lastIndexOf(')')+2).split(' ')[19]",
        "m.pid=process.pid;m.process_identity={pid:process.pid,start,boot:fs.readFileSync('/proc/sys/kernel/random/boot_id','utf8').trim()}",
        "fs.writeFileSync(f+'.x',JSON.stringify(m));fs.renameSync(f+'.x',f);fs.writeFileSync(process.argv[5],String(process.pid))",
        'setInterval(()=>{},1e6)',
      ].join(';')
      const script = join(h, 'x', 'dist', 'supervisor.cjs')
      mkdirSync(dirname(script), {recursive: true})
      writeFileSync(script, code)
      const dir = join(h, 'runs', 'v')
      const argv = ['env', '-i', process.execPath, script, dir, 'local', '5000', pidFile]
      const launched = actors(h, ['run', '--name', 'v', '--json', '--', ...argv], {env})
      expect(launched.code).toBe(0)
      const pid = await waitFor(() => existsSync(pidFile) && Number(readFileSync(pidFile, 'utf8')), 10_000, 'it')
      try {
        // Believed, it kept kill from ending it (tracked: the recorded supervisor is never signalled) and pause said paused.
        // The real supervisor, the parent of the command's wrapper, is the Run's again: no second one starts.
        await waitFor(
          () => actors(h, ['inspect', 'v', '--json']).json && readJson(join(dir, 'run.json')).pid === launched.json.pid,
          10_000,
          'the real supervisor named again',
        )
        expect(actors(h, ['inspect', 'v', '--json']).json.status).toBe('running')
        expect(readJson(join(dir, 'run.json')).adopted_at).toBeUndefined()
        expect(actors(h, ['control', 'v', 'kill'], {env}).code).toBe(0)
        await waitFor(() => !processAlive(pid) || undefined, 10_000, 'the stand-in to end')
        expect(actors(h, ['inspect', 'v', '--json']).json.status).toBe('killed')
      } finally {
        actors(h, ['control', 'v', 'kill'], {env})
        try {
          process.kill(pid, 'SIGKILL')
        } catch {}
      }
    },
    40_000,
  )
})
