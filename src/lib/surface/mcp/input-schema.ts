/**
 * A tool's input schema as the SDK takes it (a Standard Schema that also
 * gives its JSON Schema), made only when needed. Building every tool's zod
 * schema and converting it to JSON Schema for tools/list was a large part of
 * a session's first tools/call, so:
 *   - tools/list shows the JSON Schemas the build wrote
 *     (dist/mcp-tool-schemas.json, from toolJsonSchemas below, run on the
 *     built bundle), converted here only when that file lacks a tool;
 *   - the zod object that checks a call's arguments is built on the tool's
 *     first call, once for the SDK and the params guard (params-guard.ts).
 */
import {readFileSync} from 'node:fs'
import {join} from 'node:path'
import * as z from 'zod/v4'
import {packageRoot} from '../../base/platform/package-root.js'
import type {McpTool} from './tool.js'

/** The file the build writes next to dist/mcp-server.cjs. */
export const TOOL_SCHEMAS_FILE = 'mcp-tool-schemas.json'
/** The JSON Schema draft the SDK asks for (its own conversions target the same). */
const TARGET = 'draft-2020-12'

type JsonSchema = Record<string, unknown>
type StandardResult = {value: unknown} | {issues: ReadonlyArray<{message: string; path?: ReadonlyArray<PropertyKey>}>}

const objects = new WeakMap<McpTool, z.ZodObject>()

/** The zod object of `tool`'s input, built on first use. */
export function toolInputObject(tool: McpTool): z.ZodObject {
  let object = objects.get(tool)
  if (!object) {
    object = z.object(tool.input())
    objects.set(tool, object)
  }
  return object
}

/** The JSON Schema of every tool's input, as tools/list shows it (the build writes these to TOOL_SCHEMAS_FILE). */
export function toolJsonSchemas(tools: McpTool[]): Record<string, JsonSchema> {
  return Object.fromEntries(tools.map((tool) => [tool.name, convert(tool)]))
}

function convert(tool: McpTool, target = TARGET): JsonSchema {
  return toolInputObject(tool)['~standard'].jsonSchema.input({target} as {target: typeof TARGET}) as JsonSchema
}

/** The JSON Schemas the build wrote (empty when the file is missing or unreadable: each is then converted). */
export function builtJsonSchemas(): Record<string, JsonSchema> {
  try {
    const parsed = JSON.parse(readFileSync(join(packageRoot(), 'dist', TOOL_SCHEMAS_FILE), 'utf8')) as unknown
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, JsonSchema>) : {}
  } catch {
    return {}
  }
}

/** `tool`'s input as a Standard Schema for registerTool: the built JSON Schema, zod validation on first call. */
export function lazyInputSchema(tool: McpTool, built: Record<string, JsonSchema>) {
  // The build converted for the target the SDK asks for (TARGET); any other target is converted here.
  const listed = (options?: {target?: string}) =>
    (options?.target ?? TARGET) === TARGET && built[tool.name] ? built[tool.name] : convert(tool, options?.target)
  return {
    '~standard': {
      version: 1 as const,
      vendor: 'actors',
      validate: (value: unknown) =>
        toolInputObject(tool)['~standard'].validate(value) as StandardResult | Promise<StandardResult>,
      jsonSchema: {
        input: listed,
        output: (options?: {target?: string}) =>
          toolInputObject(tool)['~standard'].jsonSchema.output({target: options?.target ?? TARGET} as {
            target: typeof TARGET
          }) as JsonSchema,
      },
    },
  }
}
