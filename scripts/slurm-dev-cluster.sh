#!/usr/bin/env bash
# A private single-node Slurm cluster, for trying `actors run --on slurm` and
# for the tests (docs/slurm.md). Everything it has lives in one directory of its
# own: config, munge key and socket, state, spool, pid and log files. It listens
# on ports of its own and never reads, writes, stops or reconfigures a cluster
# the machine already has (/etc/slurm, /run/munge, the system's daemons).
# Needs root and the Debian packages `slurmctld slurmd slurm-client munge`
# (Debian's package named `slurm` is an unrelated network monitor).
#
#   scripts/slurm-dev-cluster.sh start    write the config, start munged, slurmctld, slurmd; wait until the node answers
#   scripts/slurm-dev-cluster.sh status   exit 0 only when the node takes jobs (idle or mixed), else say why
#   scripts/slurm-dev-cluster.sh stop     stop this cluster's three daemons (by their own pid files)
#   scripts/slurm-dev-cluster.sh conf     print the path of this cluster's slurm.conf
#
# Clients reach it through SLURM_CONF:
#   export SLURM_CONF=$(scripts/slurm-dev-cluster.sh conf); sinfo
#
# Idempotent: `start` on a running cluster only checks it. Settings (environment):
#   SLURM_DEV_DIR         the cluster's directory (default /tmp/actors-slurm-dev; the tests look there)
#   SLURM_DEV_CONF        where its slurm.conf goes (default $SLURM_DEV_DIR/slurm.conf)
#   SLURM_DEV_PORTS       slurmctld,slurmd ports (default 6917,6918: not Slurm's 6817,6818)
#   SLURM_DEV_NODE        the node's name (default actors-dev); SLURM_DEV_CLUSTER the cluster's (default actorsdev)
#   SLURM_DEV_CPUS        CPUs the node declares (default 8, more than most machines have, so a few
#                         short test jobs run side by side; SlurmdParameters=config_overrides allows it)
#   SLURM_DEV_MIN_JOB_AGE seconds Slurm remembers a finished job (default Slurm's own 300)
# Facts behind every setting: FIELD-NOTES "Slurm on one machine" (the project's notes).
set -euo pipefail

DIR=${SLURM_DEV_DIR:-/tmp/actors-slurm-dev}
CONF=${SLURM_DEV_CONF:-$DIR/slurm.conf}
PORTS=${SLURM_DEV_PORTS:-6917,6918}
CTLD_PORT=${PORTS%%,*}
SLURMD_PORT=${PORTS##*,}
NODE=${SLURM_DEV_NODE:-actors-dev}
CLUSTER=${SLURM_DEV_CLUSTER:-actorsdev}
CPUS=${SLURM_DEV_CPUS:-8}
MIN_JOB_AGE=${SLURM_DEV_MIN_JOB_AGE:-300}
MUNGE=$DIR/munge
LOGS=$DIR/log
# The line every config this script writes starts with: the tests act on a cluster only when its config has it.
MARK='# Written by scripts/slurm-dev-cluster.sh'
export SLURM_CONF=$CONF

say() { printf 'slurm-dev-cluster: %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }

need() {
  command -v "$1" >/dev/null 2>&1 || die "$1 not found; install it: apt-get install -y slurmctld slurmd slurm-client munge"
}

# Run a daemon with every file descriptor above 2 closed: a daemon that
# inherits, say, a lock file's descriptor would hold that lock for its whole life.
detach() {
  (
    for fd in /proc/self/fd/*; do
      fd=${fd##*/}
      if [ "$fd" -gt 2 ] 2>/dev/null; then eval "exec ${fd}>&-" 2>/dev/null || true; fi
    done
    exec "$@" </dev/null >>"$LOGS/daemons.out" 2>&1
  )
}

# The pid in one of this cluster's pid files, if that process lives.
live_pid() {
  local pid
  [ -s "$1" ] || return 1
  pid=$(cat "$1")
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && echo "$pid"
}

# The node's state as sinfo prints it, with Slurm's flag suffixes (* not responding, + more states, ...).
raw_node_state() {
  [ -f "$CONF" ] || return 0
  sinfo -h -n "$NODE" -N -o '%T' 2>/dev/null | head -n1 || true
}

node_state() {
  raw_node_state | tr -d '*~#!%$@^+-'
}

# Takes jobs now: idle, or mixed (some CPUs free).
takes_jobs() {
  case "$(node_state)" in idle | mixed) return 0 ;; *) return 1 ;; esac
}

# Up: the node answers slurmctld (no `*`), whether or not its CPUs are all taken by running jobs.
node_up() {
  case "$(raw_node_state)" in *'*'*) return 1 ;; idle* | mixed* | allocated* | completing*) return 0 ;; *) return 1 ;; esac
}

write_conf() {
  local memory
  memory=$(slurmd -C | sed -n 's/.*RealMemory=\([0-9]*\).*/\1/p')
  [ -n "$memory" ] || die "could not read RealMemory from \`slurmd -C\`"
  cat >"$CONF.tmp" <<EOF
$MARK: a private one-node cluster, no accounting, no cgroups.
ClusterName=$CLUSTER
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$MUNGE/munge.socket
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=$LOGS/jobcomp.txt
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SlurmdParameters=config_overrides
ReturnToService=2
MpiDefault=none
SchedulerType=sched/backfill
MinJobAge=$MIN_JOB_AGE
KillWait=10
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool
SlurmctldPidFile=$DIR/slurmctld.pid
SlurmdPidFile=$DIR/slurmd.pid
SlurmctldLogFile=$LOGS/slurmctld.log
SlurmdLogFile=$LOGS/slurmd.log
NodeName=$NODE NodeHostname=$(hostname) NodeAddr=127.0.0.1 CPUs=$CPUS Sockets=1 CoresPerSocket=$CPUS ThreadsPerCore=1 RealMemory=$memory State=UNKNOWN
PartitionName=debug Nodes=$NODE Default=YES MaxTime=INFINITE State=UP
EOF
  chmod 0644 "$CONF.tmp"
  mv "$CONF.tmp" "$CONF"
}

# This cluster's own munged: its own key, socket, pid, log and seed files.
start_munge() {
  mkdir -p "$MUNGE"
  chown munge:munge "$MUNGE"
  chmod 0755 "$MUNGE"
  if [ ! -s "$MUNGE/munge.key" ]; then
    mungekey --create --keyfile "$MUNGE/munge.key" 2>/dev/null || dd if=/dev/urandom bs=1 count=1024 of="$MUNGE/munge.key" status=none
  fi
  chown munge:munge "$MUNGE/munge.key"
  chmod 0400 "$MUNGE/munge.key"
  if ! live_pid "$MUNGE/munged.pid" >/dev/null; then
    detach runuser -u munge -- munged --socket="$MUNGE/munge.socket" --key-file="$MUNGE/munge.key" \
      --pid-file="$MUNGE/munged.pid" --log-file="$MUNGE/munged.log" --seed-file="$MUNGE/munged.seed"
  fi
  for _ in $(seq 50); do munge -S "$MUNGE/munge.socket" -n </dev/null >/dev/null 2>&1 && return 0; sleep 0.1; done
  die "munged does not answer on $MUNGE/munge.socket; see $MUNGE/munged.log"
}

start() {
  [ "$(id -u)" = 0 ] || die "needs root (it starts slurmctld and slurmd as root, in $DIR)"
  need slurmctld; need slurmd; need sinfo; need munged
  if live_pid "$DIR/slurmctld.pid" >/dev/null && live_pid "$DIR/slurmd.pid" >/dev/null && node_up; then
    say "already up: node $NODE $(node_state), config $CONF"
    return 0
  fi
  # The directory is the cluster's own: made here, or made by this script before.
  if [ -e "$DIR" ] && [ ! -O "$DIR" ]; then die "$DIR exists and is not root's; choose another SLURM_DEV_DIR"; fi
  mkdir -p "$DIR" "$DIR/state" "$DIR/spool" "$LOGS" "$(dirname "$CONF")"
  chmod 0755 "$DIR"
  write_conf
  start_munge
  live_pid "$DIR/slurmctld.pid" >/dev/null || detach slurmctld -f "$CONF"
  live_pid "$DIR/slurmd.pid" >/dev/null || detach slurmd -f "$CONF" -N "$NODE"
  for _ in $(seq 300); do
    if node_up; then
      say "up: node $NODE $(node_state), $CPUS CPUs, config $CONF (export SLURM_CONF=$CONF)"
      return 0
    fi
    # A node left down by an earlier run (ReturnToService=2 brings back most of them).
    case "$(node_state)" in down | drain | drained | fail) scontrol update NodeName="$NODE" State=RESUME >/dev/null 2>&1 || true ;; esac
    sleep 0.1
  done
  die "node $NODE is not up after 30 s (sinfo: $(node_state)); see $LOGS/slurmctld.log and $LOGS/slurmd.log"
}

stop() {
  # By the pids this cluster's daemons wrote themselves, never by name: another slurmd may be the machine's own.
  local pidfile pid
  for pidfile in "$DIR/slurmd.pid" "$DIR/slurmctld.pid" "$MUNGE/munged.pid"; do
    pid=$(live_pid "$pidfile") || continue
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 100); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
  done
  say "stopped the cluster in $DIR"
}

status() {
  local state
  state=$(node_state)
  if [ ! -f "$CONF" ]; then
    say "not up: no config at $CONF (start it: scripts/slurm-dev-cluster.sh start)"
    return 1
  fi
  if ! live_pid "$DIR/slurmctld.pid" >/dev/null; then say "not up: slurmctld is not running"; return 1; fi
  if ! live_pid "$DIR/slurmd.pid" >/dev/null; then say "not up: slurmd is not running (node: ${state:-unknown})"; return 1; fi
  if takes_jobs; then
    say "up: node $NODE $state, config $CONF"
    return 0
  fi
  say "not taking jobs: node $NODE is ${state:-not known to slurmctld} (idle or mixed needed); see $LOGS/slurmctld.log"
  return 1
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) status ;;
  conf) echo "$CONF" ;;
  *) echo "usage: $0 start|stop|status|conf" >&2; exit 2 ;;
esac
