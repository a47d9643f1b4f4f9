#!/usr/bin/env bash
# SIGTERM (what SLURM sends at the time limit) stops a run after its round in progress: exit 75,
# the partial file marked "interrupted", a checkpoint written; --resume then completes it equal to
# an uninterrupted run.
# Usage: signal_resume.sh CHECK_RESULTS WORKDIR SIGNAL LAUNCH... -- CFLRUN_ARGS...
set -u
check="$1"; work="$2"; signal="$3"; shift 3
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
split_launch "$@"
rm -rf "$work"; mkdir -p "$work"
fail() { echo "signal_resume: FAIL: $*"; exit 1; }

"${launch[@]}" "${args[@]}" --quiet --out "$work/reference.h5" > /dev/null 2>&1 || fail "the uninterrupted run failed"
setsid "${launch[@]}" "${args[@]}" --quiet --out "$work/run.h5" > "$work/signalled.log" 2>&1 &
pid=$!
wait_for_rounds "$work/run.h5.partial" 1 "$pid" > /dev/null
# Every rank, as SLURM signals every task: mpiexec's children, or the single process itself.
case "$(basename "${launch[0]}")" in
  mpiexec|mpirun) pkill "-$signal" -P "$pid" ;;
  *) kill "-$signal" "$pid" ;;
esac
wait "$pid"
status=$?
cat "$work/signalled.log"
[ "$status" -eq 75 ] || fail "exit status $status, expected 75 (interrupted, resumable)"
h5dump -a /status "$work/run.h5.partial" | grep -q '"interrupted: SIG' || fail "the partial file is not marked interrupted"
[ -f "$work/run.h5.checkpoint" ] || fail "no checkpoint"
"${launch[@]}" "${args[@]}" --quiet --out "$work/run.h5" --resume > "$work/resumed.log" 2>&1 ||
  { cat "$work/resumed.log"; fail "the resumed run failed"; }
"$check" identical "$work/reference.h5" "$work/run.h5" || fail "the resumed run differs"
echo "signal_resume: ok"
