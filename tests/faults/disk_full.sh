#!/usr/bin/env bash
# A full disk (a small tmpfs holding --out) at the result file's creation (every size up to the
# first round's file), at its first round, and mid-run: a clear "No space left on device" error and a non-zero exit, no crash, no file that
# claims more than was written; after space is freed, --resume completes the mid-run case equal to
# an uninterrupted run. A complete --out already there (run again with --overwrite) is untouched.
# The mid-run disk sizes are found from the sizes of a 1-round and the complete result file (the
# file's layout grows with the options it records), not fixed.
# Usage: disk_full.sh CFLRUN CHECK_RESULTS WORKDIR CFLRUN_ARGS...   (root only: exit 77 otherwise)
set -u
cflrun="$1"; check="$2"; work="$3"; shift 3
# 200 clients: a round adds about 4.7 KB (a page or more) to the result file, so a disk can fill mid-run.
args=("$@" --clients-per-cluster 40 --train-samples 20 --test-samples 10)
if [ "$(id -u)" -ne 0 ]; then echo "disk_full: skipped: mounting a tmpfs needs root"; exit 77; fi
rm -rf "$work"; mkdir -p "$work/disk"
disk="$work/disk"
trap 'umount "$disk" 2>/dev/null' EXIT
fail() { echo "disk_full: FAIL: $*"; ls -la "$disk"; exit 1; }

"$cflrun" "${args[@]}" --rounds 6 --quiet --out "$work/reference.h5" > "$work/reference.log" 2>&1 ||
  fail "the reference run failed"
"$cflrun" "${args[@]}" --rounds 1 --quiet --out "$work/one_round.h5" > /dev/null 2>&1 || fail "the 1-round run failed"
page=4096
one_round="$(stat -c %s "$work/one_round.h5")"
complete="$(stat -c %s "$work/reference.h5")"
echo "result file: $one_round bytes after 1 round, $complete after 6"

# run_on_full_disk SIZE NAME [OPTIONS...]: runs on a fresh tmpfs of SIZE; must fail cleanly.
run_on_full_disk() {
  local size="$1" name="$2" status
  shift 2
  umount "$disk" 2>/dev/null
  mount -t tmpfs -o "size=$size" tmpfs "$disk" || fail "cannot mount a tmpfs"
  [ -z "${COMPLETE:-}" ] || cp "$work/reference.h5" "$disk/run.h5"
  "$cflrun" "${args[@]}" --rounds 6 --quiet --out "$disk/run.h5" "$@" > "$work/$name.log" 2>&1
  status=$?
  echo "--- $name ($size): exit $status"; grep -v '^cflrun 0\|^clove on' "$work/$name.log"
  [ "$status" -eq 1 ] || fail "$name: exit status $status, expected 1 (an error, not a crash)"
  grep -q "error: .*No space left on device (the disk or quota is full" "$work/$name.log" || fail "$name: no clear error"
  ! grep -q "Segmentation\|Aborted\|H5Fflush()" "$work/$name.log" || fail "$name: a crash or a raw HDF5 stack"
  ! ls "$disk"/*.tmp > /dev/null 2>&1 || fail "$name: a temporary file was left"
  [ ! -e "$disk/run.h5.lock" ] || fail "$name: the lock file was left"
}

run_on_full_disk 8k creation
[ -z "$(ls -A "$disk")" ] || fail "creation: files were left"

run_on_full_disk "$(( one_round / page * page - page ))" first_write --checkpoint-every 0
[ -z "$(ls -A "$disk")" ] || fail "first_write: a file without a finished round was left"
# Every disk size between: the file is created but its /config or true clusters do not fit (a
# 19.5 KB unreadable .partial stayed on a 20 KB disk before the fix), or its first round does not.
for (( size = 3 * page; size < one_round / page * page - page; size += page )); do
  run_on_full_disk "$size" "before_round_1_$size" --checkpoint-every 0
  [ -z "$(ls -A "$disk")" ] || fail "a $size-byte disk: a file without a finished round was left"
done
echo "disk sizes from $(( 3 * page )) to $(( one_round / page * page - 2 * page )) bytes: each failed cleanly, no file left"

# stops_mid_run FROM TO STEP NAME [OPTIONS...]: the first disk size from FROM to TO bytes (in STEP
# pages) on which the run fails after writing a round (a partial file is left, and a checkpoint if
# CHECKPOINT).
stops_mid_run() {
  local from="$1" to="$2" step="$3" name="$4" size
  shift 4
  size=$(( (from + page - 1) / page * page ))
  while [ "$size" -le "$to" ]; do
    run_on_full_disk "$size" "$name" "$@"
    if [ -f "$disk/run.h5.partial" ] && { [ -z "${CHECKPOINT:-}" ] || [ -f "$disk/run.h5.checkpoint" ]; }; then
      return 0
    fi
    size=$(( size + step * page ))
  done
  fail "$name: no disk size from $from to $to bytes stopped the run after a finished round"
}

stops_mid_run "$one_round" "$complete" 1 mid_run_result_file --checkpoint-every 0
"$check" consistent-prefix "$work/reference.h5" "$disk/run.h5.partial" || fail "mid_run_result_file: the partial file misleads"

# The checkpoint is written beside the result file each round and holds at least the models
# ("5 models (cnn, 5142 floats each)" in the run's header): no disk smaller than the first round's
# file plus those floats can hold both, so the search starts there. The sizes that stop this run
# after a round with a checkpoint span more than the models, so 8-page steps.
models_bytes="$(sed -nE 's/.* ([0-9]+) models \([a-z_]+, ([0-9]+) floats each\).*/\1 * \2 * 4/p' "$work/reference.log")"
[ -n "$models_bytes" ] || fail "the reference run's header names no model count and size"
models_bytes=$(( models_bytes ))
CHECKPOINT=1 stops_mid_run $(( one_round + models_bytes )) $(( complete + models_bytes + 100 * page )) 8 mid_run
[ ! -e "$disk/run.h5" ] || fail "mid_run: a file at --out"
"$check" consistent-prefix "$work/reference.h5" "$disk/run.h5.partial" || fail "mid_run: the partial file misleads"
[ -f "$disk/run.h5.checkpoint" ] || fail "mid_run: no checkpoint of the finished rounds"
mount -o remount,size=4m "$disk"  # space freed
"$cflrun" "${args[@]}" --rounds 6 --quiet --out "$disk/run.h5" --resume > "$work/resumed.log" 2>&1 ||
  { cat "$work/resumed.log"; fail "mid_run: --resume after freeing space failed"; }
"$check" identical "$work/reference.h5" "$disk/run.h5" || fail "mid_run: the resumed run differs"

before="$(sha256sum < "$work/reference.h5")"
COMPLETE=1 run_on_full_disk $(( (complete + page - 1) / page * page + 2 * page )) complete_file_kept --overwrite
[ "$(sha256sum < "$disk/run.h5")" = "$before" ] || fail "complete_file_kept: the complete file changed"
echo "disk_full: ok"
