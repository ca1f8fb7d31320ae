// Regenerate docs/commands.md from the CLI's own --help, so the reference
// never drifts from the code. Usage: npm run build && node scripts/docs-commands.mjs
import {spawnSync} from 'node:child_process'
import {readFileSync, writeFileSync} from 'node:fs'
import {join, resolve} from 'node:path'

const ROOT = resolve(import.meta.dirname, '..')
const snapshot = JSON.parse(readFileSync(join(ROOT, 'test', 'command-snapshot.json'), 'utf8'))
const env = {...process.env, CI: 'true', NO_COLOR: '1', COLUMNS: '100'}
const help = (args) =>
  spawnSync(process.execPath, [join(ROOT, 'bin', 'actors'), ...args, '--help'], {
    encoding: 'utf8',
    env,
  }).stdout.trimEnd()

const parts = [
  '# Commands',
  '',
  'Generated from `actors COMMAND --help` by `scripts/docs-commands.mjs`; every',
  'command also takes `--home DIR` (the state root) and `--json` (one JSON',
  'document on stdout). Exit codes are listed in [runs.md](runs.md#exit-codes).',
  '',
]
for (const id of Object.keys(snapshot)) {
  parts.push(`## actors ${id}`, '', '```', help(id.split(' ')), '```', '')
}
writeFileSync(join(ROOT, 'docs', 'commands.md'), parts.join('\n'))
console.error(`wrote docs/commands.md (${Object.keys(snapshot).length} commands)`)
