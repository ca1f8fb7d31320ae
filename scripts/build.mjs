// Bundle with esbuild for fast start-up.
//  - dist/fast-<command>.cjs: each hot command without oclif (src/boot/fast.ts
//    and the command's definition, src/lib/surface/cli/<command>.ts; the hot commands
//    are those of src/lib/surface/cli/hot-commands.ts), which bin/actors tries first
//    for the commands dist/hot-commands.json names. One bundle per command:
//    each compiles and evaluates only what its command imports.
//  - dist/cli.cjs: the whole CLI (oclif) as one CommonJS file, for everything
//    else. bin/actors loads both through V8's code cache (dist/*.cache), which
//    roughly halves start-up compared with compiling on every invocation.
//  - dist/mcp.cjs: the `actors mcp` front (src/boot/mcp.ts): checks the invocation,
//    then loads dist/mcp-server.cjs (src/boot/mcp-server.ts: the server with the
//    MCP SDK and zod, as published). bin/actors loads both for that command only, through
//    the same code cache. dist/mcp-tool-schemas.json holds every tool's input
//    as JSON Schema, made here from the built server, so that a session's
//    tools/list shows it without converting (src/lib/surface/mcp/input-schema.ts).
//  - dist/yaml.cjs: the yaml library (src/lib/kernel/recipes/yaml-bundle.ts), most of what the other
//    bundles would weigh; loaded through the same code cache the first time a
//    YAML Recipe is parsed (src/lib/kernel/recipes/yaml.ts), so the hot commands that
//    read no Recipe never evaluate it.
//  - dist/zod.cjs: the parts of zod the Recipe schema uses (src/lib/base/platform/zod-bundle.ts), loaded the
//    same way the first time a Recipe is validated (src/lib/base/platform/zod.ts), so `run -- CMD` and the
//    other hot commands that read no Recipe never evaluate it. dist/zod-json.cjs: zod's JSON Schema
//    generator (src/lib/base/platform/zod-json-bundle.ts), loaded by `actors recipes --schema` alone.
//  - dist/execa.cjs: execa (src/lib/base/platform/execa-bundle.ts), loaded the same way the first time a child
//    process is started off the hot paths (src/lib/base/platform/execa.ts: players, ffprobe, Slurm's commands,
//    `lock exec`). It costs about 40 ms and 10 MB to evaluate: the launch and the supervisor keep
//    node:child_process and never load it.
//  - dist/supervisor.cjs: the detached supervisor of every Run, its own small
//    CommonJS bundle (no ES module loader: less memory per live Run).
//  - dist/index-worker.cjs: the worker thread a large index rebuild shares
//    its state dirs with (src/boot/index-worker.ts).
//  - dist/*.js: ES module entry points imported by services (service.js) and
//    the Ink views (views/*.js). Add more to `esmEntries`.
// ink and react stay external: they load (from node_modules) only on the TTY
// path, through dynamic import().
import {build} from 'esbuild'
import {existsSync, readdirSync, renameSync, rmSync, writeFileSync} from 'node:fs'
import {createRequire} from 'node:module'
import {basename, dirname, resolve} from 'node:path'

const esmEntries = {service: 'src/boot/service.ts'}
// Ink views are ES modules (ink is ESM-only): each src/views/*.tsx becomes
// dist/views/*.js, and the CommonJS CLI reaches them through a real import().
for (const file of readdirSync('src/views').filter((f) => /\.tsx?$/.test(f))) {
  esmEntries[`views/${file.replace(/\.tsx?$/, '')}`] = `src/views/${file}`
}

/**
 * The CommonJS CLI must never bundle a view (they import ESM-only ink): views
 * are loaded at run time with importView() from src/lib/base/platform/esm-import.ts.
 */
const viewsStayOut = {
  name: 'views-stay-out',
  setup(b) {
    b.onResolve({filter: /views\/[^/]+\.js$/}, (args) => {
      const target = resolve(args.resolveDir, args.path)
      if (dirname(target) !== resolve('src/views')) return undefined
      return {
        errors: [
          {
            text: `${args.importer} imports ${args.path}: load views with importView('${basename(target, '.js')}') from src/lib/base/platform/esm-import.ts`,
          },
        ],
      }
    })
  },
}

/** '@oclif/core' (the package index) → src/boot/oclif-core.ts, which imports only the subpaths we use. */
const oclifSubpathsOnly = {
  name: 'oclif-subpaths-only',
  setup(b) {
    b.onResolve({filter: /^@oclif\/core$/}, (args) =>
      args.importer.endsWith('oclif-core.ts') ? undefined : {path: resolve('src/boot/oclif-core.ts')},
    )
  },
}

/** oclif's `debug` loggers → scripts/stubs/debug.cjs, which loads the real package only when DEBUG is set. */
const debugOnlyWhenAsked = {
  name: 'debug-only-when-asked',
  setup(b) {
    b.onResolve({filter: /^debug$/}, (args) =>
      args.importer.endsWith('stubs/debug.cjs') ? undefined : {path: resolve('scripts/stubs/debug.cjs')},
    )
  },
}

/** The SDK's Node shim → scripts/stubs/mcp-shims.mjs: the same exports without ajv, which `actors mcp` never uses. */
const mcpWithoutAjv = {
  name: 'mcp-without-ajv',
  setup(b) {
    b.onResolve({filter: /^@modelcontextprotocol\/server\/_shims$/}, () => ({
      path: resolve('scripts/stubs/mcp-shims.mjs'),
    }))
  },
}

/** The `actors mcp` front must never bundle the SDK or zod: answering before they load is its whole point. */
const noMcpSdk = {
  name: 'no-mcp-sdk',
  setup(b) {
    b.onResolve({filter: /^(@modelcontextprotocol\/|zod(\/|$))/}, (args) => ({
      errors: [
        {
          text: `${args.importer} imports ${args.path}: dist/mcp.cjs must not load the MCP SDK or zod (they belong in dist/mcp-server.cjs, src/lib/surface/mcp/server.ts)`,
        },
      ],
    }))
  },
}

/** The fast front end must never bundle oclif: not loading it is its whole point. */
const noOclif = {
  name: 'no-oclif',
  setup(b) {
    b.onResolve({filter: /^@oclif\//}, (args) => ({
      errors: [
        {
          text: `${args.importer} imports ${args.path}: dist/fast-*.cjs must not load oclif (keep oclif in src/commands and src/commands/base-command.ts)`,
        },
      ],
    }))
  },
}

/** A library that lives in bundles of its own (built from `entries`): any other importer is refused, naming how to load it. */
function onDemand(name, filter, entries, how) {
  return {
    name: `${name}-on-demand`,
    setup(b) {
      b.onResolve({filter}, (args) =>
        entries.some((entry) => args.importer === resolve(entry))
          ? undefined
          : {errors: [{text: `${args.importer} imports ${args.path}: ${how}`}]},
      )
    },
  }
}
/** yaml: dist/yaml.cjs (src/lib/kernel/recipes/yaml-bundle.ts); every other bundle reaches it through src/lib/kernel/recipes/yaml.ts. */
const yamlOnDemand = onDemand(
  'yaml',
  /^yaml(\/|$)/,
  ['src/lib/kernel/recipes/yaml-bundle.ts'],
  'load the yaml library with yamlLibrary() from src/lib/kernel/recipes/yaml.ts (it is dist/yaml.cjs, loaded only when a YAML Recipe is parsed)',
)
/** zod for the Recipe schema: dist/zod.cjs and dist/zod-json.cjs (src/lib/base/platform/zod-bundle.ts, zod-json-bundle.ts); only dist/mcp-server.cjs bundles its own. */
const zodOnDemand = onDemand(
  'zod',
  /^zod(\/|$)/,
  ['src/lib/base/platform/zod-bundle.ts', 'src/lib/base/platform/zod-json-bundle.ts'],
  'load zod with zodLibrary() from src/lib/base/platform/zod.ts (it is dist/zod.cjs, loaded only when a Recipe is validated)',
)
/** execa: dist/execa.cjs (src/lib/base/platform/execa-bundle.ts); every other bundle reaches it through src/lib/base/platform/execa.ts. */
const execaOnDemand = onDemand(
  'execa',
  /^execa(\/|$)/,
  ['src/lib/base/platform/execa-bundle.ts'],
  'start child processes with execaLibrary() from src/lib/base/platform/execa.ts (it is dist/execa.cjs, loaded only when one is started), or node:child_process on the hot paths',
)

const shared = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  minify: !process.env.ACTORS_BUILD_DEBUG,
  legalComments: 'none',
  external: [
    'typescript',
    'ts-node',
    'ink',
    'react',
    'react/jsx-runtime',
    'react-devtools-core',
    'ink-testing-library',
  ],
  // Views are .tsx (tsconfig: react-jsx); the automatic runtime imports react/jsx-runtime, kept external above.
  jsx: 'automatic',
  logLevel: 'warning',
}

// Build into a fresh directory and swap it in, so a process (or test) running
// bin/actors meanwhile never sees a half-written or missing dist/.
const out = `dist.build-${process.pid}`
rmSync(out, {recursive: true, force: true})
const commonJs = {
  ...shared,
  outdir: out,
  outExtension: {'.js': '.cjs'},
  format: 'cjs',
  // Kernel modules locate the package through import.meta.url; give the CommonJS bundles one, made when first
  // asked for (pathToFileURL costs half a millisecond, and most commands never ask).
  define: {'import.meta.url': '__actorsModule.url'},
  banner: {js: "const __actorsModule = {get url() { return require('node:url').pathToFileURL(__filename).href } };"},
}
await build({
  ...commonJs,
  entryPoints: {cli: 'src/boot/cli.ts'},
  plugins: [viewsStayOut, oclifSubpathsOnly, debugOnlyWhenAsked, yamlOnDemand, zodOnDemand, execaOnDemand],
})
// The hot commands, from src/lib/surface/cli/hot-commands.ts itself: bin/actors reads
// dist/hot-commands.json to decide which bundle to load, so there is no second copy to keep in step.
await build({
  ...commonJs,
  entryPoints: {'hot-commands': 'src/lib/surface/cli/hot-commands.ts'},
  plugins: [viewsStayOut, noOclif, yamlOnDemand, zodOnDemand, execaOnDemand],
})
const hotCommandNames = Object.keys(createRequire(import.meta.url)(resolve(out, 'hot-commands.cjs')).HOT_COMMANDS)
rmSync(resolve(out, 'hot-commands.cjs'))
/** Entry `hot-entry:NAME`: the fast front of NAME with its definition (`NAMECommand` of src/lib/surface/cli/NAME.ts). */
const hotEntries = {
  name: 'hot-entries',
  setup(b) {
    b.onResolve({filter: /^hot-entry:/}, (args) => ({
      path: args.path.slice('hot-entry:'.length),
      namespace: 'hot-entry',
    }))
    b.onLoad({filter: /.*/, namespace: 'hot-entry'}, (args) => ({
      resolveDir: resolve('.'),
      loader: 'ts',
      contents: `import {fastFront} from './src/boot/fast.ts'\nimport {${args.path}Command} from './src/lib/surface/cli/${args.path}.ts'\nexport const {command, run} = fastFront(${args.path}Command)\n`,
    }))
  },
}
await build({
  ...commonJs,
  entryPoints: hotCommandNames.map((name) => ({in: `hot-entry:${name}`, out: `fast-${name}`})),
  plugins: [hotEntries, viewsStayOut, noOclif, yamlOnDemand, zodOnDemand, execaOnDemand],
})
for (const name of hotCommandNames) {
  const front = createRequire(import.meta.url)(resolve(out, `fast-${name}.cjs`))
  if (front.command !== name)
    throw new Error(
      `dist/fast-${name}.cjs serves ${front.command}: src/lib/surface/cli/${name}.ts must export ${name}Command, the definition of ${name}`,
    )
}
writeFileSync(`${out}/hot-commands.json`, JSON.stringify(hotCommandNames) + '\n')
// The supervisor's first statement, before any module of it is evaluated: SIGUSR1 would otherwise open Node's
// inspector (127.0.0.1:9229) in the process that supervises every Run of a state root (src/boot/supervisor.ts).
await build({
  ...commonJs,
  banner: {js: `process.on('SIGUSR1', () => {}); ${commonJs.banner.js}`},
  entryPoints: {supervisor: 'src/boot/supervisor.ts'},
  plugins: [yamlOnDemand, zodOnDemand, execaOnDemand],
})
// The bundles' code cache (src/boot/code-cache.ts), which bin/actors loads first.
await build({...commonJs, entryPoints: {'code-cache': 'src/boot/code-cache.ts'}, plugins: [execaOnDemand]})
// The worker thread of a large index rebuild (src/boot/index-worker.ts): started only by one, never loaded otherwise.
await build({
  ...commonJs,
  entryPoints: {'index-worker': 'src/boot/index-worker.ts'},
  plugins: [viewsStayOut, noOclif, yamlOnDemand, zodOnDemand, execaOnDemand],
})
await build({...commonJs, entryPoints: {yaml: 'src/lib/kernel/recipes/yaml-bundle.ts'}, plugins: [yamlOnDemand]})
await build({...commonJs, entryPoints: {zod: 'src/lib/base/platform/zod-bundle.ts'}, plugins: [zodOnDemand]})
await build({...commonJs, entryPoints: {execa: 'src/lib/base/platform/execa-bundle.ts'}, plugins: [execaOnDemand]})
await build({
  ...commonJs,
  entryPoints: {'zod-json': 'src/lib/base/platform/zod-json-bundle.ts'},
  plugins: [zodOnDemand],
})
// `actors mcp` only: the front, and the server with the SDK (and zod); never loaded by any other command.
await build({
  ...commonJs,
  entryPoints: {mcp: 'src/boot/mcp.ts'},
  plugins: [viewsStayOut, noOclif, noMcpSdk, yamlOnDemand, execaOnDemand],
})
await build({
  ...commonJs,
  entryPoints: {'mcp-server': 'src/boot/mcp-server.ts'},
  plugins: [viewsStayOut, noOclif, mcpWithoutAjv, yamlOnDemand, execaOnDemand],
})
const mcpServer = createRequire(import.meta.url)(resolve(out, 'mcp-server.cjs'))
writeFileSync(`${out}/mcp-tool-schemas.json`, JSON.stringify(mcpServer.builtToolSchemas()) + '\n')
await build({
  ...shared,
  entryPoints: esmEntries,
  outdir: out,
  splitting: true,
  format: 'esm',
  chunkNames: 'chunks/[name]-[hash]',
  plugins: [execaOnDemand],
  // Bundled CommonJS dependencies still call require() for Node built-ins.
  banner: {
    js: "import {createRequire as __actorsRequire} from 'node:module'; const require = __actorsRequire(import.meta.url);",
  },
})

const old = `dist.old-${process.pid}`
if (existsSync('dist')) renameSync('dist', old)
renameSync(out, 'dist')
rmSync(old, {recursive: true, force: true})
