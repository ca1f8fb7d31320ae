/**
 * The Run a process runs in, from facts its environment cannot change (SPEC:
 * Trees, owners and limits; issue: lineage from the unit). Under cgroup
 * containment its own cgroup names the Run instance (containment/caller-cgroup.ts);
 * under tracking, the nearest of its ancestors (itself included) that a live
 * run.json records as a Run's supervisor or command (a step wrapper: under
 * the supervision host, the nearest that is one Run's), checked by process
 * identity. The environment's ACTORS_RUN names only which Run to read first.
 * What cannot be found this way (a process that left its group, session,
 * ancestry and environment under tracking) falls back to the environment.
 */
import {readdirSync} from 'node:fs'
import {resolve} from 'node:path'
import {callerRunCgroup} from '../containment/caller-cgroup.js'
import {isStepWrapper} from '../containment/outside-runs.js'
import {indexDir, isPlainName, runDir} from '../../base/platform/home.js'
import {isSameProcess, readProcStat} from '../../base/platform/process-identity.js'
import {processEnvValue} from '../../base/platform/process-environ.js'
import type {ParentRef, RunMeta} from '../../base/records/run.js'
import {supervisorOfProcess} from '../../base/records/supervisor-args.js'
import {ancestorMetas} from './ancestors.js'
import {readRunMetaById, readRunMetaRaw} from './store.js'

/** Where the unit says the caller runs. */
export type CallerUnit =
  /** A live Run of this state root, at its current instance. */
  | {kind: 'run'; ref: ParentRef; meta: RunMeta; evidence: string}
  /** A Run's unit that is not a current Run of this state root (another root, a hidden or earlier Run). */
  | {kind: 'unknown'; instance?: string; evidence: string}

/** The unit the calling process runs in, or undefined when it is in none this process can see. */
export function callerUnit(home: string, env: NodeJS.ProcessEnv = process.env): CallerUnit | undefined {
  const cgroup = callerRunCgroup()
  const tracked = unitByAncestry(home)
  if (!cgroup) return tracked
  const evidence = `its cgroup ${cgroup.path}`
  const meta = currentRunOfInstance(home, cgroup.instance, env.ACTORS_RUN)
  if (!meta || !recordsCgroup(meta, cgroup.path)) return {kind: 'unknown', instance: cgroup.instance, evidence}
  // A tracked Run launched from inside this cgroup stays in it: the nearer Run, when it is of this one's tree.
  if (tracked?.kind === 'run' && tracked.meta.run !== meta.run) {
    if (ancestorMetas(home, tracked.meta).some((ancestor) => ancestor.run === meta.run)) return tracked
  }
  return {kind: 'run', ref: refOf(home, meta), meta, evidence}
}

/**
 * Whether the Run's record names the cgroup `path` (as /proc/<pid>/cgroup
 * writes it, relative to the hierarchy's mount) as its unit. A cgroup a
 * process made for itself and named after another Run's instance (below its
 * own, the only place it may make one) is not that Run's.
 */
export function recordsCgroup(meta: RunMeta, path: string): boolean {
  const record = meta.containment as {kind?: unknown; path?: unknown} | undefined
  return record?.kind === 'cgroup' && typeof record.path === 'string' && record.path.endsWith(path)
}

function refOf(home: string, meta: RunMeta): ParentRef {
  return {run: meta.run, run_instance_id: meta.run_instance_id, state_dir: runDir(home, meta.run)}
}

/**
 * The Run of this state root whose current instance is `instance`: the one
 * `hint` names (the environment's ACTORS_RUN) when it is, else the one the
 * run index has a live marker `<run>@<instance>` for. A marker is a hint too:
 * only run.json's instance counts.
 */
function currentRunOfInstance(home: string, instance: string, hint: string | undefined): RunMeta | undefined {
  const ids = hint && isPlainName(hint) ? [hint] : []
  try {
    const suffix = `@${instance}`
    for (const name of readdirSync(indexDir(home))) if (name.endsWith(suffix)) ids.push(name.slice(0, -suffix.length))
  } catch {}
  for (const id of ids) {
    if (!isPlainName(id)) continue
    try {
      const meta = readRunMetaById(home, id)
      if (meta?.run_instance_id === instance) return meta
    } catch {}
  }
  return undefined
}

/** Ancestors looked at before giving up (a process tree is never this deep). */
const MAX_ANCESTRY = 64

/**
 * Tracked: the nearest process up this one's parent chain (itself included)
 * that a Run's run.json records as its supervisor (`pid`, with its identity;
 * the supervisor names its state dir on its command line), else the leader
 * of this process's group or session when a Run records it as its command
 * (a command starts a session of its own: a Run taken over after its
 * supervisor died, or a double fork, still has it; its environment names
 * the run.json to check). Neither the command line nor the environment is
 * believed: only the record of the process, identity and all.
 */
function unitByAncestry(home: string): CallerUnit | undefined {
  const own = readProcStat(process.pid)
  if (!own) return undefined
  let pid = own.pid
  for (let step = 0; step < MAX_ANCESTRY && pid > 1; step++) {
    const stat = readProcStat(pid)
    if (stat === undefined) break
    const comm = stat.comm ?? ''
    const found = mayBeSupervisor(comm)
      ? supervisorRun(home, pid)
      : comm === 'sh'
        ? stepWrapperRun(home, pid)
        : undefined
    if (found) return found
    pid = stat.ppid
  }
  for (const leader of new Set([own.pgid, own.sid])) {
    const dir = leader > 1 ? processEnvValue(leader, 'ACTORS_STATE_DIR') : undefined
    const found = dir ? recordedRunProcess(home, leader, dir, false) : undefined
    if (found) return found
  }
  return undefined
}

/**
 * Whether the process's name (stat's comm) could be Node's, the program a
 * supervisor runs: only those command lines are read (one read less for
 * every shell and terminal above a launch outside any Run). Node 24 and
 * later name their main thread, and so the process, `MainThread`.
 */
function mayBeSupervisor(comm: string): boolean {
  return comm.includes('node') || comm === 'MainThread'
}

/** The Run whose supervisor `pid` is (records/supervisor-args.ts: node running dist/supervisor.cjs STATE_DIR), checked against that run.json. */
function supervisorRun(home: string, pid: number): CallerUnit | undefined {
  const supervisor = supervisorOfProcess(pid)
  return supervisor ? recordedRunProcess(home, pid, supervisor.dir, true) : undefined
}

/**
 * The Run whose step wrapper `pid` is (the unit's `/bin/sh` that runs a step and records its end), checked against
 * the run.json its environment names, which must record it as the Run's command. Under the supervision host the
 * wrapper's parent is the host, which supervises every Run of the root: the wrapper is the nearest process that
 * is this one Run's.
 */
function stepWrapperRun(home: string, pid: number): CallerUnit | undefined {
  if (!isStepWrapper(pid)) return undefined
  const dir = processEnvValue(pid, 'ACTORS_STATE_DIR')
  return dir ? recordedRunProcess(home, pid, dir, false) : undefined
}

/** The Run whose run.json in `dir` records `pid` as its supervisor (or command), as this state root sees it. */
function recordedRunProcess(home: string, pid: number, dir: string, asSupervisor: boolean): CallerUnit | undefined {
  let meta: RunMeta | undefined
  try {
    meta = readRunMetaRaw(dir)
  } catch {
    return undefined
  }
  if (!meta || !isRecordedProcess(meta, pid, asSupervisor)) return undefined
  const evidence = asSupervisor ? `its supervisor (pid ${pid})` : `its command (pid ${pid})`
  if (resolve(dir) !== runDir(home, meta.run)) return {kind: 'unknown', instance: meta.run_instance_id, evidence}
  return {kind: 'run', ref: refOf(home, meta), meta, evidence}
}

/** Whether run.json records `pid` as the Run's supervisor or one of its command processes, identity and all. */
function isRecordedProcess(meta: RunMeta, pid: number, asSupervisor: boolean): boolean {
  if (asSupervisor) return meta.pid === pid && isSameProcess(meta.process_identity)
  const records = Array.isArray(meta.children_processes) ? meta.children_processes : []
  return records.some((child) => child.pid === pid && isSameProcess(child.identity))
}
