/**
 * Entry point of the detached supervisor process: `node dist/supervisor.cjs
 * STATE_DIR KIND [GRACE_MS]`, or `--host HOME` for a state root's supervision host. KIND (the executor that started it: `local`,
 * `slurm`) and GRACE_MS (the launch's kill_grace) are not read here: they
 * stay in the command line, where a Run cannot rewrite them, for readers that
 * must know how the Run runs (records/supervisor-args.ts).
 * Kept separate from the CLI bundle so a live Run costs one small Node process
 * (no oclif, no ink, no execa): its memory is measured by `npm run bench`.
 */
import {installExecutors} from '../lib/kernel/executors/index.js'
import {superviseRun} from '../lib/services/supervisor/supervise.js'
import {noteSupervisorDeath} from '../lib/services/supervisor/no-space.js'
import {runSupervisionHost} from '../lib/services/supervisor/host.js'

// A SIGUSR1 is taken by a listener from this bundle's first statement on (scripts/build.mjs banner): Node would
// open its inspector, through which a Run could run code in the process that supervises its neighbours. One sent
// while Node was still starting may have asked for it already: closed once that request has been served.
closeInspectorIfOpened()

const dir = process.argv[2]
if (!dir) {
  process.stderr.write('usage: supervisor STATE_DIR\n')
  process.exit(2)
}
installExecutors()
// `--host HOME`: the state root's supervision host (host.ts), which serves until idle, or leaves at once when one serves.
if (dir === '--host') {
  const home = process.argv[3]
  if (!home) {
    process.stderr.write('usage: supervisor --host HOME\n')
    process.exit(2)
  }
  try {
    if (!runSupervisionHost(home)) process.exit(0)
  } catch (error) {
    process.stderr.write(`actors supervision host: ${(error as Error).message}\n`)
    process.exit(1)
  }
} else superviseOne(dir)

function superviseOne(dir: string): void {
  // `... GRACE_MS OVERDUE_MS adopt DEADLINE TIMEOUT`: started by a reader to take over a Run whose supervisor was lost,
  // with the attempt's deadline and timeout the reader proved (0: none), where the Run cannot rewrite them.
  const adopt = process.argv[6] === 'adopt'
  const limit = {deadline: Number(process.argv[7]) || 0, timeoutMs: Number(process.argv[8]) || 0}
  superviseRun(dir, adopt ? limit : undefined).then(
    // The end is recorded: leave now rather than when the last timer lets go, since a `wait` delivers a Run's end only
    // once its supervisor is gone (wait/proven-ends.ts).
    () => process.exit(),
    (error) => {
      process.stderr.write(`actors supervisor: ${(error as Error).message}\n`)
      noteSupervisorDeath(dir, error)
      process.exitCode = 1
    },
  )
}

/** Close the inspector if a SIGUSR1 sent before the listener opened it: at the next turn, and again a second later. */
function closeInspectorIfOpened(): void {
  const close = () => {
    const inspector = require('node:inspector') as typeof import('node:inspector')
    if (inspector.url()) inspector.close()
  }
  setImmediate(close)
  setTimeout(close, 1000).unref()
}
