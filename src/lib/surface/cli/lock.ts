/** `actors lock acquire|release|renew|status|exec`: named resource locks shared by Runs and scripts (SPEC: Resource locks). */
import {parseDuration, parsePositiveDuration} from '../../base/platform/duration.js'
import {usageError} from '../../base/platform/errors.js'
import {resolveHome} from '../../base/platform/home.js'
import {execWithLock} from '../../kernel/locks/exec.js'
import {
  acquireLock,
  callerHolder,
  callerHolderOfLock,
  lockStatus,
  releaseLock,
  renewLockLease,
} from '../../kernel/locks/ops.js'
import {refuseInitHolder, releaseHolderRef} from '../../kernel/locks/init-holder.js'
import {plainAcquired, plainLockStatus, plainReleased, plainRenewed} from '../present/locks.js'
import {documentResult, liveResult} from '../present/result.js'
import {defineCommand} from './definition.js'

const NAME_ARG = {description: 'lock name (letters, digits, "_", ".", ":" and "-")', required: true} as const
const SLOTS_FLAG = {
  type: 'integer',
  min: 1,
  max: 1024,
  description: 'capacity of the lock in slots (default 1: a mutex); must match the capacity of a lock in use',
} as const
const WAIT_FLAG = {
  type: 'string',
  description: 'queue for a slot up to this long (500ms, 30s, 5m); exit 124 when it runs out',
} as const
const HOLDER_FLAG = {
  type: 'string',
  description: 'hold as this named holder instead of the current Run or calling process (needs --lease)',
} as const

function optionalDuration(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined
  // A lease of zero would expire on arrival; --wait 0 means "try once".
  return flag === '--lease' ? parsePositiveDuration(value, flag) : parseDuration(value, flag)
}

export const lockAcquireCommand = defineCommand({
  id: 'lock:acquire',
  summary: 'Take a slot of a named lock, or queue for one with --wait',
  description: [
    'The holder is the current Run (inside a Run), else the calling process (the shell or script that ran actors, by process identity: pid and start time, which survive exec), or --holder ID with a --lease.',
    'A holder whose Run ends or whose process dies loses its slot at the next lock operation; a lease that is not renewed expires.',
    'So acquire and release work from one script, one sh -c line (whose shell may exec the release) or one Makefile recipe line; make runs each line in a shell of its own, so a recipe of several lines needs .ONESHELL:.',
    'Waiters are served first come, first served. Exit 5 when busy without --wait (or the capacity disagrees), 124 when --wait runs out.',
  ].join(' '),
  examples: [
    '<%= config.bin %> lock acquire repo --wait 5m',
    '<%= config.bin %> lock acquire gpu --slots 2',
    '<%= config.bin %> lock acquire deploy --holder ci-7 --lease 10m --json',
  ],
  args: {name: NAME_ARG},
  flags: {
    slots: SLOTS_FLAG,
    lease: {type: 'string', description: 'the slot expires after this long unless renewed (actors lock renew)'},
    wait: WAIT_FLAG,
    holder: HOLDER_FLAG,
  },

  async run({args, flags}) {
    const home = resolveHome(flags.home)
    const reply = await acquireLock(home, {
      name: args.name!,
      slots: flags.slots,
      leaseMs: optionalDuration(flags.lease, '--lease'),
      waitMs: optionalDuration(flags.wait, '--wait'),
      holder: refuseInitHolder(callerHolder(home, flags.holder)),
    })
    return documentResult(reply, plainAcquired)
  },
})

export const lockReleaseCommand = defineCommand({
  id: 'lock:release',
  summary: 'Give back a slot of a named lock',
  description:
    'Releases the slot of the current Run, the calling process (or the process that took it and became this actors by exec, as the last command of `sh -c`), or --holder ID. Exit 3 when that holder neither holds the lock nor waits in its queue (a waiter is removed from the queue).',
  examples: ['<%= config.bin %> lock release repo', '<%= config.bin %> lock release deploy --holder ci-7'],
  args: {name: NAME_ARG},
  flags: {
    holder: {
      type: 'string',
      description: 'release for this named holder (or pid:1: clear a slot left by a shell that is gone)',
    },
  },

  async run({args, flags}) {
    const home = resolveHome(flags.home)
    return documentResult(
      releaseLock(
        home,
        args.name!,
        releaseHolderRef(home, args.name!, flags.holder, (id) => callerHolderOfLock(home, args.name!, id)),
      ),
      plainReleased,
    )
  },
})

export const lockRenewCommand = defineCommand({
  id: 'lock:renew',
  summary: "Extend a held slot's lease",
  description:
    'Restarts the lease from now: --lease, or the length it had. Exit 3 when the holder does not hold the lock (or its lease already expired).',
  examples: [
    '<%= config.bin %> lock renew deploy --holder ci-7',
    '<%= config.bin %> lock renew deploy --holder ci-7 --lease 30m',
  ],
  args: {name: NAME_ARG},
  flags: {
    holder: {type: 'string', description: 'renew for this named holder'},
    lease: {type: 'string', description: 'new lease length (default: the current one)'},
  },

  async run({args, flags}) {
    const home = resolveHome(flags.home)
    return documentResult(
      renewLockLease(
        home,
        args.name!,
        callerHolderOfLock(home, args.name!, flags.holder),
        optionalDuration(flags.lease, '--lease'),
      ),
      plainRenewed,
    )
  },
})

export const lockStatusCommand = defineCommand({
  id: 'lock:status',
  summary: 'Show locks: capacity, holders, lease expiry and the queue',
  description:
    'With NAME, one lock; without, every lock of the state root. Holders that are gone are dropped first (a lock operation).',
  examples: ['<%= config.bin %> lock status', '<%= config.bin %> lock status repo --json'],
  args: {name: {description: 'one lock (default: all)'}},
  flags: {},

  async run({args, flags}) {
    return documentResult(lockStatus(resolveHome(flags.home), args.name), plainLockStatus)
  },
})

export const lockExecCommand = defineCommand({
  id: 'lock:exec',
  summary: 'Run a command holding a slot of a named lock (like flock)',
  description:
    'Takes the slot (or queues with --wait), runs COMMAND with the terminal, releases the slot when it exits and exits with its code. ' +
    'The holder is this actors process itself, so a killed lock exec frees its slot too. Exit 5 when busy without --wait, 124 when --wait runs out. ' +
    "With --json, COMMAND's stdout goes to stderr, so stdout is one JSON document {lock, exit_code, signal}.",
  examples: [
    '<%= config.bin %> lock exec repo --wait 10m -- git pull --rebase',
    '<%= config.bin %> lock exec gpu --slots 2 -- python train.py',
  ],
  strict: false,
  args: {name: NAME_ARG},
  flags: {slots: SLOTS_FLAG, wait: WAIT_FLAG},

  async run({args, passthrough, flags}) {
    if (!passthrough || passthrough.length === 0)
      throw usageError('lock exec needs a command after --', `actors lock exec ${args.name} -- COMMAND [ARG ...]`)
    const options = {
      name: args.name!,
      slots: flags.slots,
      waitMs: optionalDuration(flags.wait, '--wait'),
      argv: passthrough,
    }
    const exec = async (stdoutToStderr: boolean) => {
      const reply = await execWithLock(resolveHome(flags.home), {...options, stdoutToStderr})
      return documentResult(reply, undefined, {exitCode: reply.exit_code})
    }
    // COMMAND runs while the result is shown: under --json its stdout goes to stderr, so the summary is all of stdout;
    // plain, the command's own output says it all.
    return liveResult({json: () => exec(true), plain: () => exec(false)})
  },
})
