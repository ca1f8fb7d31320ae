/** `actors version`: the same line as `actors --version` (and `-v`), or a document under `--json`. */
import {readFileSync} from 'node:fs'
import {join} from 'node:path'
import {packageRoot} from '../../base/platform/package-root.js'
import {documentResult} from '../present/result.js'
import {defineCommand} from './definition.js'

export interface VersionDocument {
  name: string
  version: string
  platform: string
  arch: string
  node: string
}

/** This package's name and version and the runtime, read from the installed package.json (what `--version` reports). */
export function versionDocument(): VersionDocument {
  const pkg = JSON.parse(readFileSync(join(packageRoot(), 'package.json'), 'utf8')) as {name: string; version: string}
  return {name: pkg.name, version: pkg.version, platform: process.platform, arch: process.arch, node: process.version}
}

/** oclif's user agent line (`actors/0.1.0 linux-x64 node-v20.20.2`), so `version`, `--version` and `-v` print alike. */
export function versionLine(v: VersionDocument): string {
  return `${v.name}/${v.version} ${v.platform}-${v.arch} node-${v.node}`
}

export const versionCommand = defineCommand({
  id: 'version',
  summary: 'Print the version (also `actors --version` and `actors -v`)',
  examples: ['<%= config.bin %> version', '<%= config.bin %> version --json'],
  args: {},
  flags: {},

  async run() {
    return documentResult(versionDocument(), (v, to) => to.out(`${versionLine(v)}\n`))
  },
})
