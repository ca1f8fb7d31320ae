/**
 * The MCP server with the SDK and zod (dist/mcp-server.cjs): loaded by the
 * `actors mcp` front (src/boot/mcp.ts) once it has checked the invocation. No
 * other command loads it.
 */
import {installExecutors} from '../lib/kernel/executors/index.js'
import {toolJsonSchemas} from '../lib/surface/mcp/input-schema.js'
import {serveMcp as serve, type McpServeOptions} from '../lib/surface/mcp/server.js'
import {TOOLS} from '../lib/surface/mcp/tools.js'

/** Serve the session (see lib/surface/mcp/server.ts), with the executors installed for every Run it reads. */
export function serveMcp(options: McpServeOptions): Promise<void> {
  installExecutors()
  return serve(options)
}

/** Every tool's input as JSON Schema: the build writes it to dist/mcp-tool-schemas.json, which tools/list shows. */
export function builtToolSchemas(): ReturnType<typeof toolJsonSchemas> {
  return toolJsonSchemas(TOOLS)
}
