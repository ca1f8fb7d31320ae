/**
 * What a Run supervised inside the state root's host (host.ts) gets from it
 * in place of a process of its own: the launcher's environment, the host's
 * signals, and the marks a reader proves its supervision by
 * (records/supervision-host.ts).
 */
import type {RunMeta} from '../../base/records/run.js'

export interface SupervisionHost {
  /** The environment the Run's command starts from: the launcher's, as a supervisor of its own would have inherited it. */
  readonly env: NodeJS.ProcessEnv
  /** Hear the signals the host is sent (SIGTERM, SIGINT, SIGHUP); returns the removal of `handler`. */
  onSignal(handler: (signal: string) => void): () => void
  /** Refuse (throw) the start of a Run whose start another supervisor already recorded: a Run is supervised once. */
  claim(current: RunMeta): void
  /** Hold the Run's state dir open: from now until `ended`, readers find this host supervising it. */
  hold(): void
  /** The Run's end is written: let go of its state dir. */
  ended(): void
  /** The Run's command started (or the Run waits for its locks, or ended first): its launcher is answered. */
  started(): void
}
