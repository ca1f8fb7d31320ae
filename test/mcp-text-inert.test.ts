/**
 * The text content of an `actors mcp` result is shown by hosts, some on a
 * terminal: what a Run wrote (its argv, an event's summary) reaches it with
 * every C1 and bidi control as a `\uXXXX` escape, which JSON.stringify
 * leaves raw, while the JSON it carries still parses to the same document.
 */
import {afterEach, describe, expect, it} from 'vitest'
import {actors, homesPerTest} from './helpers.js'
import {initialized, killRawServers, toolCall} from './mcp-raw.js'

const home = homesPerTest('actors-mcp-inert-')
afterEach(killRawServers)

const ACTIVE = /[\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/

describe('actors mcp text content', () => {
  it('escapes C1 and bidi controls from a Run in inspect, and its JSON is still the structured content', async () => {
    const h = home()
    const hostile = 'a\u202eb\u009b2Jc\u2066d\u2028e'
    const r = actors(h, ['run', '--name', 'odd', '--wait', '--', 'echo', hostile])
    expect(r.code, r.stderr).toBe(0)
    const session = await initialized(h)
    for (const [id, args] of [
      [2, {}],
      [3, {run: 'odd'}],
    ] as const) {
      session.send(toolCall(id, 'inspect', args))
      const {result} = await session.reply(id)
      const text: string = result.content[0].text
      expect(JSON.stringify(result.structuredContent).includes(hostile)).toBe(true)
      expect(ACTIVE.test(text), text).toBe(false)
      expect(text).toContain('a\\u202eb\\u009b2Jc\\u2066d\\u2028e')
      expect(JSON.parse(text.slice(text.indexOf('\n') + 1))).toEqual(result.structuredContent)
    }
  })
})
