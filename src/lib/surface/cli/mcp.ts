/**
 * `actors mcp`: the kernel as tools for AI agents, over the Model Context
 * Protocol on stdio (src/lib/surface/mcp/). The command lives in its own bundles,
 * dist/mcp.cjs (src/boot/mcp.ts: the front, which checks the invocation) and
 * dist/mcp-server.cjs (the server with the MCP SDK), which bin/actors loads
 * for this command only; this definition, shared with the oclif CLI for help
 * and the command list, loads the front when oclif ends up running it.
 */
import {join} from 'node:path'
import {nodeModule} from '../../base/platform/builtins.js'
import {packageRoot} from '../../base/platform/package-root.js'
import {defineCommand} from './definition.js'

/** What dist/mcp.cjs (src/boot/mcp.ts, the layer above) offers this command: the session, for checked flags. */
interface McpBundle {
  serve(flags: {
    allow?: string
    'allow-adhoc'?: boolean
    owner?: string
    recipes?: string
    home?: string
  }): Promise<void>
}

export const mcpCommand = defineCommand({
  id: 'mcp',
  summary: 'Serve Runs to AI agents as a Model Context Protocol server over stdio',
  description: [
    'Tools: run, wait, inspect, logs, control, recipes. Resources: actors://runs and actors://runs/{run} (subscribable).',
    'Only Recipes may be launched (limited by --allow), ad-hoc commands only with --allow-adhoc; Runs belong to --owner.',
    'stdout carries JSON-RPC only; the server exits when the client closes stdin, and its Runs keep going. See docs/mcp.md.',
  ].join(' '),
  examples: [
    "<%= config.bin %> mcp --allow 'build/*,test/*'",
    '<%= config.bin %> mcp --allow-adhoc --owner review-bot',
  ],
  args: {},
  flags: {
    allow: {
      type: 'string',
      description:
        "Recipes that may be launched: comma-separated glob patterns ('build/*,hello'); default: every Recipe",
    },
    'allow-adhoc': {type: 'boolean', description: 'also allow ad-hoc commands and Recipe files given by path'},
    owner: {
      type: 'string',
      description:
        'owner of the Runs started here, whose Runs wait collects (default: $ACTORS_OWNER, else mcp-CLIENT from the name the client gives in initialize)',
    },
    recipes: {type: 'string', description: 'extra Recipe root searched first'},
  },

  async run({flags}) {
    const bundle = nodeModule().createRequire(import.meta.url)(join(packageRoot(), 'dist', 'mcp.cjs')) as McpBundle
    await bundle.serve(flags)
    return undefined
  },
})
