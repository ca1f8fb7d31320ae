/**
 * The yaml library (dist/yaml.cjs), about 115 KB minified: a bundle of its
 * own so the commands that never read a YAML Recipe (inspect, control, wait,
 * emit, logs, an ad-hoc `run -- CMD`) do not evaluate it at every start. Only
 * src/lib/kernel/recipes/yaml.ts loads it, the first time a YAML Recipe is parsed.
 */
export {parseDocument} from 'yaml'
