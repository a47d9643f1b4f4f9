#!/usr/bin/env bash
# A single-node SLURM cluster on this machine, from Debian's packages, for tests and for trying the
# jobs/slurm scripts without a real cluster. Everything it writes (config, keys, state, logs, pid
# files) lives in DIR; it stops only the daemons whose pid files are in DIR.
#
# Usage: local_cluster.sh start DIR   install what is missing, start munged, slurmctld, slurmd, and
#                                     wait until the node is idle; then: export SLURM_CONF=DIR/slurm.conf
#        local_cluster.sh stop DIR    stop the daemons started in DIR
#
# Needs root (apt-get, SlurmUser=root). No systemd: the daemons are started by hand. What works on
# Debian 12 without cgroups: proctrack/linuxproc, task/none, no accounting, select/cons_tres with
# CR_Core, and MpiDefault=pmix (Open MPI 4.1 fails in MPI_Init under --mpi=none and pmi2).
set -euo pipefail

readonly kPackages=(slurmctld slurmd slurm-client slurm-wlm-basic-plugins munge libpmix2 hdf5-tools)
# Not SLURM's default 6817, so a system SLURM on this machine is untouched; LOCAL_SLURM_PORT=N
# (slurmctld N, slurmd N + 1) lets a second local cluster (e.g. a long sweep) run beside the tests'.
readonly kCtldPort="${LOCAL_SLURM_PORT:-16817}"
readonly kSlurmdPort=$((kCtldPort + 1))
readonly kMinCpus=4        # CPUs the node declares at least (see node_line)
readonly kIdleTimeout=60   # seconds for the node to become idle (cold start: about 10 s)

die() { echo "local_cluster: error: $*" >&2; exit 1; }

install_missing() {
  local missing=() p
  for p in "${kPackages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ "${#missing[@]}" -eq 0 ] && return
  [ "$(id -u)" -eq 0 ] || die "packages ${missing[*]} are missing; run as root to install them"
  echo "local_cluster: installing ${missing[*]}"
  apt-get update -qq
  # apt does not start the daemons here (no systemd); they are started below with our own config.
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# The node line: localhost on 127.0.0.1 with the RealMemory `slurmd -C` measures (more would drain
# the node) and at least kMinCpus CPUs, so the jobs/slurm scripts' default of 3 tasks runs as
# written on a 2-core machine (SlurmdParameters=config_overrides keeps such a node in service).
node_line() {
  local hw cpus memory
  hw="$(slurmd -C | sed -n 1p)"
  cpus="$(sed -n 's/.* CPUs=\([0-9]*\).*/\1/p' <<< "$hw")"
  memory="$(sed -n 's/.* RealMemory=\([0-9]*\).*/\1/p' <<< "$hw")"
  [ -n "$cpus" ] && [ -n "$memory" ] || die "cannot read CPUs and RealMemory from 'slurmd -C': $hw"
  [ "$cpus" -ge "$kMinCpus" ] || cpus="$kMinCpus"
  echo "NodeName=localhost NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$memory State=UNKNOWN"
}

write_config() {
  local dir="$1"
  mkdir -p "$dir/ctld_state" "$dir/slurmd_spool"
  cat > "$dir/slurm.conf" <<EOF
# Single-node test cluster written by tests/slurm/local_cluster.sh.
ClusterName=cflrun-test
SlurmctldHost=$(hostname -s)(127.0.0.1)
SlurmctldPort=$kCtldPort
SlurmdPort=$kSlurmdPort
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge.socket
StateSaveLocation=$dir/ctld_state
SlurmdSpoolDir=$dir/slurmd_spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=pmix
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
SchedulerParameters=sched_interval=5,bf_interval=5
ReturnToService=2
SlurmdParameters=config_overrides
KillWait=5
$(node_line)
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP
EOF
}

start_munged() {
  local dir="$1"
  # Our own key and socket: the system's munged, if any, is left alone.
  [ -f "$dir/munge.key" ] || mungekey --create --keyfile="$dir/munge.key"
  chmod 600 "$dir/munge.key"
  munged --key-file="$dir/munge.key" --socket="$dir/munge.socket" --pid-file="$dir/munged.pid" \
         --log-file="$dir/munged.log" --seed-file="$dir/munged.seed" --force
}

wait_for_idle() {
  local dir="$1" state="" t
  for ((t = 0; t < kIdleTimeout; t++)); do
    state="$(sinfo -h -N -o '%T' 2>/dev/null | head -n 1 || true)"
    [ "$state" = "idle" ] && { echo "local_cluster: node localhost idle after ${t} s"; return; }
    sleep 1
  done
  echo "--- $dir/slurmctld.log" >&2; tail -n 20 "$dir/slurmctld.log" >&2 || true
  echo "--- $dir/slurmd.log" >&2; tail -n 20 "$dir/slurmd.log" >&2 || true
  die "node not idle after ${kIdleTimeout} s (state: '${state:-no answer}')"
}

start() {
  local dir="$1"
  [ "$(id -u)" -eq 0 ] || die "run as root: the test cluster runs its daemons and jobs as root"
  install_missing
  mkdir -p "$dir"
  dir="$(cd "$dir" && pwd)"
  write_config "$dir"
  export SLURM_CONF="$dir/slurm.conf"
  start_munged "$dir"
  slurmctld -f "$SLURM_CONF"
  slurmd -f "$SLURM_CONF" -N localhost
  wait_for_idle "$dir"
  echo "local_cluster: running; to use it: export SLURM_CONF=$SLURM_CONF"
}

# Stops one daemon by its pid file: SIGTERM, then SIGKILL after 10 s.
stop_daemon() {
  local pid_file="$1" pid t
  [ -f "$pid_file" ] || return 0
  pid="$(cat "$pid_file")"
  kill "$pid" 2>/dev/null || { rm -f "$pid_file"; return 0; }
  for ((t = 0; t < 100; t++)); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  kill -9 "$pid" 2>/dev/null || true
  rm -f "$pid_file"
}

# Cancels this cluster's jobs (so no job step outlives slurmd), then stops its daemons.
stop() {
  local dir="$1" daemon t
  export SLURM_CONF="$dir/slurm.conf"
  if [ -f "$dir/slurmctld.pid" ] && squeue -h -o '%i' 2>/dev/null | grep -q .; then
    scancel --full --quiet --user "$(id -un)" 2>/dev/null || true
    for ((t = 0; t < 30; t++)); do
      squeue -h -o '%i' 2>/dev/null | grep -q . || break
      sleep 0.5
    done
  fi
  for daemon in slurmd slurmctld munged; do
    stop_daemon "$dir/$daemon.pid"
  done
}

[ "$#" -eq 2 ] || die "usage: $0 start|stop DIR"
case "$1" in
  start) start "$2" ;;
  stop) stop "$2" ;;
  *) die "unknown command '$1'; expected start or stop" ;;
esac
