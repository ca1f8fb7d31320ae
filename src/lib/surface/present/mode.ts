/**
 * The one output decision (SPEC: Commands): `--json` → JSON (one document, or
 * NDJSON for a stream); stdout not a TTY, `CI` set or `TERM=dumb` → plain
 * lines without escape codes; otherwise Ink, loaded with dynamic import()
 * only then. Only the front end (./present.ts) asks: commands return results
 * and never branch on the mode themselves.
 */
export type OutputMode = 'json' | 'plain' | 'ink'

/** Where the decision looks: the `--json` flag, whether stdout is a terminal, and the environment. */
export interface OutputContext {
  json: boolean
  /** Asked only when not --json: making process.stdout costs start-up time (a pipe loads net and stream) that a JSON answer need not pay. */
  isTTY: () => boolean | undefined
  env: NodeJS.ProcessEnv
}

/** The output mode for `context` (the whole rule; see above). */
export function decideOutput(context: OutputContext): OutputMode {
  if (context.json) return 'json'
  if (!context.isTTY()) return 'plain'
  const ci = context.env.CI
  if (ci !== undefined && ci !== '' && ci !== 'false' && ci !== '0') return 'plain'
  if (context.env.TERM === 'dumb') return 'plain'
  return 'ink'
}
