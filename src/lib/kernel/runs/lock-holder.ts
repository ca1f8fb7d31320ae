/**
 * Which Run a lock's holder belongs to, for a busy error (platform/file-lock.ts):
 * its cgroup says so where Runs have cgroups; only a process in no Run's
 * cgroup is taken at its environment's word (tracked containment), and the
 * note says which of the two it went by.
 */
import {basename, dirname} from 'node:path'
import type {LockHolderNote} from '../../base/platform/file-lock.js'
import {processEnvValue} from '../../base/platform/process-environ.js'
import {cgroupPathOf, runCgroupsOfPath} from '../containment/caller-cgroup.js'
import {homeKey} from '../containment/index.js'
import {parseRunUnitName} from '../containment/unit-path.js'
import {readRunMetaById} from './store.js'
import {recordsCgroup} from './unit-lineage.js'

export function lockHolderNote(pid: number, lockFile: string): LockHolderNote | undefined {
  const path = cgroupPathOf(pid)
  const cgroups = path === undefined ? [] : runCgroupsOfPath(path)
  // The innermost Run-named cgroup whose Run records it: a Run may make cgroups below its own and name
  // them after another Run, and a note naming that other Run had its user kill the wrong one.
  for (const cgroup of cgroups) {
    const run = parseRunUnitName(basename(cgroup.path))?.run
    const home = run && rootOf(lockFile, cgroup.homeKey)
    if (!run || !home) continue
    try {
      const meta = readRunMetaById(home, run)
      if (meta?.run_instance_id !== cgroup.instance || !recordsCgroup(meta, cgroup.path)) continue
    } catch {
      continue
    }
    return {what: `a process in the cgroup of Run ${run}`, fix: `end that Run (actors control ${run} kill), or retry`}
  }
  if (cgroups.length > 0)
    return {
      what: `a process in cgroup ${path}, which no Run of this state root records as its own`,
      fix: `see what runs there (cat /proc/${pid}/cgroup) and end it, or retry`,
    }
  const dir = processEnvValue(pid, 'ACTORS_STATE_DIR')
  if (!dir) return undefined
  return {
    what: `a process whose environment names the Run in ${dir}`,
    fix: `end that Run (actors control ${basename(dir)} kill), or retry`,
  }
}

/** The state root of `lockFile` whose key is `key` (the lock file lies somewhere below its root). */
function rootOf(lockFile: string, key: string): string | undefined {
  for (let dir = dirname(lockFile); dir !== dirname(dir); dir = dirname(dir)) if (homeKey(dir) === key) return dir
  return undefined
}
