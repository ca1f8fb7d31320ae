/**
 * The yaml library, loaded the first time a YAML Recipe is parsed: it lives
 * in dist/yaml.cjs (built from ./yaml-bundle.ts), not in the bundles every
 * command starts with, because it is most of their size and most hot
 * commands never read a Recipe.
 */
import {loadBundle} from '../../base/platform/bundles.js'
import {nodeModule} from '../../base/platform/builtins.js'

/** What dist/yaml.cjs (./yaml-bundle.ts) re-exports of the yaml package. */
type YamlBundle = Pick<typeof import('yaml'), 'parseDocument'>

let yaml: YamlBundle | undefined

/** The yaml library's parseDocument, loading dist/yaml.cjs on first use. */
export function yamlLibrary(): YamlBundle {
  yaml ??= loadBundle<YamlBundle>('yaml', () => nodeModule().createRequire(import.meta.url)('yaml'))
  return yaml
}
