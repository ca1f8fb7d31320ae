/**
 * The MCP server with the SDK and zod (dist/mcp-server.cjs): loaded by the
 * `actors mcp` front (src/mcp.ts) once the greeter has answered the
 * handshake, and by the build to record the greeter's answers. No other
 * command loads it.
 */
export {recordGreetings, serveMcp} from './lib/mcp/server.js'
