/**
 * The greeter: answers the MCP handshake (`initialize`, `tools/list`, `ping`)
 * while the SDK has not loaded yet, then hands the stream to the SDK.
 *
 * Why: loading the SDK and zod (building the SDK's protocol schemas) costs
 * about as much as starting node itself, and a client waits for that before
 * it can list the tools. The answers here are not written by hand: the build
 * records them from the real server (recordGreetings in server.ts, written to
 * dist/mcp-greetings.json), so they are the SDK's own bytes.
 *
 * How the SDK takes over: every byte read here is replayed to it, followed by
 * the rest of stdin, so it processes the whole session from the first message
 * and its state (negotiated protocol version, client capabilities) is exactly
 * as if it had served alone; its answers to the requests already answered are
 * dropped (server.ts, dropAnswered). The greeter answers only what it is sure
 * of and hands over at the first message it is not, so anything unusual
 * (another protocol version, parameters, a batch, bad JSON) is the SDK's to
 * answer. Only node built-ins here: this module is on the start-up path.
 */
import {PassThrough, type Readable} from 'node:stream'

/** What the build recorded (server.ts, recordGreetings). */
export interface Greetings {
  /** The package version the server reports. */
  version: string
  /** Protocol version the client asks for → method (initialize, tools/list, ping) → the SDK's answer line, for request id 0. */
  answers: Record<string, Record<string, string>>
}

/**
 * What the SDK needs to take over: `input` replays every byte the greeter
 * read, then carries the rest of stdin; `answered` maps the id of each request
 * already answered to the line sent, so the SDK's own answer is dropped.
 */
export interface Handover {
  input: Readable
  answered: Map<string | number, string>
}

type Json = Record<string, unknown>
const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value)
const INITIALIZE_PARAMS = ['protocolVersion', 'capabilities', 'clientInfo']

/**
 * Answer the handshake on `stdin`/`write` until tools/list has been answered
 * or a message arrives that the greeter does not answer; resolves with the
 * hand-over, or 'closed' when stdin ended first (nothing left to serve).
 * `write` sends one line and calls back once it was written.
 */
export function greet(greetings: Greetings, stdin: Readable, write: (line: string, written: () => void) => void): Promise<Handover | 'closed'> {
  const read: Buffer[] = []
  const answered = new Map<string | number, string>()
  let unparsed: Buffer = Buffer.alloc(0)
  let answers: Record<string, string> | undefined

  /** The line answering `line`, '' for a notification to pass on silently, undefined: not the greeter's to answer. */
  function answer(line: string): {line: string; last?: boolean} | undefined {
    let message: unknown
    try {
      message = JSON.parse(line)
    } catch {
      return undefined
    }
    if (!isObject(message) || message.jsonrpc !== '2.0' || typeof message.method !== 'string') return undefined
    const {id, method, params} = message
    if (!('id' in message)) return answers && method === 'notifications/initialized' && params === undefined ? {line: ''} : undefined
    if (!(typeof id === 'string' || Number.isSafeInteger(id)) || answered.has(id as string | number)) return undefined
    if (method === 'initialize' && answers === undefined) {
      if (!isObject(params) || !Object.keys(params).every((key) => INITIALIZE_PARAMS.includes(key))) return undefined
      const {protocolVersion, capabilities, clientInfo} = params
      if (typeof protocolVersion !== 'string' || !Object.hasOwn(greetings.answers, protocolVersion)) return undefined
      if (!isObject(capabilities) || !Object.values(capabilities).every(isObject)) return undefined
      if (!isObject(clientInfo) || typeof clientInfo.name !== 'string' || typeof clientInfo.version !== 'string') return undefined
      answers = greetings.answers[protocolVersion]
      return reply(id as string | number, answers.initialize)
    }
    // Everything else only after a greeted initialize, and only without parameters.
    if (answers === undefined || !(params === undefined || (isObject(params) && Object.keys(params).length === 0))) return undefined
    if (method === 'tools/list') {
      const listed = reply(id as string | number, answers['tools/list'])
      return listed && {...listed, last: true}
    }
    if (method === 'ping') return reply(id as string | number, answers.ping)
    return undefined
  }

  function reply(id: string | number, recorded: string | undefined): {line: string} | undefined {
    if (recorded === undefined) return undefined
    const line = JSON.stringify({...(JSON.parse(recorded) as Json), id})
    answered.set(id, line)
    return {line}
  }

  return new Promise((resolve) => {
    let done = false
    // A vanished client (EPIPE) is no crash: stdin ends next, and that ends the session. Kept for the SDK's
    // whole session too: its own listener comes only once it has started, after loading.
    process.stdout.on('error', () => {})
    const finish = (how: 'handover' | 'closed') => {
      if (done) return
      done = true
      stdin.off('data', onData)
      stdin.off('end', onEnd)
      if (how === 'closed') return resolve('closed')
      stdin.pause()
      const input = new PassThrough()
      input.write(Buffer.concat(read))
      stdin.pipe(input)
      resolve({input, answered})
    }
    const onEnd = () => finish('closed')
    const onData = (chunk: Buffer) => {
      read.push(chunk)
      unparsed = unparsed.length ? Buffer.concat([unparsed, chunk]) : chunk
      for (let newline = unparsed.indexOf(10); newline !== -1 && !done; newline = unparsed.indexOf(10)) {
        const line = unparsed.toString('utf8', 0, newline).replace(/\r$/, '')
        unparsed = unparsed.subarray(newline + 1)
        if (line === '') continue // the SDK skips blank lines too
        const response = answer(line)
        if (response === undefined) return finish('handover')
        if (response.line === '') continue
        if (!response.last) {
          write(response.line, () => {})
          continue
        }
        // The SDK takes over once the tool list is out: by then the client has all it needs to start working.
        stdin.off('data', onData)
        stdin.pause() // later bytes wait in the stream for the SDK
        return write(response.line, () => finish('handover'))
      }
    }
    stdin.on('data', onData)
    stdin.on('end', onEnd)
  })
}

/** The recorded greetings from `text` (dist/mcp-greetings.json), or undefined when it is not what the build writes. */
export function parseGreetings(text: string, version: string): Greetings | undefined {
  try {
    const greetings = JSON.parse(text) as Greetings
    if (greetings.version !== version || !isObject(greetings.answers)) return undefined
    for (const answers of Object.values(greetings.answers)) {
      if (!isObject(answers) || !['initialize', 'tools/list', 'ping'].every((method) => typeof answers[method] === 'string')) return undefined
      for (const line of Object.values(answers)) JSON.parse(line)
    }
    return greetings
  } catch {
    return undefined
  }
}
