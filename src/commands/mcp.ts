// `actors mcp` is defined in src/lib/surface/cli/mcp.ts; bin/actors serves it from dist/mcp.cjs.
import {commandFromDefinition} from './base-command.js'
import {mcpCommand} from '../lib/surface/cli/mcp.js'

export default commandFromDefinition(mcpCommand)
