/** The plain faces of a launch (`actors run`): the Run id on stdout, how it went on stderr. */
import type {LaunchResult} from '../../services/launch/launch.js'
import type {TextSinks} from './result.js'

/** A started (or queued) Run. */
export function plainLaunched(launched: LaunchResult, to: TextSinks): void {
  to.out(`${launched.run}\n`)
  to.note(`actors: ${launched.status} ${launched.run} in ${launched.state_dir}\n`)
}

/**
 * A launch that reused a finished Run's id (`run --name X` over an earlier X)
 * says so, on stderr in every mode: it became generation N of X, and the
 * earlier ones are history.
 */
export function generationNote(launched: LaunchResult): string {
  if (!(launched.generation > 1)) return ''
  const id = launched.run
  return `actors: this is generation ${launched.generation} of ${id} (the id was taken by a finished Run); the earlier ones: actors inspect ${id} --generations\n`
}

/** A Run that exists but never started (Slurm refused the job): its id (why is said in the notes, in every mode). */
export function plainLaunchFailed(launched: LaunchResult, to: TextSinks): void {
  to.out(`${launched.run}\n`)
}

/** Why a launched Run never started, on stderr in every mode. */
export function launchFailedNote(launched: LaunchResult): string {
  return `actors: ${launched.run} failed to start: ${launched.error}\n  fix: see \`actors logs ${launched.run} --stderr\` and docs/slurm.md\n`
}

/** `run --wait`: said on stderr before waiting (not under --json). */
export function waitingNote(launched: LaunchResult): string {
  return `actors: ${launched.status} ${launched.run}; waiting for it to end\n`
}
