/**
 * The MCP server with the SDK and zod (dist/mcp-server.cjs): loaded by the
 * `actors mcp` front (src/mcp.ts) once it has checked the invocation. No
 * other command loads it.
 */
export {serveMcp} from '../lib/mcp/server.js'
