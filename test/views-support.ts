/**
 * Support for the terminal-view tests: a preload that records every module a
 * CLI process loads, so tests can prove ink and react stay unloaded off the
 * TTY (and are loaded on it).
 */
import {writeFileSync} from 'node:fs'
import {join} from 'node:path'

/**
 * A preload that records every module the CLI loads to $TRACE_FILE: CommonJS
 * requests (the CLI bundle is CommonJS) through Module._load, and ES module
 * imports (ink and the views are ESM) through a module.register resolve hook.
 */
export function writeLoadTracer(dir: string): string {
  writeFileSync(
    join(dir, 'hooks.mjs'),
    "import {appendFileSync} from 'node:fs'\nexport async function resolve(specifier, context, next) {\n  const resolved = await next(specifier, context)\n  appendFileSync(process.env.TRACE_FILE, 'import ' + specifier + ' ' + resolved.url + '\\n')\n  return resolved\n}\n",
  )
  writeFileSync(
    join(dir, 'preload.cjs'),
    [
      "const Module = require('node:module')",
      "const {appendFileSync} = require('node:fs')",
      "const {pathToFileURL} = require('node:url')",
      'const load = Module._load',
      "Module._load = function (request, ...rest) { appendFileSync(process.env.TRACE_FILE, 'require ' + request + '\\n'); return load.call(this, request, ...rest) }",
      "Module.register('./hooks.mjs', pathToFileURL(__filename))",
    ].join('\n') + '\n',
  )
  return join(dir, 'preload.cjs')
}

/** Trace lines that show ink or react being loaded. */
export function loadedHeavyModules(specifiers: string[]): string[] {
  return specifiers.filter(
    (s) => /^(import|require) (ink|react)(\/|\s|$)/.test(s) || /node_modules\/(ink|react)\//.test(s),
  )
}
