/**
 * The standalone playback client against a service of the test's own making
 * (a real Unix socket served from this process): replies are bounded at
 * 4 KiB like a Run endpoint's, and a service's own "bad request" is exit 2.
 */
import {createServer, type Server} from 'node:net'
import {writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {actorsAsync, homesPerTest} from './helpers.js'

const home = homesPerTest('actors-music-control-')
const servers: Server[] = []
afterEach(() => {
  for (const server of servers.splice(0)) server.close()
})

/** A "playback service" in `dir` that answers every request with `reply` (one line). */
async function fakeService(dir: string, reply: string): Promise<void> {
  const path = join(dir, 'playback.sock')
  const server = createServer((socket) => {
    socket.once('data', () => socket.end(reply + '\n'))
    socket.on('error', () => {})
  })
  servers.push(server)
  await new Promise<void>((resolve) => server.listen(path, resolve))
  writeFileSync(
    join(dir, 'playback-endpoint.json'),
    JSON.stringify({
      owner_mode: 'standalone',
      path,
      service_instance_id: 'fake',
      service_pid: process.pid,
      ready_at: new Date().toISOString(),
    }),
  )
}

const status = (track: string) => ({
  state: 'playing',
  index: 0,
  count: 1,
  track,
  player: 'mpv',
  volume: 50,
  position_seconds: 1,
  duration_seconds: 10,
  progress_percent: 10,
  position_updated_at_ms: Date.now(),
  updated_at: null,
})

describe('standalone playback replies', () => {
  it('takes a reply up to 4 KiB and refuses a longer one (exit 1, no internal error)', async () => {
    const dir = home()
    const fits = JSON.stringify({ok: true, action: 'status', status: status('t'.repeat(3600))})
    expect(Buffer.byteLength(fits)).toBeLessThanOrEqual(4096)
    await fakeService(dir, fits)
    const ok = await actorsAsync(dir, ['control', '--json', dir, 'status'])
    expect(ok.code, ok.stderr).toBe(0)
    expect(ok.json.status.track).toHaveLength(3600)

    const big = home()
    await fakeService(big, JSON.stringify({ok: true, action: 'status', status: status('t'.repeat(5000))}))
    const refused = await actorsAsync(big, ['control', '--json', big, 'status'])
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain('reply over 4096 bytes')
    expect(refused.stderr).not.toContain('internal error')
  })

  it("a service's own bad-request refusal is a usage error (exit 2)", async () => {
    const dir = home()
    await fakeService(
      dir,
      JSON.stringify({ok: false, error: 'volume needs a percent from 0 to 100', code: 'bad-request', exit_code: 2}),
    )
    const r = await actorsAsync(dir, ['control', '--json', dir, 'volume', '40'])
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('volume needs a percent')
  })
})
