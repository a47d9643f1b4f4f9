# Sourced by run.sbatch and sweep.sbatch inside a SLURM job: launches one cflrun run on every task
# of the job with srun (task 0 = rank 0 = server, the other tasks host the clients).
#
# cflrun_launch ARGS...   runs `srun --mpi=pmix $CFLRUN ARGS... [added options]`, adding
#   --threads $SLURM_CPUS_PER_TASK   when sbatch got --cpus-per-task (#SBATCH default: 1)
#   --device cuda                    when SLURM gave the job GPUs (--gres=gpu:N / --gpus); each rank
#                                    then takes GPU (local rank modulo GPUs on the node)
#   --out $CFLRUN_DEFAULT_OUT        when set and ARGS have no --out
#   --resume                         always (unless given): continue <out>.checkpoint if a stopped or
#                                    killed start of this run left one, else start from round 1
# each only if ARGS do not already give that option. A run stopped by SIGUSR1 (the time-limit
# signal, see run.sbatch) exits 75 after its checkpoint; the job then requeues itself
# (scontrol requeue; CFLRUN_REQUEUE=0 turns that off) and its next start resumes. $CFLRUN is the cflrun binary (default: build/cflrun
# of the source tree holding these scripts).

# This directory, jobs/slurm of the source tree (sbatch runs a spool copy of the .sbatch script, but
# this file is sourced from the tree).
CFLRUN_SLURM_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# cflrun's exit status after a signal stopped it with a checkpoint written (src/run/stop_signals.hpp).
CFLRUN_EXIT_INTERRUPTED=75

# Returns 0 if ARGS (after the option name) contain the option as `--name value` or `--name=value`.
cflrun_has_option() {
  local name="$1" arg
  shift
  for arg in "$@"; do
    if [ "$arg" = "$name" ] || [ "${arg%%=*}" = "$name" ]; then return 0; fi
  done
  return 1
}

# True when SLURM gave this job GPUs (SLURM sets CUDA_VISIBLE_DEVICES for --gres=gpu and --gpus).
cflrun_has_gpus() {
  [ "${SLURM_GPUS_ON_NODE:-0}" -gt 0 ] 2>/dev/null && return 0
  [ -n "${CUDA_VISIBLE_DEVICES:-}" ] && [ "${CUDA_VISIBLE_DEVICES}" != "NoDevFiles" ]
}

cflrun_launch() {
  local cflrun="${CFLRUN:-$(dirname "$(dirname "$CFLRUN_SLURM_DIR")")/build/cflrun}"
  local args=("$@")
  if [ ! -x "$cflrun" ]; then
    echo "cflrun: error: no cflrun binary at $cflrun; build it (./setup.sh) or set CFLRUN=/path/to/cflrun" >&2
    return 2
  fi
  if [ -n "${SLURM_CPUS_PER_TASK:-}" ] && ! cflrun_has_option --threads "${args[@]}"; then
    args+=(--threads "$SLURM_CPUS_PER_TASK")
  fi
  if cflrun_has_gpus && ! cflrun_has_option --device "${args[@]}"; then
    args+=(--device cuda)
  fi
  if [ -n "${CFLRUN_DEFAULT_OUT:-}" ] && ! cflrun_has_option --out "${args[@]}"; then
    args+=(--out "$CFLRUN_DEFAULT_OUT")
  fi
  cflrun_has_option --resume "${args[@]}" || args+=(--resume)
  echo "job ${SLURM_JOB_ID} (${SLURM_JOB_NAME}) on ${SLURM_JOB_NODELIST}: ${SLURM_NTASKS} task(s)" \
       "x ${SLURM_CPUS_PER_TASK:-?} cpu(s), GPUs: ${CUDA_VISIBLE_DEVICES:-none}, start ${SLURM_RESTART_COUNT:-0}," \
       "started $(date -Is)"
  # pmix: Debian's Open MPI 4.1 fails in MPI_Init under --mpi=none and --mpi=pmi2.
  # srun does not inherit --cpus-per-task from sbatch since SLURM 22.05, so it is passed on here.
  local srun_cmd=(srun --mpi=pmix --kill-on-bad-exit=1
                  ${SLURM_CPUS_PER_TASK:+--cpus-per-task="$SLURM_CPUS_PER_TASK"} "$cflrun" "${args[@]}")
  echo "${srun_cmd[*]}"
  CFLRUN_TIME_LIMIT_SIGNAL=0
  cflrun_run_step "${srun_cmd[@]}"
  local status=$?
  echo "exit status ${status}, finished $(date -Is)"
  # Requeued only after the time-limit signal: scancel (SIGTERM) stops the run the same way, with a
  # checkpoint, but the job stays cancelled; submitting it again resumes it.
  if [ "$status" -eq "$CFLRUN_EXIT_INTERRUPTED" ] && [ "$CFLRUN_TIME_LIMIT_SIGNAL" = 1 ] &&
     [ "${CFLRUN_REQUEUE:-1}" = 1 ]; then
    # Stopped by the time-limit signal after writing its checkpoint: back into the queue; the next
    # start runs the same command, whose --resume continues from the checkpoint.
    if scontrol requeue "$SLURM_JOB_ID"; then
      echo "requeued job ${SLURM_JOB_ID}; it resumes from the checkpoint when it starts again"
    else
      echo "cflrun: could not requeue job ${SLURM_JOB_ID} (submitted without --requeue?); submit the same" \
           "command again to resume from the checkpoint" >&2
    fi
  fi
  return "$status"
}

# cflrun_run_step SRUN_COMMAND...: runs the job step in the background and waits for it, passing
# SIGUSR1 (sbatch --signal=B:USR1@SECONDS, sent to this batch shell only) on to srun, which passes
# it to every task: cflrun stops after its round in progress, writes its checkpoint and exits 75.
# SIGTERM (the time limit itself; SLURM signals the tasks too) only keeps this shell waiting.
cflrun_run_step() {
  local step="" status interrupted
  trap 'interrupted=1; echo "batch shell got SIGUSR1 (time limit near): asking cflrun to stop after its round"
        CFLRUN_TIME_LIMIT_SIGNAL=1; [ -n "$step" ] && kill -USR1 "$step"' USR1
  trap 'interrupted=1; echo "batch shell got SIGTERM (time limit)"' TERM
  "$@" &
  step=$!
  while :; do
    interrupted=0
    wait "$step"
    status=$?
    # A trapped signal made `wait` return early (status > 128): wait again. Waiting for a step
    # that has ended meanwhile gives its own status (bash keeps it even once it reaped the step;
    # `kill -0` on it raced with that reaping: a step that stopped at once read as 138, not 75).
    [ "$interrupted" = 1 ] || break
  done
  trap - USR1 TERM
  return "$status"
}

# cflrun_sweep_task MANIFEST INDEX: runs the INDEX-th run line (0-based; blank lines and # comments
# skipped) of MANIFEST with --skip-complete --overwrite (and --resume), so a complete result is never
# redone, a stopped or killed one continues from its checkpoint, and one without a checkpoint starts
# again. Words split as the shell would, with '...' and "..." quoting.
cflrun_sweep_task() {
  local manifest="$1" index="$2" line
  if [ -z "$manifest" ] || [ ! -r "$manifest" ]; then
    echo "cflrun: error: expected a readable manifest file as the argument, got '${manifest}';" \
         "usage: sbatch --array=0-N%P jobs/slurm/sweep.sbatch MANIFEST" >&2
    return 2
  fi
  if [ -z "$index" ]; then
    echo "cflrun: error: not an array task (no SLURM_ARRAY_TASK_ID); submit with sbatch --array=0-N%P" >&2
    return 2
  fi
  line="$(grep -v -E '^[[:space:]]*(#|$)' "$manifest" | sed -n "$((index + 1))p")"
  if [ -z "$line" ]; then
    echo "cflrun: error: $manifest has $(grep -c -v -E '^[[:space:]]*(#|$)' "$manifest") run line(s)," \
         "so array index $index is out of range; submit --array=0-N with N = runs - 1" >&2
    return 2
  fi
  local args=() split_error
  # xargs splits as the shell would; an unbalanced quote is its error (status 1), never a run.
  if ! split_error="$(xargs printf '%s\n' <<< "$line" 2>&1 > /dev/null)"; then
    echo "cflrun: error: run line $index of $manifest cannot be split into words" \
         "(${split_error#xargs: }); close its quote or escape it: $line" >&2
    return 2
  fi
  mapfile -t args < <(xargs printf '%s\n' <<< "$line")
  if ! cflrun_has_option --out "${args[@]}"; then
    echo "cflrun: error: run line $index of $manifest has no --out; a sweep needs a fixed result file" \
         "per line so that resubmission can skip complete runs: $line" >&2
    return 2
  fi
  echo "manifest $manifest, run line $index: $line"
  cflrun_has_option --skip-complete "${args[@]}" || args+=(--skip-complete)
  cflrun_has_option --overwrite "${args[@]}" || args+=(--overwrite)
  cflrun_launch_until_written "$(cflrun_option_value --out "${args[@]}")" "${args[@]}"
}

# The value of option $1 in ARGS (`--name value` or `--name=value`; the last one given).
cflrun_option_value() {
  local name="$1" value="" previous=""
  shift
  for arg in "$@"; do
    if [ "$previous" = "$name" ]; then value="$arg"; fi
    if [ "${arg%%=*}" = "$name" ] && [ "$arg" != "$name" ]; then value="${arg#*=}"; fi
    previous="$arg"
  done
  echo "$value"
}

# cflrun_launch_until_written OUT ARGS...: cflrun_launch ARGS, once more if the step ended with
# status 0 but OUT does not exist (cflrun writes OUT only when the run is complete). srun can end so
# when it fails to launch the step ("task 0 launch failed: Unspecified error", seen with pmix when
# two jobs start their steps on a node at the same moment). Fails (status 1) if OUT is still missing.
cflrun_launch_until_written() {
  local out="$1" attempt status
  shift
  for attempt in 1 2; do
    cflrun_launch "$@"
    status=$?
    if [ "$status" -ne 0 ] || [ -e "$out" ]; then return "$status"; fi
    echo "cflrun: the job step ended with status 0 but wrote no $out (srun could not launch it?)" >&2
    [ "$attempt" = 1 ] && echo "launching the step again" >&2
  done
  echo "cflrun: error: $out still missing after two launches; see srun's messages above and" \
       "submit the array task again" >&2
  return 1
}
