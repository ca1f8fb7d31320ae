/**
 * `actors mcp` typed at a prompt (a real terminal: tmux) says on stderr what
 * it is and how to leave, instead of waiting in silence; for an agent host
 * (stdin a pipe) it writes nothing but JSON-RPC.
 */
import {spawnSync} from 'node:child_process'
import {afterAll, describe, expect, it} from 'vitest'
import {BIN, cliEnv, homesPerTest, waitFor} from './helpers.js'

const SOCKET = `actors-mcp-terminal-${process.pid}`
const tmux = (...args: string[]) => spawnSync('tmux', ['-L', SOCKET, ...args], {encoding: 'utf8'})
afterAll(() => {
  tmux('kill-server')
})

describe('actors mcp on a terminal', () => {
  const home = homesPerTest('actors-mcp-terminal-')

  it('says what it is and how to quit, and Ctrl-D ends it', async () => {
    const h = home()
    const started = tmux(
      'new-session',
      '-d',
      '-s',
      'mcp',
      '-x',
      '160',
      '-y',
      '20',
      `env ACTORS_HOME='${h}' '${process.execPath}' '${BIN}' mcp; echo "ended rc=$?"; sleep 30`,
    )
    expect(started.status, started.stderr).toBe(0)
    const screen = () => tmux('capture-pane', '-p', '-t', 'mcp').stdout
    await waitFor(() => screen().includes('waiting for a client'), 20_000, 'the note on the terminal')
    expect(screen()).toContain('actors mcp: an MCP server for an AI agent host')
    expect(screen()).toContain('docs/mcp.md')
    tmux('send-keys', '-t', 'mcp', 'C-d')
    await waitFor(() => screen().includes('ended rc=0'), 20_000, 'the server ending at Ctrl-D')
  })

  it('writes nothing on stderr for a client on a pipe', () => {
    const h = home()
    const r = spawnSync(process.execPath, [BIN, 'mcp'], {env: cliEnv(h), input: '', encoding: 'utf8'})
    expect(r.status).toBe(0)
    expect(r.stderr).toBe('')
    expect(r.stdout).toBe('')
  })
})
