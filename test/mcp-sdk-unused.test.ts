/**
 * The MCP SDK's schemas the server never reads stay out of
 * dist/mcp-server.cjs (scripts/mcp-sdk-unused.mjs): the transform keeps
 * every constant something refers to, in its order, drops the others, and
 * the SDK's emptied lookup table throws on use instead of answering wrong.
 */
import {readFileSync, writeFileSync} from 'node:fs'
import {createRequire} from 'node:module'
import {join} from 'node:path'
import {build, type Plugin} from 'esbuild'
import {describe, expect, it} from 'vitest'
// @ts-expect-error: a plain ES module of the build, without types
import {mcpSdkUnused, pureTopLevelConsts} from '../scripts/mcp-sdk-unused.mjs'
import {ROOT, tempDir} from './helpers.js'

/** Bundle `entry` (an ES module's text) as the build does, into CommonJS, and evaluate it: its exports. */
async function bundle(entry: string, dir: string, plugins: Plugin[] = []): Promise<Record<string, any>> {
  const file = join(dir, 'entry.mjs')
  writeFileSync(file, entry)
  const result = await build({
    entryPoints: [file],
    bundle: true,
    platform: 'node',
    format: 'cjs',
    write: false,
    logLevel: 'silent',
    nodePaths: [join(ROOT, 'node_modules')],
    plugins,
  })
  const module = {exports: {}}
  new Function('module', 'exports', 'require', result.outputFiles![0].text)(
    module,
    module.exports,
    createRequire(import.meta.url),
  )
  return module.exports
}

describe('pureTopLevelConsts', () => {
  it('wraps multi-line initializers, leaves literals and nested constants, and keeps line numbers', () => {
    const source = [
      "const A = 'literal';",
      'const B = make({',
      '  a: 1,',
      '});',
      'function f() {',
      '  const C = make();',
      '  return C;',
      '}',
      'const D = make()',
      '  .chain();',
      '',
    ].join('\n')
    const {text, wrapped} = pureTopLevelConsts(source)
    expect(wrapped).toBe(2)
    expect(text.split('\n')).toHaveLength(source.split('\n').length)
    expect(text).toContain("const A = 'literal';")
    expect(text).toContain('const B = /* @__PURE__ */ (() => (make({\n  a: 1,\n})))();')
    expect(text).toContain('  const C = make();')
    expect(text).toContain('const D = /* @__PURE__ */ (() => (make()\n  .chain()))();')
  })

  it('lets the bundler drop what nothing refers to, and run the rest in its order', async () => {
    const dir = tempDir('actors-pure-consts-')
    const module = pureTopLevelConsts(
      [
        'const log = [];',
        "const unused = (log.push('unused'), {});",
        "const used = (log.push('used'), {v: 1});",
        "const alsoUsed = (log.push('alsoUsed'), {w: used.v + 1});",
        'export {log, used, alsoUsed, unused};',
        '',
      ].join('\n'),
    ).text
    writeFileSync(join(dir, 'lib.mjs'), module)
    const {log, w} = await bundle(
      "import {log, alsoUsed} from './lib.mjs'\nexport const w = alsoUsed.w\nexport {log}\n",
      dir,
    )
    expect(log).toEqual(['used', 'alsoUsed'])
    expect(w).toBe(2)
  })
})

describe('dist/mcp-server.cjs', () => {
  it("holds the schemas the server reads but not OAuth's, which it never reads", () => {
    const server = readFileSync(join(ROOT, 'dist', 'mcp-server.cjs'), 'utf8')
    // An OAuth metadata field (core's auth schemas) and a method the server answers.
    expect(server).not.toContain('registration_endpoint')
    expect(server).toContain('tools/call')
  })

  it("throws on a read of the SDK's emptied lookup table, naming the build step", async () => {
    const dir = tempDir('actors-spec-table-')
    const {read} = await bundle(
      "import {specTypeSchemas} from '@modelcontextprotocol/server'\nexport const read = () => specTypeSchemas.CallToolResult\n",
      dir,
      [
        {
          name: 'shims',
          setup(b) {
            b.onResolve({filter: /^@modelcontextprotocol\/server\/_shims$/}, () => ({
              path: join(ROOT, 'scripts', 'stubs', 'mcp-shims.mjs'),
            }))
          },
        },
        mcpSdkUnused,
      ],
    )
    expect(read).toThrow(/specTypeSchemas.*scripts\/mcp-sdk-unused\.mjs/)
  }, 30_000)
})
