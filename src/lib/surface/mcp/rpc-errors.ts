/**
 * JSON-RPC errors in the CLI's error shape (SPEC: Agents over MCP): every
 * error response carries `data.error {message, exit_code, fix}`, as tool
 * errors and the line guard's already do. A handler's ActorsError keeps its
 * exit code and fix; a bad argument (exit 2: an invalid Run id in a resource
 * URI) and a missing Run (exit 4) are invalid params (-32602, the code the
 * SDK itself answers an unknown resource URI with), anything else internal
 * (-32603). Errors the SDK makes itself (an unknown method, a URI no resource
 * serves) get the shape on their way out.
 */
import {ProtocolError, type JSONRPCMessage, type Transport} from '@modelcontextprotocol/server'
import {type ActorsError, EXIT, isActorsError} from '../../base/platform/errors.js'
import {INVALID_PARAMS} from './params-guard.js'

const METHOD_NOT_FOUND = -32601
const INTERNAL_ERROR = -32603

/** A request handler's failure as the protocol error to answer with (anything not an ActorsError passes unchanged). */
export function protocolErrorOf(error: unknown, data: Record<string, unknown> = {}): unknown {
  if (!isActorsError(error)) return error
  const asked = error.exitCode === EXIT.usage || error.exitCode === EXIT.notFound
  return new ProtocolError(asked ? INVALID_PARAMS : INTERNAL_ERROR, error.message, {
    ...data,
    error: {message: error.message, exit_code: error.exitCode, fix: error.fix ?? null},
  })
}

/** The JSON-RPC error response to request `id` for an ActorsError, for a guard that answers before the SDK does. */
export function errorResponseOf(
  id: string | number,
  error: ActorsError,
  data: Record<string, unknown> = {},
): JSONRPCMessage {
  const asked = error.exitCode === EXIT.usage || error.exitCode === EXIT.notFound
  return {
    jsonrpc: '2.0',
    id,
    error: {
      code: asked ? INVALID_PARAMS : INTERNAL_ERROR,
      message: error.message,
      data: {...data, error: {message: error.message, exit_code: error.exitCode, fix: error.fix ?? null}},
    },
  } as JSONRPCMessage
}

/** The CLI's error shape for an error the SDK made, by its code. */
function shapeOf(code: number, message: string): {message: string; exit_code: number; fix: string} {
  if (code === METHOD_NOT_FOUND)
    return {
      message,
      exit_code: EXIT.usage,
      fix: 'call a method this server serves: tools/list, tools/call, resources/list, resources/read, resources/subscribe, ping',
    }
  if (code === INVALID_PARAMS && /not found/i.test(message))
    return {
      message,
      exit_code: EXIT.notFound,
      fix: 'read actors://runs (the table) or actors://runs/RUN for a Run id it lists',
    }
  if (code === INVALID_PARAMS) return {message, exit_code: EXIT.usage, fix: 'send the params the method takes'}
  return {message, exit_code: EXIT.failed, fix: 'try again; if it persists, report it with the request that caused it'}
}

/** An outgoing error response with data.error filled in when it lacks one; anything else unchanged. */
export function withErrorShape(message: JSONRPCMessage): JSONRPCMessage {
  const error = (message as {error?: {code?: unknown; message?: unknown; data?: unknown}}).error
  if (!error || typeof error.code !== 'number' || typeof error.message !== 'string') return message
  const data = error.data !== null && typeof error.data === 'object' ? (error.data as Record<string, unknown>) : {}
  if (data.error !== undefined) return message
  return {...message, error: {...error, data: {...data, error: shapeOf(error.code, error.message)}}} as JSONRPCMessage
}

/** Give every error response the transport sends the CLI's shape (install before anything else wraps send). */
export function shapeErrorResponses(transport: Transport): void {
  const send = transport.send.bind(transport)
  transport.send = (message, ...rest) => send(withErrorShape(message), ...rest)
}
