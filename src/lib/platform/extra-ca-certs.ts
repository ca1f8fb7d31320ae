/**
 * NODE_EXTRA_CA_CERTS, set aside while an actors Node process starts.
 *
 * Node 20 reads and parses the file it names while it starts (OpenSSL 3:
 * nodejs/node issue 40524), about 40 ms of every process on a machine that
 * sets it, though actors makes no TLS connection. bin/actors, run as a
 * command, moves the variable to ACTORS_NODE_EXTRA_CA_CERTS before it execs
 * node, and puts it back first thing. The supervisor is started the same way
 * (setCaCertsAside on its environment, restoreCaCerts when it starts), so the
 * Run's command, and anything else actors starts, gets the variable as given.
 */
const ASIDE = 'ACTORS_NODE_EXTRA_CA_CERTS'

/** Move NODE_EXTRA_CA_CERTS of `env` aside, for a Node process of ours that restores it (restoreCaCerts). */
export function setCaCertsAside(env: NodeJS.ProcessEnv): void {
  const file = env.NODE_EXTRA_CA_CERTS
  delete env[ASIDE]
  if (!file) return
  env[ASIDE] = file
  delete env.NODE_EXTRA_CA_CERTS
}

/** Put back what setCaCertsAside (or bin/actors) set aside, before this process starts anything. */
export function restoreCaCerts(env: NodeJS.ProcessEnv = process.env): void {
  const file = env[ASIDE]
  if (file === undefined) return
  env.NODE_EXTRA_CA_CERTS = file
  delete env[ASIDE]
}
