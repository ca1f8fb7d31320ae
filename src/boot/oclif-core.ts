/**
 * The parts of @oclif/core the CLI uses, imported from their own subpaths.
 * The build aliases '@oclif/core' to this file so the package index (which
 * checks the Node version with semver and pulls in every module at start-up)
 * never loads: a measurable share of each invocation's start-up.
 */
export {Command} from '@oclif/core/command'
export * as Flags from '@oclif/core/flags'
export * as Args from '@oclif/core/args'
export {execute} from '@oclif/core/execute'
