/**
 * The Slurm cluster the tests use: the private one of scripts/slurm-dev-cluster.sh
 * (its own config, daemons, ports and munge), never a machine's own. Every
 * process a test starts gets SLURM_CONF pointing at it, so a Slurm client the
 * kernel runs can reach no other cluster: when the private cluster is not
 * there, SLURM_CONF names a file that does not exist and Slurm's clients fail.
 */
import {readFileSync} from 'node:fs'
import {dirname, join} from 'node:path'

/** The cluster's directory (scripts/slurm-dev-cluster.sh's SLURM_DEV_DIR; the same default). */
export const SLURM_DEV_DIR = process.env.ACTORS_TEST_SLURM_DIR || '/tmp/actors-slurm-dev'
const CONF = join(SLURM_DEV_DIR, 'slurm.conf')
/** The first line of every config the script writes: a config without it is not ours to act on. */
const MARK = '# Written by scripts/slurm-dev-cluster.sh'

function isPrivateCluster(conf: string): boolean {
  try {
    return readFileSync(conf, 'utf8').startsWith(MARK) && dirname(conf) === SLURM_DEV_DIR
  } catch {
    return false
  }
}

/** SLURM_CONF for every process a test starts: the private cluster's config, or a path that cannot be read. */
export const TEST_SLURM_CONF = isPrivateCluster(CONF) ? CONF : join(SLURM_DEV_DIR, 'no-private-cluster', 'slurm.conf')

/** Whether the private cluster's config is there (its daemons may still be down). */
export const HAS_PRIVATE_SLURM = TEST_SLURM_CONF === CONF

/** This file's own Slurm clients (sinfo, squeue, scontrol in the tests) read the same config. */
process.env.SLURM_CONF = TEST_SLURM_CONF
