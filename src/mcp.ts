/**
 * The `actors mcp` bundle (dist/mcp.cjs): the MCP server and the SDK, loaded
 * by bin/actors for `actors mcp` only, so no other command pays for them.
 * Invocations it cannot parse exactly as oclif would (help, bad flags) return
 * false and go to the oclif CLI, as in the fast front end.
 */
import {readFileSync} from 'node:fs'
import {join} from 'node:path'
import {reportError} from './lib/cli/definition.js'
import {mcpCommand} from './lib/cli/mcp.js'
import {parseInvocation} from './lib/cli/parse-argv.js'
import {resolveHome} from './lib/home.js'
import {policyFromFlags} from './lib/mcp/policy.js'
import {serveMcp} from './lib/mcp/server.js'
import {packageRoot} from './lib/package-root.js'

/** Serve `actors mcp ARGS` (argv without node, script and `mcp`); false: let oclif handle it. */
export async function run(argv: string[]): Promise<boolean> {
  const invocation = parseInvocation(mcpCommand, argv)
  if (!invocation) return false
  await serve(invocation.flags)
  return true
}

/** Serve until the client closes stdin, then end the process (Runs are detached and keep going). */
export async function serve(flags: {allow?: string; 'allow-adhoc'?: boolean; owner?: string; recipes?: string; home?: string}): Promise<void> {
  // stdout belongs to JSON-RPC: anything that logs (a dependency's console.log) goes to stderr.
  for (const method of ['log', 'info', 'debug'] as const) console[method] = console.error
  try {
    const version = (JSON.parse(readFileSync(join(packageRoot(), 'package.json'), 'utf8')) as {version: string}).version
    await serveMcp({home: resolveHome(flags.home), policy: policyFromFlags(flags), recipesFlag: flags.recipes, version})
  } catch (error) {
    // stdout belongs to JSON-RPC: the message goes to stderr only.
    reportError(error as Error, false, 'mcp')
  }
  // A tool call still blocked (a wait) must not keep a session without a client alive.
  process.exit()
}
