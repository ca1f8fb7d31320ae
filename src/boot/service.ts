/**
 * The control-service API for services written in JavaScript (dist/service.js,
 * an ES module: docs/control.md), with the executors installed for every Run
 * it reads.
 */
import {installExecutors} from '../lib/kernel/executors/index.js'

installExecutors()

export * from '../lib/kernel/signals/service.js'
