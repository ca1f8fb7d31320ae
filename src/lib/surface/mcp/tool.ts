/**
 * One MCP tool as plain data: its input (a zod shape that mirrors the CLI
 * command, made when first asked for: input-schema.ts), a description that tells an agent when to use it, and `call`,
 * which runs the same kernel functions as the CLI command and returns the
 * CLI's `--json` document plus a one-line summary. server.ts turns these into
 * registered tools (results bounded, errors as tool errors with the fix).
 *
 * Adding a tool over an existing kernel function is one `defineTool` in
 * tools.ts plus its name in TOOLS.
 */
import * as z from 'zod/v4'
import type {McpPolicy} from './policy.js'

export interface ToolContext {
  home: string
  policy: McpPolicy
  /** Extra Recipe root (`actors mcp --recipes DIR`). */
  recipesFlag?: string
  /** A progress notification as a heartbeat (nothing when the request carried no progressToken). */
  heartbeat(progress: number, message: string): void
  /** Resolves once this call's response was written to the client (never, if the client went away). */
  responseSent(): Promise<void>
  /** Aborted when the client cancels the call or the session ends. */
  signal: AbortSignal
}

export interface ToolOutcome {
  /** The CLI's --json document (bounded by `bound` before it is sent). */
  document: object
  /** One short line for the text content. */
  summary: string
  /** The document cut to fit the result cap (server.ts falls back to a plain "too large" note). */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  bound?: (document: any, summary: string) => object
  /** Report the result as a tool error (e.g. every waited Run unknown), with this text. */
  error?: string
  /** The text content's body for the (bounded) document, when not its JSON: e.g. a log page's own text. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  text?: (document: any) => string
}

export interface McpTool<S extends z.ZodRawShape = z.ZodRawShape> {
  name: string
  title: string
  description: string
  /** The input's shape; a function so that a session builds the zod schemas of the tools it calls only. */
  input: () => S
  /** Tools that only read say so, so clients may call them without asking. */
  readOnly?: boolean
  call(input: z.infer<z.ZodObject<S>>, context: ToolContext): Promise<ToolOutcome>
}

/** A duration input as the CLI takes it (500ms, 30s, 5m, 1h). */
export const durationInput = () =>
  z.string().regex(/^\s*\d+(\.\d+)?(ms|s|m|h|d)?\s*$/, 'a duration such as 500ms, 30s, 5m or 1h')

/** Identity function that lets TypeScript infer a tool's input type from its shape. */
export function defineTool<S extends z.ZodRawShape>(tool: McpTool<S>): McpTool<S> {
  return tool
}

/** A value as the CLI's NAME=VALUE text: arrays as a JSON array (the `array` type reads both forms). */
export function valueText(value: string | number | boolean | string[]): string {
  return Array.isArray(value) ? JSON.stringify(value) : String(value)
}
