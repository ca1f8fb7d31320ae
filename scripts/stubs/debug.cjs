// Stand-in for the `debug` package inside the CLI bundle. oclif creates its
// loggers with `debug` at start-up, which costs ~4 ms on every invocation;
// the real package is loaded only when DEBUG is set (oclif's own tracing).
'use strict'

function create(namespace) {
  if (process.env.DEBUG) return require('debug')(namespace)
  const logger = () => {}
  logger.enabled = false
  logger.namespace = namespace
  logger.log = () => {}
  logger.destroy = () => true
  logger.extend = (suffix, delimiter) => create(`${namespace}${delimiter ?? ':'}${suffix}`)
  return logger
}
create.enabled = () => false
create.enable = () => {}
create.disable = () => ''
module.exports = create
