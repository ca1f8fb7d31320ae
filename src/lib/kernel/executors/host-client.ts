/**
 * The launcher's side of the supervision host (`ACTORS_SUPERVISION=host`;
 * services/supervisor/host.ts): hand a created Run to the state root's host
 * over `$ACTORS_HOME/supervision/host.sock`, starting the host when none
 * answers, and learn once its command started (or why the host refused it).
 *
 * Only `actors run` outside any Run hands over (useSupervisionHost): a launch
 * from inside a Run, by a supervisor (a queued child started at a sibling's
 * end) or by the commands that cannot wait for the answer keeps a supervisor
 * of its own, as without the host (a host started inside a Run's unit would
 * end with it).
 */
import {childProcess, nodeNet} from '../../base/platform/builtins.js'
import {refuseLinkedDir} from '../../base/platform/private-files.js'
import {supervisorScript} from '../../base/platform/package-root.js'
import {sleep} from '../../base/platform/sleep.js'
import {hostSocketPath, supervisionDir} from '../../base/records/supervision-host.js'
import {readRunMetaRaw} from '../runs/store.js'
import {supervisorEnvironment} from './supervisor-env.js'
import {LINEAGE_VARS} from '../runs/lineage.js'

/** How long a launcher tries to reach a host (starting one) before it starts a supervisor of its own. */
const REACH_MS = 10_000
/** How long a launcher waits for the answer once the host has its request (the start of a Run: its unit, a spawn). */
const ANSWER_MS = 60_000

let wanted = false
const handoffs = new Map<string, Promise<HandOverResult>>()

export type HandOverResult = {pid: number} | {refused: string} | {unreached: string}

/**
 * `actors run` asks for the host of `home` (when ACTORS_SUPERVISION=host): its launches are handed over, then
 * awaited. A link where the host's dir belongs is refused here, before any Run is made.
 */
export function useSupervisionHost(home: string, env: NodeJS.ProcessEnv = process.env): void {
  const inRun = LINEAGE_VARS.some((name) => env[name])
  wanted = env.ACTORS_SUPERVISION === 'host' && !inRun && env.ACTORS_SUPERVISOR !== '1'
  if (wanted) refuseLinkedDir(supervisionDir(home))
}

/** Whether a local start now goes to the host. */
export function handsToHost(): boolean {
  return wanted
}

/** Hand the Run in `dir` to the host (in the background: handOversDone awaits it). */
export function startHandOver(home: string, dir: string): void {
  handoffs.set(dir, handOver(home, dir))
}

/** Every hand-over started by this process, by state dir, once answered. */
export async function handOversDone(): Promise<Map<string, HandOverResult>> {
  const done = new Map<string, HandOverResult>()
  for (const [dir, result] of handoffs) done.set(dir, await result)
  handoffs.clear()
  return done
}

async function handOver(home: string, dir: string): Promise<HandOverResult> {
  refuseLinkedDir(supervisionDir(home))
  const env = supervisorEnvironment(home)
  const request = `${JSON.stringify({dir, env})}\n`
  const until = Date.now() + REACH_MS
  let spawnedAt = 0
  let last = 'no answer'
  // Asked once with no answer: that host may have taken the Run and died. Then the Run is supervised (a reader
  // takes it over), and neither a second host nor a supervisor of its own may start it again.
  let asked = false
  while (Date.now() < until) {
    const reply = await exchange(hostSocketPath(home), request)
    if ('answer' in reply) return asked ? (takenBefore(reply.answer) ?? reply.answer) : reply.answer
    if ('declined' in reply) return {unreached: reply.declined}
    asked ||= reply.asked
    last = reply.unreached
    // None listens: start one (again after a while: one that was leaving as this asked has gone since).
    if (Date.now() - spawnedAt > 1000) {
      spawnHost(home, env)
      spawnedAt = Date.now()
    }
    await sleep(10)
  }
  const supervisor = asked ? readRunMetaRaw(dir)?.process_identity?.pid : undefined
  return supervisor === undefined ? {unreached: last} : {pid: supervisor}
}

/** A refusal because an earlier host has the Run: as good as its answer. */
function takenBefore(answer: HandOverResult & {supervisedBy?: number}): HandOverResult | undefined {
  return answer.supervisedBy === undefined ? undefined : {pid: answer.supervisedBy}
}

/** What one request came to: the host's answer, its decline, or why it could not be asked (and whether it was). */
type Exchanged =
  | {answer: HandOverResult & {supervisedBy?: number}}
  | {declined: string}
  | {unreached: string; asked: boolean}

/** One request: the host's answer, or why it could not be asked (nothing listens, it left before answering). */
function exchange(socketPath: string, request: string): Promise<Exchanged> {
  return new Promise((settle) => {
    let text = ''
    let sent = false
    const socket = nodeNet().connect(socketPath)
    const timer = setTimeout(() => socket.destroy(new Error('no answer in time')), ANSWER_MS)
    const done = (value: Exchanged) => {
      clearTimeout(timer)
      socket.destroy()
      settle(value)
    }
    socket.setEncoding('utf8')
    socket.on('connect', () => {
      sent = true
      socket.write(request)
    })
    socket.on('data', (chunk: string) => {
      text += chunk
      const end = text.indexOf('\n')
      if (end < 0) return
      try {
        const reply = JSON.parse(text.slice(0, end)) as {
          pid?: unknown
          error?: unknown
          supervised_by?: unknown
          declined?: unknown
        }
        if (typeof reply.pid === 'number') return done({answer: {pid: reply.pid}})
        // Declined (other kernel settings): not taken, so the Run gets a supervisor of its own.
        if (reply.declined === true) return done({declined: String(reply.error)})
        const by = typeof reply.supervised_by === 'number' ? {supervisedBy: reply.supervised_by} : {}
        done({answer: {refused: String(reply.error), ...by}})
      } catch {
        done({answer: {refused: 'the supervision host answered something else than JSON'}})
      }
    })
    // Asked and no answer: a host that left (idle) as it was asked took nothing on; one that took the Run answers.
    socket.on('error', (error) =>
      done({unreached: `${socketPath}: ${error.message}${sent ? ' (asked)' : ''}`, asked: sent}),
    )
    socket.on('close', () => done({unreached: `${socketPath}: closed without an answer`, asked: sent}))
  })
}

function spawnHost(home: string, env: NodeJS.ProcessEnv): void {
  // Detached: a session of its own, so the launcher's terminal and process group never reach it.
  const child = childProcess().spawn(process.execPath, [supervisorScript(), '--host', home], {
    detached: true,
    stdio: 'ignore',
    env,
  })
  child.on('error', () => {})
  child.unref()
}
