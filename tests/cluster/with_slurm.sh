#!/usr/bin/env bash
# with_slurm.sh CMD [ARGS...]: runs CMD against a private single-node Slurm started for it, then
# stops that Slurm again (also when CMD fails or the script is interrupted).
#
# The cluster is Debian's slurm-wlm + munge, run as root without systemd: munged, slurmctld and
# slurmd are started directly in the foreground (-F / -D) in the background of this script, with
# everything private to this run so that concurrent runs on one machine do not collide:
#   - a state folder from mktemp (munge key + socket, slurm.conf, state, spool, logs),
#   - two free TCP ports picked by the kernel (bind to port 0) for slurmctld and slurmd,
#   - SLURM_CONF exported to CMD, so sbatch/squeue/scancel/scontrol talk to this cluster only.
# slurm.conf is minimal: one node with this machine's CPUs, no cgroup plugins
# (proctrack/linuxproc, task/none), select/cons_tres with CR_CPU, no accounting.
#
# Exit status: CMD's, or 77 (ctest SKIP_RETURN_CODE) with "SKIP: <reason>" when Slurm cannot
# be started here (not root, packages missing, a daemon does not come up), or 1 instead when
# DGQ_CLUSTER_REQUIRED=1. DGQ_SLURM_KEEP=1 keeps the state folder (logs) for debugging.
set -uo pipefail

skip() {
  echo "SKIP: $*" >&2
  # A machine that must run the cluster tests can make a skip fail.
  [ "${DGQ_CLUSTER_REQUIRED:-0}" = 1 ] && { echo "FAIL: DGQ_CLUSTER_REQUIRED=1 and Slurm cannot start" >&2; exit 1; }
  exit 77
}

[ $# -ge 1 ] || { echo "usage: with_slurm.sh CMD [ARGS...]" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || skip "a private Slurm needs root here (slurmd runs jobs as their user); running as uid $(id -u)"
for tool in munged slurmctld slurmd sbatch squeue sinfo scontrol scancel python3; do
  command -v "$tool" >/dev/null || skip "$tool not found (Debian packages slurm-wlm, munge: tools/setup.sh installs them)"
done

state=$(mktemp -d /tmp/dgq-slurm.XXXXXX) || skip "mktemp failed"
chmod 700 "$state"
pids=()

stop_cluster() {
  # Cancel what is left of our jobs first, so no slurmstepd outlives the daemons.
  if [ -n "${SLURM_CONF:-}" ] && [ -f "$SLURM_CONF" ]; then
    scancel --quiet --user=root 2>/dev/null || true
    for _ in $(seq 1 50); do
      [ -z "$(squeue -h -o %i 2>/dev/null)" ] && break
      sleep 0.1
    done
  fi
  local pid
  [ -n "${watchdog:-}" ] && kill "$watchdog" 2>/dev/null && wait "$watchdog" 2>/dev/null
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null; done
  for pid in "${pids[@]}"; do
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
  done
  if [ "${DGQ_SLURM_KEEP:-0}" = 1 ]; then
    echo "with_slurm: kept $state" >&2
  else
    rm -rf "$state"
  fi
}
trap stop_cluster EXIT
trap 'exit 130' INT TERM

# Each daemon's pid is kept in the array (for stop_cluster) and in $state/pids for a watchdog:
# if this script is killed without running its traps (SIGKILL, e.g. a ctest timeout), the
# watchdog stops the daemons within a second and removes the state folder.
track_daemon() {
  pids+=("$1")
  echo "$1" >>"$state/pids"
}
(
  while kill -0 $$ 2>/dev/null; do sleep 1; done
  daemons=$(cat "$state/pids" 2>/dev/null)
  if [ -n "$daemons" ]; then
    kill -TERM $daemons 2>/dev/null
    for _ in $(seq 1 50); do kill -0 $daemons 2>/dev/null || break; sleep 0.1; done
    kill -KILL $daemons 2>/dev/null
  fi
  rm -rf "$state"
) </dev/null >/dev/null 2>&1 &
watchdog=$!

# The last lines of a daemon's log, for a skip or failure message.
log_tail() { tail -n 5 "$1" 2>/dev/null | tr '\n' ' '; }

# --- munge: a private key and socket --------------------------------------------------------
mkdir -p "$state/munge" && chmod 700 "$state/munge"
head -c 1024 /dev/urandom >"$state/munge/munge.key" && chmod 400 "$state/munge/munge.key"
socket="$state/munge/munge.socket"
munged --foreground --force --socket="$socket" --key-file="$state/munge/munge.key" \
  --pid-file="$state/munge/munged.pid" --seed-file="$state/munge/munged.seed" \
  --log-file="$state/munge/munged.log" >"$state/munge/munged.out" 2>&1 &
track_daemon $!
for _ in $(seq 1 50); do [ -S "$socket" ] && break; sleep 0.1; done
[ -S "$socket" ] || skip "munged did not start: $(log_tail "$state/munge/munged.out") $(log_tail "$state/munge/munged.log")"

# --- slurm.conf ---------------------------------------------------------------------------------
read -r ctld_port slurmd_port < <(python3 -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')
host=$(hostname -s)
cpus=$(nproc)
mkdir -p "$state/ctld" "$state/spool"
export SLURM_CONF="$state/slurm.conf"
cat >"$SLURM_CONF" <<EOF
# Private single-node Slurm of tests/cluster/with_slurm.sh
ClusterName=dgqtest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$socket
CredType=cred/munge
StateSaveLocation=$state/ctld
SlurmdSpoolDir=$state/spool
SlurmctldPidFile=$state/slurmctld.pid
SlurmdPidFile=$state/slurmd.pid
SlurmctldLogFile=$state/slurmctld.log
SlurmdLogFile=$state/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
MpiDefault=none
ReturnToService=2
MinJobAge=600
MailProg=/bin/true
KillWait=2
SchedulerParameters=batch_sched_delay=0,sched_min_interval=0
NodeName=dgqnode NodeHostname=$host NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=dgq Nodes=dgqnode Default=YES MaxTime=INFINITE State=UP
EOF

# --- daemons ------------------------------------------------------------------------------------
slurmctld -D -i -f "$SLURM_CONF" >"$state/slurmctld.out" 2>&1 &
track_daemon $!
slurmd -D -N dgqnode -f "$SLURM_CONF" >"$state/slurmd.out" 2>&1 &
track_daemon $!
up=0
for _ in $(seq 1 150); do
  if sinfo -h -N -o %t 2>/dev/null | grep -qx "idle"; then up=1; break; fi
  sleep 0.2
done
[ "$up" = 1 ] || skip "Slurm did not come up within 30 s: slurmctld: $(log_tail "$state/slurmctld.log") $(log_tail "$state/slurmctld.out") slurmd: $(log_tail "$state/slurmd.log") $(log_tail "$state/slurmd.out")"
echo "with_slurm: Slurm $(sinfo -V | cut -d' ' -f2) up (node dgqnode, $cpus CPU(s), ports $ctld_port/$slurmd_port, $state)" >&2


"$@"
