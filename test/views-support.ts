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
 * imports (ink and the views are ESM) through a resolve hook: in-thread with
 * module.registerHooks where Node has it (22.15, 23.5 and later), else
 * module.register. Node 26 deprecates module.register with a warning printed
 * whenever its hooks thread gets to it, which can land between two frames of
 * an Ink view and leave a stale frame in the terminal's scrollback.
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
      "const trace = (specifier, url) => appendFileSync(process.env.TRACE_FILE, 'import ' + specifier + ' ' + url + '\\n')",
      'if (Module.registerHooks)',
      '  Module.registerHooks({resolve: (s, c, next) => { const r = next(s, c); trace(s, r.url); return r }})',
      "else Module.register('./hooks.mjs', pathToFileURL(__filename))",
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
