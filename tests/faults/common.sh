# Sourced by the fault scripts: the launcher/argument split and the wait for finished rounds.

# A killed mpirun leaves its Open MPI session directory (PMIx shared-memory segments, about 8 MB)
# under $TMPDIR; a CI run's fault tests left about 20 of them, a machine's many runs gigabytes.
# Each fault script gets its own TMPDIR, removed when it exits (a script with its own EXIT trap
# calls remove_session_tmp there).
session_tmp="$(mktemp -d)"
export TMPDIR="$session_tmp"
remove_session_tmp() { rm -rf "$session_tmp"; }
trap remove_session_tmp EXIT

# split_launch LAUNCH... -- CFLRUN_ARGS...: sets the arrays `launch` (the command that starts
# cflrun, e.g. "cflrun" or "mpiexec -n 3 cflrun") and `args` (cflrun's options).
split_launch() {
  launch=()
  while [ "$1" != "--" ]; do launch+=("$1"); shift; done
  shift
  args=("$@")
}

# rounds_in FILE: completed_rounds of a result file that a run is still writing ("" if unreadable).
rounds_in() {
  HDF5_USE_FILE_LOCKING=FALSE h5dump -a /completed_rounds "$1" 2>/dev/null | sed -n 's/.*(0): \([0-9]*\).*/\1/p'
}

# wait_for_rounds FILE N PID: waits (at most 60 s) until FILE holds N finished rounds or PID has
# ended; prints the rounds it last saw.
wait_for_rounds() {
  local file="$1" wanted="$2" pid="$3" rounds=""
  for _ in $(seq 1 1200); do
    sleep 0.05
    rounds="$(rounds_in "$file")"
    [ -n "$rounds" ] && [ "$rounds" -ge "$wanted" ] && break
    kill -0 "$pid" 2>/dev/null || break
  done
  echo "${rounds:-0}"
}

# run_reference WORK CHECK_RESULTS: the uninterrupted run of `launch` `args` (split_launch) as
# WORK/reference.h5, its fixture text in WORK/reference.txt; calls `fail` if either fails.
run_reference() {
  "${launch[@]}" "${args[@]}" --quiet --out "$1/reference.h5" > "$1/reference.log" 2>&1 ||
    { cat "$1/reference.log"; fail "the uninterrupted run failed"; }
  "$2" dump "$1/reference.h5" > "$1/reference.txt" || fail "cannot read the reference file"
}

# same_as_reference WORK CHECK_RESULTS FILE: whether FILE holds what WORK/reference.h5 holds
# (check_results dump: everything but timings); FILE's text is left in WORK/run.txt.
same_as_reference() {
  "$2" dump "$3" > "$1/run.txt" 2>&1 && diff -q "$1/reference.txt" "$1/run.txt" > /dev/null
}
