/**
 * The MCP server with the SDK and zod (dist/mcp-server.cjs): loaded by the
 * `actors mcp` front (src/boot/mcp.ts) once it has checked the invocation. No
 * other command loads it.
 */
import {installExecutors} from '../lib/executors/index.js'
import {serveMcp as serve, type McpServeOptions} from '../lib/mcp/server.js'

/** Serve the session (see lib/mcp/server.ts), with the executors installed for every Run it reads. */
export function serveMcp(options: McpServeOptions): Promise<void> {
  installExecutors()
  return serve(options)
}
