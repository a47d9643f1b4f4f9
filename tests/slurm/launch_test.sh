#!/usr/bin/env bash
# The command line jobs/slurm/launch.sh builds from SLURM's environment and a manifest, with srun
# replaced by a stub that prints its arguments (no SLURM needed).
# Usage: launch_test.sh SOURCE_DIR
set -uo pipefail

src="$(cd "$1" && pwd)"
work="$(mktemp -d /tmp/cflrun-launch-test.XXXXXX)"
trap 'rm -rf "$work"' EXIT
# shellcheck source=../expect.sh
source "$src/tests/expect.sh"

# shellcheck source=../../jobs/slurm/launch.sh
source "$src/jobs/slurm/launch.sh"
srun() { echo "SRUN $*"; }

# env_run VAR=VALUE... -- ARGS...: cflrun_launch ARGS with those variables set.
env_run() {
  while [ "$1" != "--" ]; do export "${1?}"; shift; done
  shift
  cflrun_launch "$@"
}

fake_cflrun="$work/cflrun"
printf '#!/bin/sh\n' > "$fake_cflrun" && chmod +x "$fake_cflrun"
export CFLRUN="$fake_cflrun" SLURM_JOB_ID=42 SLURM_JOB_NAME=cflrun SLURM_JOB_NODELIST=n1 SLURM_NTASKS=3
unset SLURM_CPUS_PER_TASK SLURM_GPUS_ON_NODE CUDA_VISIBLE_DEVICES CFLRUN_DEFAULT_OUT
c="--mpi=pmix --kill-on-bad-exit=1"

expect plain_run 0 "^SRUN $c $fake_cflrun --config a.cfg --seed 2 --resume\$" \
  cflrun_launch --config a.cfg --seed 2
expect threads_from_cpus_per_task 0 "^SRUN $c --cpus-per-task=4 $fake_cflrun --config a.cfg --threads 4 --resume\$" \
  env_run SLURM_CPUS_PER_TASK=4 -- --config a.cfg
expect given_threads_kept 0 "^SRUN $c --cpus-per-task=4 $fake_cflrun --threads=2 --resume\$" \
  env_run SLURM_CPUS_PER_TASK=4 -- --threads=2
expect gpus_give_cuda 0 "^SRUN $c $fake_cflrun --config a.cfg --device cuda --resume\$" \
  env_run SLURM_GPUS_ON_NODE=2 -- --config a.cfg
expect cuda_visible_devices_give_cuda 0 "^SRUN $c $fake_cflrun --device cuda --resume\$" \
  env_run CUDA_VISIBLE_DEVICES=0,1 --
expect no_dev_files_is_no_gpu 0 "^SRUN $c $fake_cflrun --resume\$" \
  env_run CUDA_VISIBLE_DEVICES=NoDevFiles --
expect given_device_kept 0 "^SRUN $c $fake_cflrun --device cpu --resume\$" \
  env_run SLURM_GPUS_ON_NODE=2 -- --device cpu
expect default_out 0 "^SRUN $c $fake_cflrun --out results/cflrun-42.h5 --resume\$" \
  env_run CFLRUN_DEFAULT_OUT=results/cflrun-42.h5 --
expect given_out_kept 0 "^SRUN $c $fake_cflrun --out x.h5 --resume\$" \
  env_run CFLRUN_DEFAULT_OUT=results/cflrun-42.h5 -- --out x.h5
expect missing_binary 2 "no cflrun binary at /nonexistent" \
  env_run CFLRUN=/nonexistent --
# Without $CFLRUN: build/cflrun of the source tree (status 0 if built, 2 if not).
default_binary="$( (unset CFLRUN; cflrun_launch) 2>&1)"
if grep -Eq "^SRUN $c $src/build/cflrun --resume\$|no cflrun binary at $src/build/cflrun;" <<< "$default_binary"; then
  echo "ok   default_binary"
else
  fail_check default_binary "expected $src/build/cflrun, got: $default_binary"
fi

manifest="$work/manifest.txt"
cat > "$manifest" <<'EOF'
# a comment, then a blank line

--config a.cfg --seed 1 --out r/s1.h5
--config a.cfg --seed 2 --out 'r/with space.h5' --skip-complete
--config a.cfg --seed 3
--config a.cfg --seed 4 --out 'r/unclosed.h5 --skip-complete
EOF
# For the sweep lines srun also writes the run's --out file, as a complete run does (cwd: $work).
cd "$work" || exit 1
srun() { echo "SRUN $*"; local out; out="$(cflrun_option_value --out "$@")"; mkdir -p "$(dirname "$out")" && : > "$out"; }
expect sweep_line_0 0 "^SRUN $c $fake_cflrun --config a.cfg --seed 1 --out r/s1.h5 --skip-complete --overwrite --resume\$" \
  cflrun_sweep_task "$manifest" 0
expect sweep_line_1_quoted_no_duplicate 0 "^SRUN $c $fake_cflrun --config a.cfg --seed 2 --out r/with space.h5 --skip-complete --overwrite --resume\$" \
  cflrun_sweep_task "$manifest" 1
expect sweep_line_without_out 2 "run line 2 of .* has no --out" cflrun_sweep_task "$manifest" 2
expect sweep_line_with_unbalanced_quote 2 "run line 3 of .* cannot be split into words \(unmatched single quote.*close its quote" \
  cflrun_sweep_task "$manifest" 3
[ ! -e r/unclosed.h5 ] || fail_check sweep_line_with_unbalanced_quote "a run was launched"
expect sweep_index_out_of_range 2 "has 4 run line\(s\), so array index 4 is out of range" \
  cflrun_sweep_task "$manifest" 4
expect sweep_not_an_array 2 "not an array task" cflrun_sweep_task "$manifest" ""
expect sweep_no_manifest 2 "expected a readable manifest" cflrun_sweep_task "$work/none.txt" 0
# A step that srun could not launch ends with status 0 and no result file: launched once more.
rm -rf r
launches="$work/launches"
: > "$launches"
srun_launch_fails_once() {
  echo x >> "$launches"
  if [ "$(wc -l < "$launches")" -ge 2 ]; then mkdir -p r && : > r/s1.h5; fi
  echo "SRUN $*"
}
expect sweep_step_not_launched_once 0 "launching the step again" \
  eval 'srun() { srun_launch_fails_once "$@"; }; cflrun_sweep_task "$manifest" 0'
rm -rf r
expect sweep_step_never_launched 1 "r/s1.h5 still missing after two launches" \
  eval 'srun() { echo "SRUN $*"; }; cflrun_sweep_task "$manifest" 0'

# A run stopped by the time-limit signal (exit 75) requeues its job; other failures do not.
scontrol() { echo "SCONTROL $*"; }
# srun stub that stops with 75 when SIGUSR1 reaches it (as cflrun does when srun forwards the signal);
# the batch shell gets SIGUSR1 while the step runs (as sbatch --signal=B:USR1@... sends it), once the
# stub has set its trap (it says so with a file; a fixed delay lost that race on a loaded machine).
# (The sleep's output goes to /dev/null: holding the $(...) pipe it kept each check waiting 5 s.)
srun_ready="$work/srun_ready"
signalled_srun() { trap 'exit 75' USR1; : > "$srun_ready"; sleep 5 > /dev/null 2>&1 & wait $!; exit 1; }
stopped_run() {
  srun() { echo "SRUN $*"; signalled_srun; }
  local shell=$BASHPID  # this subshell, where cflrun_run_step traps the signal
  rm -f "$srun_ready"
  (for _ in $(seq 1 200); do [ -f "$srun_ready" ] && break; sleep 0.05; done; kill -USR1 "$shell") &
  cflrun_launch --config a.cfg
}
expect interrupted_run_requeues 75 "^requeued job 42" stopped_run
expect interrupted_run_calls_scontrol 75 "^SCONTROL requeue 42\$" stopped_run
no_requeue() { CFLRUN_REQUEUE=0 stopped_run | grep -c SCONTROL || true; }
cancelled_run() { srun() { return 75; }; cflrun_launch --config a.cfg; }  # SIGTERM (scancel): no requeue
expect cancelled_run_not_requeued 75 "exit status 75" cancelled_run
! cancelled_run 2>&1 | grep -q SCONTROL || fail_check cancelled_run_not_requeued "scontrol called"
expect requeue_can_be_turned_off 0 "^0\$" no_requeue
failed_run() { srun() { return 1; }; cflrun_launch --config a.cfg; }
expect failed_run_not_requeued 1 "exit status 1" failed_run
! failed_run 2>&1 | grep -q SCONTROL || fail_check failed_run_not_requeued "scontrol called"

expect_summary
