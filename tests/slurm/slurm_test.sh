#!/usr/bin/env bash
# The SLURM workflow on a real single-node SLURM (tests/slurm/local_cluster.sh: slurmctld, slurmd
# and munged from Debian's packages, started here and stopped on exit). Part `sweep` (about 30 s):
#   1. a 3-seed sweep of a tiny Fashion-MNIST CLoVE config, submitted as ONE job array of
#      jobs/slurm/sweep.sbatch; array task 1 is cancelled mid-run (SIGTERM): tasks 0 and 2 leave
#      complete result files, task 1 a partial file marked "interrupted" and a checkpoint;
#   2. the same array resubmitted: only task 1 runs again, resuming from its checkpoint; tasks 0 and
#      2 say "already complete" and their files are untouched;
#   3. the same array resubmitted again: nothing runs, no file changes;
#   4. one run of jobs/slurm/run.sbatch with its defaults (3 tasks, file and log named after the job);
#   5. `cflrun report` on the sweep's results, if cflrun has that subcommand;
#   6. the sweep packed onto nodes: jobs/slurm/gpu_node.sbatch as a 2-task array (a part of the
#      manifest each, 2 runs at a time, on the CPU here), every run complete, each task's progress
#      lines, and the paper report printed by the task that saw the manifest complete.
# Part `time-limit` (about 5 minutes, mostly waiting on SLURM's clock: label long):
#   7. a run.sbatch job whose time limit (3 min) is shorter than the run: SLURM sends SIGUSR1 (its
#      --signal=B:USR1@60), cflrun checkpoints and exits 75, the job requeues itself, resumes and
#      completes with a file equal to an uninterrupted run's (check_results identical).
# Usage: slurm_test.sh CFLRUN SOURCE_DIR CHECK_RESULTS sweep|time-limit
#   (as root; exit 77 = skipped when not root)
set -euo pipefail

readonly kJobTimeout=240      # seconds for one submitted job or array to finish
readonly kKillTimeout=180     # seconds for array task 1 to finish its first round
readonly kLimitJobTimeout=840  # seconds for the time-limited job: up to 3 starts, 2 min requeue delay each
readonly kLimitRounds=400     # rounds of the time-limited run: well over its 3 minutes on 2 cores
readonly kRounds=8            # rounds per sweep run: task 1 is cancelled after round 1 of these
readonly kSeeds=(1 2 3)       # one array task per seed; task i runs seed kSeeds[i]

[ "$#" -eq 4 ] || { echo "usage: $0 CFLRUN SOURCE_DIR CHECK_RESULTS sweep|time-limit" >&2; exit 2; }
# Seconds for the whole part: fail (and clean up) before CTest's timeout (tests/slurm/CMakeLists.txt).
case "$4" in
  sweep) readonly kDeadline=280 ;;
  time-limit) readonly kDeadline=1680 ;;
  *) echo "slurm_test: error: unknown part '$4'; expected sweep or time-limit" >&2; exit 2 ;;
esac
if [ "$(id -u)" -ne 0 ]; then
  echo "slurm_test: skipped: needs root to install and run a local SLURM (CI runs as root)"
  exit 77
fi
cflrun="$(readlink -f "$1")"
src="$(cd "$2" && pwd)"
check="$(readlink -f "$3")"
[ -x "$cflrun" ] || { echo "slurm_test: error: no cflrun binary at $1; build it first" >&2; exit 2; }
work="$(mktemp -d /tmp/cflrun-slurm-test.XXXXXX)"
cluster="$work/cluster"
passed=0
started=$SECONDS

cleanup() {
  "$src/tests/slurm/local_cluster.sh" stop "$cluster" || true
  if [ "$passed" -eq 1 ]; then rm -rf "$work"; else echo "slurm_test: kept $work for inspection"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

say() { printf 'slurm_test [%3d s]: %s\n' "$((SECONDS - started))" "$*"; }

fail() {
  echo "slurm_test: FAIL: $*" >&2
  local log
  for log in "$work"/results/logs/*.log; do
    [ -f "$log" ] && { echo "--- $log" >&2; tail -n 8 "$log" >&2; }
  done
  echo "--- $cluster/slurmctld.log" >&2; tail -n 15 "$cluster/slurmctld.log" >&2 || true
  exit 1
}

# An attribute of a result file ("" if unreadable); readable while cflrun still writes the file.
attribute() {
  HDF5_USE_FILE_LOCKING=FALSE h5dump -a "$2" "$1" 2>/dev/null | sed -n 's/^ *(0): "*\([^"]*\)"*$/\1/p' || true
}

result_file() { echo "$work/results/sweep/clove_seed$1.h5"; }

# Seconds left of $1 (a timeout) and of the whole test's deadline, whichever is less.
time_left() {
  local left=$((kDeadline - (SECONDS - started)))
  echo $((left < $1 ? left : $1))
}

# Waits until job (or job array) $1 has left the queue (within $2 seconds, default kJobTimeout).
wait_for_job() {
  local job="$1" t limit
  limit="$(time_left "${2:-$kJobTimeout}")"
  for ((t = 0; t < limit; t++)); do
    squeue -h -j "$job" 2>/dev/null | grep -q . || return 0
    sleep 1
  done
  fail "job $job still queued or running after ${limit} s: $(squeue -h -j "$job")"
}

submit_sweep() {
  sbatch --parsable --array=0-$((${#kSeeds[@]} - 1))%2 --ntasks=2 "$src/jobs/slurm/sweep.sbatch" sweep.txt
}

# Fingerprint of a result file: modification time (ns) and checksum.
fingerprint() { echo "$(stat -c %y "$1") $(sha256sum < "$1")"; }

expect_status() {
  local file="$1" status="$2" found
  found="$(attribute "$file" /status)"
  [ "$found" = "$status" ] || fail "$file: expected status '$status', found '${found:-unreadable}'"
}

# Checks that task i of array job $1 skipped its run: log says so, file unchanged since $2 (a
# fingerprint).
expect_skipped() {
  local job="$1" i="$2" before="$3" log="$work/results/logs/cflsweep-$1_$2.log"
  grep -q "already complete" "$log" || fail "task $i of job $job ran again: no 'already complete' in $log"
  [ "$(fingerprint "$(result_file "${kSeeds[$i]}")")" = "$before" ] \
    || fail "task $i of job $job changed $(result_file "${kSeeds[$i]}")"
}

start_cluster() {
  "$src/tests/slurm/local_cluster.sh" start "$cluster"
  export SLURM_CONF="$cluster/slurm.conf" CFLRUN="$cflrun"
  cd "$work"
  mkdir -p results/logs
  local seed
  for seed in "${kSeeds[@]}"; do
    echo "--config $src/tests/integration/tiny_clove.cfg --seed $seed --rounds $kRounds --out results/sweep/clove_seed$seed.h5"
  done > sweep.txt
}

# 1. The sweep, with array task 1 cancelled once its file holds a finished round.
sweep_with_one_task_killed() {
  local job victim t limit rounds=""
  job="$(submit_sweep)"
  victim="$(result_file "${kSeeds[1]}")"
  say "submitted sweep as array job $job; waiting for task 1 to finish a round"
  limit="$(time_left "$kKillTimeout")"
  for ((t = 0; t < limit * 5; t++)); do
    rounds="$(attribute "$victim.partial" /completed_rounds)"
    [ -n "$rounds" ] && [ "$rounds" -ge 1 ] && break
    sleep 0.2
  done
  [ -n "$rounds" ] && [ "$rounds" -ge 1 ] || fail "task 1 wrote no finished round within ${limit} s"
  scancel "${job}_1"
  say "cancelled task ${job}_1 after $rounds finished round(s)"
  wait_for_job "$job"
  expect_status "$(result_file "${kSeeds[0]}")" complete
  expect_status "$(result_file "${kSeeds[2]}")" complete
  [ ! -e "$victim" ] || fail "the cancelled task left a file at its --out $victim"
  local status
  status="$(attribute "$victim.partial" /status)"
  [[ "$status" == "interrupted: SIGTERM after round"* ]] || fail "$victim.partial: status '$status', expected interrupted"
  [ -f "$victim.checkpoint" ] || fail "the cancelled task left no checkpoint"
  say "tasks 0 and 2 complete, task 1 left a partial file ($status) and a checkpoint"
}

# 2. Resubmitting reruns only the cancelled task.
resubmit_reruns_only_killed_task() {
  local job before0 before2
  before0="$(fingerprint "$(result_file "${kSeeds[0]}")")"
  before2="$(fingerprint "$(result_file "${kSeeds[2]}")")"
  job="$(submit_sweep)"
  say "resubmitted sweep as array job $job"
  wait_for_job "$job"
  expect_skipped "$job" 0 "$before0"
  expect_skipped "$job" 2 "$before2"
  expect_status "$(result_file "${kSeeds[1]}")" complete
  grep -q "resumed from .*checkpoint after round" "$work/results/logs/cflsweep-${job}_1.log" ||
    fail "task 1 did not resume from its checkpoint"
  say "only task 1 ran again, resumed from its checkpoint; all 3 files complete"
}

# 3. Resubmitting a finished sweep runs nothing.
resubmit_runs_nothing() {
  local job i before=()
  for i in "${!kSeeds[@]}"; do before[i]="$(fingerprint "$(result_file "${kSeeds[i]}")")"; done
  job="$(submit_sweep)"
  say "resubmitted finished sweep as array job $job"
  wait_for_job "$job"
  for i in "${!kSeeds[@]}"; do expect_skipped "$job" "$i" "${before[i]}"; done
  say "nothing ran again"
}

# 4. One run with run.sbatch's defaults: 3 tasks, results/<name>-<id>.h5, results/logs/<name>-<id>.log.
single_run() {
  local job
  job="$(sbatch --parsable "$src/jobs/slurm/run.sbatch" --config "$src/tests/integration/tiny_clove.cfg" --rounds 2)"
  say "submitted run.sbatch as job $job"
  wait_for_job "$job"
  expect_status "$work/results/cflrun-$job.h5" complete
  grep -q "3 rank(s)" "$work/results/logs/cflrun-$job.log" || fail "job $job did not run 3 ranks"
  say "run.sbatch wrote results/cflrun-$job.h5 and results/logs/cflrun-$job.log"
}

# 5. The report over the sweep's results.
report() {
  if ! "$cflrun" report --help > /dev/null 2>&1; then
    say "cflrun has no report subcommand yet; report step skipped"
    return
  fi
  local table
  table="$("$cflrun" report "$work/results/sweep")" || fail "cflrun report failed: $table"
  echo "$table"
  # The 3 seeds differ only by seed: one group, n = 3 runs (the table's first column).
  grep -Eq '^\| *3 *\|' <<< "$table" || fail "cflrun report: expected one group of n = 3 runs (a row '| 3 | ...')"
}

# 6. The same sweep packed onto "nodes": gpu_node.sbatch as a 2-task array, a part of the manifest
# each, 2 runs at once (no GPU here: on the CPU, without MPS).
packed_on_nodes() {
  local job log i reports=0
  sed 's#results/sweep/#results/packed/#' sweep.txt > packed.txt
  job="$(sbatch --parsable --array=0-1 --cpus-per-task=1 --time=10 "$src/jobs/slurm/gpu_node.sbatch" \
         packed.txt 2)"
  say "submitted gpu_node.sbatch as a 2-task array $job"
  wait_for_job "$job"
  for i in "${!kSeeds[@]}"; do expect_status "$work/results/packed/clove_seed${kSeeds[i]}.h5" complete; done
  for i in 0 1; do
    log="$work/results/logs/cflgpu-${job}_$i.log"
    grep -q "gpu_node: part $i/2 of packed.txt, 2 at a time" "$log" || fail "task $i: no part line in $log"
    grep -Eq "ok +[0-9.]+ s  1/[12]  " "$log" || fail "task $i: no progress line in $log"
    grep -q "| Table 1 | label_skew_1 | fmnist | clove | $kRounds | accuracy | client mean | 3 |" "$log" &&
      reports=$((reports + 1))
  done
  [ "$reports" -ge 1 ] || fail "no task printed the paper report of the 3 runs"
  say "the 2 parts ran the 3 runs; the paper report of n = 3 printed"
}

# 7. A run longer than its time limit: signalled, checkpointed, requeued, resumed, complete, and equal
# to an uninterrupted run of the same options on the same ranks and threads (mpiexec -n 2 here).
time_limit_requeue() {
  local job out="$work/results/timelimit.h5" log
  local args=(--config "$src/tests/integration/tiny_clove.cfg" --rounds "$kLimitRounds" --threads 1)
  job="$(sbatch --parsable --ntasks=2 --time=3 --signal=B:USR1@60 -J timelimit "$src/jobs/slurm/run.sbatch" \
         "${args[@]}" --quiet --out "$out")"
  say "submitted a ${kLimitRounds}-round run with a 3-minute limit as job $job; reference run alongside"
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpiexec -n 2 --oversubscribe "$cflrun" "${args[@]}" \
    --quiet --out "$work/results/reference.h5" > "$work/reference.log" 2>&1 || fail "the reference run failed"
  wait_for_job "$job" "$kLimitJobTimeout"
  log="$work/results/logs/timelimit-$job.log"
  grep -q "interrupted by SIGUSR1 after round" "$log" || fail "job $job was not stopped by SIGUSR1 ($log)"
  grep -q "requeued job $job" "$log" || fail "job $job did not requeue itself"
  grep -q "resumed from .*checkpoint after round" "$log" || fail "job $job did not resume after the requeue"
  expect_status "$out" complete
  "$check" identical "$work/results/reference.h5" "$out" || fail "the requeued run differs from the uninterrupted one"
  say "job $job: $(grep -o 'interrupted by SIGUSR1 after round [0-9]*' "$log" | head -n 1), requeued, resumed, identical"
}

start_cluster
say "cluster up"
if [ "$4" = sweep ]; then
  sweep_with_one_task_killed
  resubmit_reruns_only_killed_task
  resubmit_runs_nothing
  single_run
  report
  packed_on_nodes
else
  time_limit_requeue
fi
passed=1
say "PASS"
