/**
 * A Slurm Run's job found from what Slurm and the run index know, not from
 * its state dir (issue 35: nothing in a state dir can block a kill). Every
 * job the kernel submits is named `actors:<run>@<instance>`
 * (slurm-submit.ts), and the run index keeps a marker `<run>@<instance>` per
 * instance, so the jobs of Run `id` are the ones Slurm lists under a name
 * that one of this state root's markers for `id` makes: another state root's
 * Run of the same id has other instances.
 */
import {join} from 'node:path'
import {runDir} from '../../base/platform/home.js'
import {readBoundedText} from '../../base/platform/state-files.js'
import {listIndex} from '../history/live-index.js'
import {parseMarker, validMarker} from '../history/index-markers.js'
import {forgetSlurmListing, onPath, runSlurmCommand} from './slurm-cli.js'

/** The job ids Slurm lists (in any live state) for Run `id` of the state root `home`. */
export function slurmJobsByFacts(home: string, id: string): string[] {
  if (!onPath('squeue')) return []
  const names = new Set<string>()
  for (const name of listIndex(home)) {
    const marker = parseMarker(name)
    if (marker && marker.id === id && validMarker(marker)) names.add(`actors:${id}@${marker.instance}`)
  }
  if (names.size === 0) return []
  const out = runSlurmCommand('squeue', ['-h', '-o', '%i|%j'])
  if (!out.ok) return []
  const jobs: string[] = []
  for (const line of out.stdout.split('\n')) {
    const bar = line.indexOf('|')
    if (bar > 0 && names.has(line.slice(bar + 1).trim())) jobs.push(line.slice(0, bar).trim())
  }
  return jobs
}

/**
 * SIGKILL every job of Run `id` Slurm lists (see slurmJobsByFacts); returns
 * the job ids cancelled. A Run whose run.json reads plainly and never names
 * Slurm is not asked about: a controller that does not answer costs squeue
 * seconds, and a kill of a damaged local Run should not wait on it.
 */
export function cancelSlurmJobsByFacts(home: string, id: string): string[] {
  if (plainlyLocal(runDir(home, id))) return []
  const jobs = slurmJobsByFacts(home, id)
  const cancelled = jobs.filter((job) => runSlurmCommand('scancel', ['--signal=KILL', job], {timeoutMs: 30_000}).ok)
  if (cancelled.length) forgetSlurmListing()
  return cancelled
}

/** Whether the Run in `dir` has a readable run.json that never mentions Slurm (an unreadable one may be a Slurm Run's). */
function plainlyLocal(dir: string): boolean {
  try {
    const text = readBoundedText(join(dir, 'run.json'), 16 * 1024 * 1024)
    return text !== undefined && !text.includes('slurm')
  } catch {
    return false
  }
}
