/**
 * `actors mcp`: the kernel served to AI agents as a Model Context Protocol
 * server over stdio (SPEC: Agents over MCP), on the official TypeScript SDK
 * (`@modelcontextprotocol/server` 2). stdout carries JSON-RPC only: nothing
 * here prints, and Runs never inherit the server's stdin or stdout (their
 * supervisors start detached with stdio ignored, see launch.ts).
 *
 * This module and the SDK are bundled into dist/mcp-server.cjs, which the
 * `actors mcp` front (src/boot/mcp.ts) loads once it has checked the invocation;
 * no other command loads it.
 */
// First: zod's setting must be in place before the SDK's modules make their schemas.
import './zod-jitless.js'
import {McpServer} from '@modelcontextprotocol/server'
import {StdioServerTransport} from '@modelcontextprotocol/server/stdio'
import type {Readable, Writable} from 'node:stream'
import type {ByteSource} from './line-guard.js'
import {isActorsError} from '../../base/platform/errors.js'
import {capSyncLockWaits} from '../../base/platform/file-lock.js'
import {ensureHome} from '../../base/platform/home.js'
import {fits, resultText, tooLarge} from './bound.js'
import {inertJson} from '../../base/platform/text.js'
import {clientOwner, type McpPolicy} from './policy.js'
import {builtJsonSchemas, lazyInputSchema} from './input-schema.js'
import {guardToolParams} from './params-guard.js'
import {guardResourceUris, registerRunResources} from './resources.js'
import {shapeErrorResponses} from './rpc-errors.js'
import type {McpTool, ToolContext, ToolOutcome} from './tool.js'
import {TOOLS} from './tools.js'

export interface McpServeOptions {
  home: string
  policy: McpPolicy
  recipesFlag?: string
  version: string
  /** The session's input (stdin behind the line guard, line-guard.ts); default stdin itself. */
  input?: ByteSource
  /** Where the session's messages go; default stdout. */
  output?: NodeJS.WritableStream
}

type ToolResult = {
  content: Array<{type: 'text'; text: string}>
  structuredContent?: Record<string, unknown>
  isError?: boolean
}

/** The longest one synchronous lock wait blocks the server (tools that know their lock wait for it without blocking first). */
const SYNC_LOCK_WAIT_CAP_MS = 5000

/**
 * Serve until the client closes stdin. Resolves when the session has ended
 * (the caller exits: a wait still blocked on a vanished client must not keep
 * the process alive; its claimed batch is redelivered to the next wait).
 */
export async function serveMcp(options: McpServeOptions): Promise<void> {
  ensureHome(options.home)
  // Runs started here belong to the policy's owner: the launch kernel reads it from the environment (lineage.ts).
  process.env.ACTORS_OWNER = options.policy.owner
  // One thread serves every call of the session: a lock some Run keeps may stall it for this long at most, not 30 s.
  capSyncLockWaits(SYNC_LOCK_WAIT_CAP_MS)
  // The transport uses only events, pause, write and the end flags of the streams it is given (see ByteSource).
  const transport = new StdioServerTransport(
    (options.input ?? process.stdin) as Readable,
    (options.output ?? process.stdout) as Writable,
  )
  shapeErrorResponses(transport)
  const sent = trackResponses(transport)
  const session = new AbortController()
  const {server, resources} = createServer(options, sent, session.signal)
  const ended = new Promise<void>((resolve) => {
    server.server.onclose = () => resolve()
  })
  server.server.oninitialized = () => adoptClientOwner(server, options.policy)
  await server.connect(transport)
  guardToolParams(transport, TOOLS)
  guardResourceUris(transport)
  await ended
  session.abort()
  resources.close()
}

/** The server with every tool and resource registered, not yet connected. */
function createServer(
  options: McpServeOptions,
  sent: ResponseTracker,
  sessionSignal: AbortSignal,
): {server: McpServer; resources: {close(): void}} {
  const server = new McpServer(
    {name: 'actors', version: options.version},
    {
      capabilities: {resources: {subscribe: true, listChanged: false}, tools: {}},
      instructions:
        'actors runs background work as durable, supervised Runs. Start work with run (see recipes), collect finished work with wait ' +
        '(one bounded batch; call again after a timeout), read output with logs, act with control, look with inspect.',
    },
  )
  const built = builtJsonSchemas()
  for (const tool of TOOLS) registerTool(server, tool, built, options, sent, sessionSignal)
  return {server, resources: registerRunResources(server, options.home)}
}

/** Register one tool: input schema from its shape, results bounded, errors as tool errors with the CLI's message and fix. */
function registerTool(
  server: McpServer,
  tool: McpTool,
  built: Record<string, Record<string, unknown>>,
  options: McpServeOptions,
  sent: ResponseTracker,
  sessionSignal: AbortSignal,
): void {
  server.registerTool(
    tool.name,
    {
      title: tool.title,
      description: tool.description,
      inputSchema: lazyInputSchema(tool, built),
      annotations: {readOnlyHint: tool.readOnly ?? false, openWorldHint: false},
    },
    async (input: unknown, ctx) => {
      // A client may call before its `initialized` notification: the owner is settled from initialize's name first.
      adoptClientOwner(server, options.policy)
      const progressToken = ctx.mcpReq._meta?.progressToken
      const context: ToolContext = {
        home: options.home,
        policy: options.policy,
        recipesFlag: options.recipesFlag,
        heartbeat: (progress, message) => {
          if (progressToken === undefined) return
          ctx.mcpReq
            .notify({method: 'notifications/progress', params: {progressToken, progress, message}})
            .catch(() => {})
        },
        responseSent: () => sent.after(ctx.mcpReq.id),
        signal: AbortSignal.any([ctx.mcpReq.signal, sessionSignal]),
      }
      try {
        return toolResult(await tool.call(input as never, context))
      } catch (error) {
        return errorResult(error)
      }
    },
  )
}

/**
 * Without --owner or ACTORS_OWNER the server acts as its client
 * (policy.ts clientOwner), named by `initialize`: from then on its Runs, its
 * `wait` and its owner checks are that owner's. Settled once.
 */
function adoptClientOwner(server: McpServer, policy: McpPolicy): void {
  const client = policy.ownerFromClient ? server.server.getClientVersion() : undefined
  if (!client) return
  policy.owner = clientOwner(client.name)
  policy.ownerFromClient = false
  // The launch kernel reads the owner from the environment (lineage.ts).
  process.env.ACTORS_OWNER = policy.owner
}

/** A tool's outcome as a CallToolResult within the result cap. */
export function toolResult(outcome: ToolOutcome): ToolResult {
  const summary = outcome.error ?? outcome.summary
  let document: object = outcome.document
  if (!fits(summary, document) && outcome.bound) document = outcome.bound(document, summary)
  if (!fits(summary, document)) document = tooLarge(document, 'narrow the request (one Run, a subtree, a log page)')
  const cut = (document as {cut?: {hint?: string}}).cut
  const line = cut ? `${summary} (cut to fit 64 KiB: ${cut.hint ?? 'see cut'})` : summary
  // The text carries the result itself (hosts that show a model only text), within the same cap: a log page as it
  // is, a document as JSON whose terminal controls are escapes (JSON.stringify leaves C1 and bidi controls raw).
  const body = outcome.text && !cut ? outcome.text(document) : inertJson(JSON.stringify(document))
  return {
    content: [{type: 'text', text: resultText(line, body)}],
    structuredContent: document as Record<string, unknown>,
    ...(outcome.error ? {isError: true} : {}),
  }
}

/** A failure as a tool error: an ActorsError keeps the CLI's message, fix and exit code (as `--json` prints them). */
export function errorResult(error: unknown): ToolResult {
  if (isActorsError(error)) {
    const document = {
      error: {message: error.message, exit_code: error.exitCode, fix: error.fix ?? null, ...error.details},
    }
    return {
      content: [{type: 'text', text: `${error.message}${error.fix ? `\n  fix: ${error.fix}` : ''}`}],
      structuredContent: document,
      isError: true,
    }
  }
  const message = error instanceof Error ? error.message : String(error)
  return {
    content: [{type: 'text', text: `internal error: ${message}`}],
    structuredContent: {error: {message, exit_code: 1}},
    isError: true,
  }
}

interface ResponseTracker {
  /** Resolves once the response to request `id` was written to stdout. */
  after(id: string | number): Promise<void>
}

/**
 * Know when a response left: the transport's send resolves once the message
 * was written; wrap it and settle the waiter of that request id. `wait` marks
 * its batch reported only then, as the CLI does after printing.
 */
function trackResponses(transport: StdioServerTransport): ResponseTracker {
  const waiters = new Map<string | number, () => void>()
  const send = transport.send.bind(transport)
  transport.send = async (message, ...rest) => {
    await send(message, ...rest)
    const id = (message as {id?: string | number}).id
    if (id !== undefined && ('result' in message || 'error' in message)) {
      waiters.get(id)?.()
      waiters.delete(id)
    }
  }
  return {
    after: (id) => new Promise<void>((resolve) => waiters.set(id, resolve)),
  }
}
