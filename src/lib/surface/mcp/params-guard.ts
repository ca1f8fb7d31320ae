/**
 * Tool arguments checked before the SDK sees the call (SPEC: `actors mcp`,
 * invalid params): the SDK answers a call whose arguments do not match the
 * tool's input schema with a tool result holding only its message. Here the
 * same schema refuses it as a JSON-RPC error -32602 whose data carries the
 * CLI's error shape `{error: {message, exit_code: 2, fix}}`, naming the
 * argument, so an agent gets the fix in the documented place.
 */
import type {JSONRPCMessage, Transport} from '@modelcontextprotocol/server'
import type * as z from 'zod/v4'
import {toolInputObject} from './input-schema.js'
import type {McpTool} from './tool.js'

export const INVALID_PARAMS = -32602

type Request = {id: string | number; method: string; params?: {name?: unknown; arguments?: unknown}}

/** The message of the first problems zod found, each naming its argument. */
function describeIssues(tool: string, error: z.ZodError): string {
  const shown = error.issues
    .slice(0, 3)
    .map((issue) => `${issue.path.length ? issue.path.join('.') : 'arguments'}: ${issue.message}`)
  const more = error.issues.length > 3 ? ` (and ${error.issues.length - 3} more)` : ''
  return `invalid arguments for tool ${tool}: ${shown.join('; ')}${more}`
}

/**
 * Check the arguments of every `tools/call` of a known tool against its input
 * schema; a call that fails is answered with -32602 and never reaches the
 * tool. Install after the server connected the transport (it wraps the
 * transport's onmessage, which connect sets).
 */
export function guardToolParams(transport: Transport, tools: McpTool[]): void {
  const byName = new Map(tools.map((tool) => [tool.name, tool]))
  const onmessage = transport.onmessage
  transport.onmessage = (message: JSONRPCMessage, ...rest: unknown[]) => {
    const request = message as Partial<Request>
    if (request.method === 'tools/call' && request.id !== undefined && typeof request.params?.name === 'string') {
      const tool = byName.get(request.params.name)
      const parsed = tool && toolInputObject(tool).safeParse(request.params.arguments ?? {})
      if (parsed && !parsed.success) {
        const text = describeIssues(request.params.name, parsed.error)
        const fix = `give the arguments the tool's inputSchema describes (tools/list shows it for ${request.params.name})`
        void transport.send({
          jsonrpc: '2.0',
          id: request.id,
          error: {code: INVALID_PARAMS, message: text, data: {error: {message: text, exit_code: 2, fix}}},
        } as JSONRPCMessage)
        return
      }
    }
    ;(onmessage as ((m: JSONRPCMessage, ...r: unknown[]) => void) | undefined)?.(message, ...rest)
  }
}
