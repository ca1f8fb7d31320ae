/** Every test file: the executors installed, as every entry point in src/boot/ installs them before reading a Run. */
import {installExecutors} from '../src/lib/kernel/executors/index.js'

installExecutors()
