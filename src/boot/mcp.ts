/**
 * The `actors mcp` front (dist/mcp.cjs): parses and checks the invocation,
 * then loads the server with the SDK (dist/mcp-server.cjs), which serves the
 * session from its first byte. It stays small (no SDK, no zod) so that an
 * invocation it refuses costs no SDK load. Invocations it cannot parse
 * exactly as oclif would (help, bad flags) return false and go to the oclif
 * CLI, as in the fast front end.
 */
import {existsSync, readFileSync, readlinkSync} from 'node:fs'
import {join} from 'node:path'
import {reportError} from '../lib/surface/present/report-error.js'
import {mcpCommand} from '../lib/surface/cli/mcp.js'
import {parseInvocation} from '../lib/surface/cli/parse-argv.js'
import {ensureHome, resolveHome} from '../lib/base/platform/home.js'
import {guardMcpLines} from '../lib/surface/mcp/line-guard.js'
import {policyFromFlags} from '../lib/surface/mcp/policy.js'
import {packageRoot} from '../lib/base/platform/package-root.js'
import {loadBundle} from '../lib/base/platform/bundles.js'
import {nodeModule} from '../lib/base/platform/builtins.js'

type ServerBundle = typeof import('./mcp-server.js')

const TERMINAL_NOTE =
  'actors mcp: an MCP server for an AI agent host, speaking JSON-RPC on stdin and stdout; it is waiting for a client.\n' +
  '  An agent host starts it for you: see docs/mcp.md (for example `claude mcp add actors -- actors mcp --owner me`).\n' +
  '  Press Ctrl-D or Ctrl-C to quit.\n'

/** Serve `actors mcp ARGS` (argv without node, script and `mcp`); false: let oclif handle it. */
export async function run(argv: string[]): Promise<boolean> {
  const invocation = parseInvocation(mcpCommand, argv)
  if (!invocation) return false
  await serve(invocation.flags)
  return true
}

/** Serve until the client closes stdin, then end the process (Runs are detached and keep going). */
export async function serve(flags: {
  allow?: string
  'allow-adhoc'?: boolean
  owner?: string
  recipes?: string
  home?: string
}): Promise<void> {
  // stdout belongs to JSON-RPC: anything that logs (a dependency's console.log) goes to stderr.
  for (const method of ['log', 'info', 'debug'] as const) console[method] = console.error
  try {
    // Everything that can refuse the invocation happens before the SDK loads.
    const root = packageRoot()
    const version = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {version: string}).version
    const home = resolveHome(flags.home)
    const policy = policyFromFlags(flags)
    ensureHome(home)
    // Typed at a prompt, a server that waits in silence looks hung: say what it is (stderr; stdout stays JSON-RPC).
    if (stdinIsTerminal()) process.stderr.write(TERMINAL_NOTE)
    const serverFile = join(root, 'dist', 'mcp-server.cjs')
    if (!existsSync(serverFile)) throw new Error(`${serverFile} is missing: run npm run build`)
    const output = process.stdout
    // Every line is checked before the SDK reads the session (lib/surface/mcp/line-guard.ts): bad JSON, invalid
    // requests and lines over 4 MiB are answered with JSON-RPC errors there and never reach the SDK.
    const input = guardMcpLines(
      process.stdin,
      (line) => output.write(`${line}\n`),
      (text) => process.stderr.write(text),
    )
    const server = loadServer(serverFile)
    await server.serveMcp({home, policy, recipesFlag: flags.recipes, version, input, output})
  } catch (error) {
    // stdout belongs to JSON-RPC: the message goes to stderr only.
    reportError(error as Error, false, 'mcp')
  }
  // A tool call still blocked (a wait) must not keep a session without a client alive.
  process.exit()
}

/** Whether stdin is a terminal, read from /proc (node:tty would load node:net on every agent session's start). */
function stdinIsTerminal(): boolean {
  try {
    return /^\/dev\/(pts\/|tty)/.test(readlinkSync('/proc/self/fd/0'))
  } catch {
    return false
  }
}

/** dist/mcp-server.cjs, through bin/actors' code-cache loader when it lends one (see bin/actors). */
function loadServer(file: string): ServerBundle {
  return loadBundle<ServerBundle>('mcp-server', () => nodeModule().createRequire(import.meta.url)(file))
}
