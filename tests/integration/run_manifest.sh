#!/usr/bin/env bash
# jobs/slurm/run_manifest.py on real runs: a one-rank and a two-rank run end ok and write their
# result files, a run past the deadline is stopped and leaves its partial file and checkpoint for
# --resume, a run with a bad option is logged as failed (exit status 1), a run that waits for more
# slots than the long run leaves is never started, a run expected (--expect) to take longer than
# the time left is skipped and the next line starts in its place; a manifest with an unbalanced
# quote starts no run; a run's scheduling autogroup (its own session's) has the runner's nice value.
# Usage: run_manifest.sh RUNNER CFLRUN MPIEXEC TINY_CONFIG OUT_DIR
set -euo pipefail
runner="$1" cflrun="$2" mpiexec="$3" tiny="$4" out="$5"
rm -rf "$out" && mkdir -p "$out"
cat > "$out/manifest.txt" <<LINES
# a comment line, skipped
--config $tiny --rounds 1 --out $out/one_rank/seed1.h5
--config $tiny --rounds 1 --out $out/two_ranks/seed1.h5
--config $tiny --rounds 100000 --checkpoint-every 1 --out $out/long/seed1.h5
--config $tiny --rounds 1 --lr -1 --out $out/bad/seed1.h5
--config $tiny --rounds 1 --out $out/too_long/seed1.h5
--config $tiny --rounds 1 --out $out/after_skip/seed1.h5
--config $tiny --rounds 1 --out $out/late/seed1.h5
LINES
fail() { echo "run_manifest: FAIL: $*"; cat "$out/runs.tsv" 2> /dev/null; exit 1; }
status=0
# A 25 s deadline: the three 1-round runs before the long one must end within it also beside a
# loaded machine (15 s failed once beside two sweeps and ctest -j2).
mkdir -p "$out/tmp"
# Under nice 1 (not more: the short runs must keep their pace beside other tests), which the long
# run's own scheduling group takes where the kernel has autogroups.
TMPDIR="$out/tmp" nice -n 1 python3 "$runner" "$out/manifest.txt" --cflrun "$cflrun" --mpiexec "$mpiexec" --slots 3 \
  --deadline 25 --ranks 'two_ranks=2' --ranks 'late=3' --expect 'too_long=60' --extra "--threads 1 --quiet" --log "$out/runs.tsv" \
  --run-logs "$out/logs" &
runner_pid=$!
group_nice=""
if [ "$(cat /proc/sys/kernel/sched_autogroup_enabled 2> /dev/null)" = 1 ]; then
  for _ in $(seq 100); do
    pid="$(pgrep -f -- "$out/long/seed1.h5" | head -1 || true)"
    group_nice="$( [ -n "$pid" ] && awk '{print $NF}' "/proc/$pid/autogroup" 2> /dev/null || true)"
    [ "$group_nice" = 1 ] && break
    sleep 0.2
  done
fi
wait "$runner_pid" || status=$?
[ "$(cat /proc/sys/kernel/sched_autogroup_enabled 2> /dev/null)" != 1 ] || [ "$group_nice" = 1 ] ||
  fail "the long run's autogroup has nice '$group_nice', not the runner's 1"
[ "$status" = 1 ] || fail "exit status $status, expected 1 (one run failed)"
state() { awk -F'\t' -v i="$1" '$1 == i {print $2 "/" $4}' "$out/runs.tsv"; }
[ "$(state 0)" = "ok/1" ] || fail "one-rank run: $(state 0)"
[ "$(state 1)" = "ok/2" ] || fail "two-rank run: $(state 1)"
[ "$(state 2)" = "stopped/1" ] || fail "long run: $(state 2)"
[ "$(state 3)" = "failed 1/1" ] || fail "bad run: $(state 3)"
[ "$(state 4)" = "skipped/1" ] || fail "run expected to outlast the deadline: $(state 4)"
[ "$(state 5)" = "ok/1" ] || fail "run after the skipped one: $(state 5)"
[ "$(state 6)" = "not started/3" ] || fail "late run: $(state 6)"
for f in one_rank/seed1.h5 two_ranks/seed1.h5 after_skip/seed1.h5 long/seed1.h5.partial long/seed1.h5.checkpoint; do
  [ -s "$out/$f" ] || fail "$f missing"
done
for f in bad late too_long; do
  [ ! -e "$out/$f/seed1.h5" ] || fail "a result file of the failed, late or skipped run $f"
done
grep -q "lr" "$out/logs/run0003.log" || fail "the bad run's log does not name --lr"
# Each run had its own TMPDIR (Open MPI's session directories), removed when it ended.
[ -z "$(ls -A "$out/tmp")" ] || fail "runs' TMPDIRs left behind: $(ls "$out/tmp")"
grep -q "interrupted by SIGTERM" "$out/logs/run0002.log" || fail "the long run was not stopped by SIGTERM"
# A line that cannot be split into words (an unbalanced quote): status 2 naming it, no run started.
printf -- '--config %s --rounds 1 --out %s/quoted/a.h5\n--config %s --out '"'"'%s/quoted/b.h5\n' \
  "$tiny" "$out" "$tiny" "$out" > "$out/unbalanced.txt"
status=0
message="$(python3 "$runner" "$out/unbalanced.txt" --cflrun "$cflrun" --deadline 25 2>&1)" || status=$?
[ "$status" = 2 ] || fail "unbalanced quote: exit status $status, expected 2"
grep -q "unbalanced.txt:2: no closing quotation" <<< "$message" || fail "unbalanced quote not named: $message"
[ ! -e "$out/quoted" ] || fail "a run of the manifest with an unbalanced quote started"
echo "run_manifest: ok"
