// Stand-in for `@modelcontextprotocol/server/_shims` inside dist/mcp-server.cjs.
// The real Node shim brings the SDK's default JSON Schema validator, ajv with
// ajv-formats (~150 KB of the bundle, evaluated at every start). The server
// uses that validator only to check elicitation replies, and `actors mcp`
// never elicits (tool inputs are validated by zod), so it is left out; a use
// would fail loudly here rather than validate nothing.
import process from 'node:process'

export class DefaultJsonSchemaValidator {
  getValidator() {
    throw new Error('actors mcp bundles no JSON Schema validator (it never elicits); see scripts/stubs/mcp-shims.mjs')
  }
}

export {process}
