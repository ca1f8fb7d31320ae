#!/usr/bin/env bash
# A single-node Slurm cluster on this machine, for trying `actors run --on slurm`
# and for the tests (docs/slurm.md). Needs root and the Debian packages
# `slurmctld slurmd slurm-client munge` (Debian's package named `slurm` is an
# unrelated network monitor).
#
#   scripts/slurm-dev-cluster.sh start    write slurm.conf, start munged, slurmctld, slurmd; wait for `idle`
#   scripts/slurm-dev-cluster.sh status   exit 0 when the node answers `idle`/`mixed`/`allocated`
#   scripts/slurm-dev-cluster.sh stop     stop the three daemons
#
# Idempotent: `start` on a running cluster only checks it. Settings (environment):
#   SLURM_CONF            where slurm.conf goes (default /etc/slurm/slurm.conf; clients read it there)
#   SLURM_DEV_CPUS        CPUs the node declares (default 8, more than most machines have, so a few
#                         short test jobs run side by side; SlurmdParameters=config_overrides allows it)
#   SLURM_DEV_MIN_JOB_AGE seconds Slurm remembers a finished job (default Slurm's own 300; tests
#                         do not need a shorter one)
# Facts behind every setting: ../../shared/FIELD-NOTES.md "Slurm on one machine".
set -euo pipefail

CONF=${SLURM_CONF:-/etc/slurm/slurm.conf}
CPUS=${SLURM_DEV_CPUS:-8}
MIN_JOB_AGE=${SLURM_DEV_MIN_JOB_AGE:-300}
STATE=/var/spool/slurmctld
SPOOL=/var/spool/slurmd
LOGS=/var/log/slurm
RUNDIR=/run/slurm-dev
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

node_state() {
  sinfo -h -N -o '%T' 2>/dev/null | head -n1 | tr -d '*~#!%$@^-' || true
}

is_up() {
  case "$(node_state)" in idle | mixed | allocated | completing) return 0 ;; *) return 1 ;; esac
}

write_conf() {
  local memory
  memory=$(slurmd -C | sed -n 's/.*RealMemory=\([0-9]*\).*/\1/p')
  [ -n "$memory" ] || die "could not read RealMemory from \`slurmd -C\`"
  mkdir -p "$(dirname "$CONF")" "$STATE" "$SPOOL" "$LOGS" "$RUNDIR"
  cat >"$CONF.tmp" <<EOF
# Written by scripts/slurm-dev-cluster.sh: one node, no accounting, no cgroups.
ClusterName=actorsdev
SlurmctldHost=localhost(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
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
StateSaveLocation=$STATE
SlurmdSpoolDir=$SPOOL
SlurmctldPidFile=$RUNDIR/slurmctld.pid
SlurmdPidFile=$RUNDIR/slurmd.pid
SlurmctldLogFile=$LOGS/slurmctld.log
SlurmdLogFile=$LOGS/slurmd.log
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$CPUS Sockets=1 CoresPerSocket=$CPUS ThreadsPerCore=1 RealMemory=$memory State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP
EOF
  mv "$CONF.tmp" "$CONF"
}

ensure_munge_key() {
  local key=/etc/munge/munge.key
  if [ ! -s "$key" ]; then
    say "creating $key"
    mkdir -p /etc/munge
    mungekey --create --keyfile "$key" 2>/dev/null || dd if=/dev/urandom bs=1 count=1024 of="$key" status=none
  fi
  chown munge:munge "$key"
  chmod 0400 "$key"
  mkdir -p /run/munge /var/log/munge /var/lib/munge
  chown munge:munge /run/munge /var/log/munge /var/lib/munge
}

running() { pgrep -x "$1" >/dev/null 2>&1; }

start() {
  [ "$(id -u)" = 0 ] || die "needs root (it writes $CONF and starts system daemons)"
  need slurmctld; need slurmd; need sinfo; need munged
  if running slurmctld && running slurmd && is_up; then
    say "already up: node $(node_state)"
    return 0
  fi
  write_conf
  ensure_munge_key
  if ! running munged; then
    detach runuser -u munge -- munged
  fi
  for _ in $(seq 50); do munge -n </dev/null >/dev/null 2>&1 && break; sleep 0.1; done
  munge -n </dev/null >/dev/null 2>&1 || die "munged does not answer; see /var/log/munge/munged.log"
  running slurmctld || detach slurmctld -f "$CONF"
  running slurmd || detach slurmd -f "$CONF"
  for _ in $(seq 300); do
    if is_up; then
      say "up: node $(node_state), $CPUS CPUs, config $CONF"
      return 0
    fi
    # A node left down by an earlier run (ReturnToService=2 brings back most of them).
    case "$(node_state)" in down | drain | drained | fail) scontrol update NodeName=localhost State=RESUME >/dev/null 2>&1 || true ;; esac
    sleep 0.1
  done
  die "the node is not idle after 30 s (sinfo: $(node_state)); see $LOGS/slurmctld.log and $LOGS/slurmd.log"
}

stop() {
  # By the pids the daemons wrote themselves, never by name: other slurmd/slurmctld may be someone else's.
  local pidfile pid
  for pidfile in "$RUNDIR/slurmd.pid" "$RUNDIR/slurmctld.pid"; do
    [ -s "$pidfile" ] || continue
    pid=$(cat "$pidfile")
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 100); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
  done
  say "stopped slurmd and slurmctld (munged left running: other tools may use it)"
}

status() {
  if is_up; then
    say "up: node $(node_state)"
    return 0
  fi
  say "not up (node: $(node_state))"
  return 1
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) status ;;
  *) echo "usage: $0 start|stop|status" >&2; exit 2 ;;
esac
