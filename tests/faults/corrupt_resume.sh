#!/usr/bin/env bash
# Trusting bytes: an interrupted run's checkpoint with one byte changed (anywhere, sampled) is
# refused by --resume, naming the checkpoint, and the files are left as they were (with --overwrite
# too, as the sweep scripts pass it, the run starts again instead, with a note); a partial file
# with one byte changed, or one from another run, is replaced from the checkpoint's copy of the
# rounds and the resumed file equals the uninterrupted run's; a checkpoint from another run is
# refused naming the options that differ; a complete file with one byte changed is refused by
# --skip-complete and --resume and left out by `cflrun report`, each naming it.
# Usage: corrupt_resume.sh CHECK_RESULTS SHIM WORKDIR SAMPLES CFLRUN CFLRUN_ARGS...
set -u
check="$1"; shim="$2"; work="$3"; samples="$4"; cflrun="$5"; shift 5
args=("$@")
launch=("$cflrun")
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
rm -rf "$work"; mkdir -p "$work/saved"
fail() { echo "corrupt_resume: FAIL: $*"; exit 1; }
flip() {  # flip FILE OFFSET: changes one bit of the byte at OFFSET
  local byte
  byte="$(od -An -tu1 -j "$2" -N1 "$1" | tr -d ' ')"
  printf "$(printf '\\%03o' $(( byte ^ 16 )))" | dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}
offsets() {  # offsets FILE: SAMPLES offsets spread over the file, and some in its first 1 KB
  local size; size="$(stat -c %s "$1")"
  { seq 0 $(( size / samples + 1 )) $(( size - 1 )); echo 0 13 511 512 520 600 1000; } | sort -nu
}
restore() { rm -f "$work"/run.h5*; cp "$work"/saved/run.h5.* "$work/"; }
same() { same_as_reference "$work" "$check" "$work/run.h5"; }

run_reference "$work" "$check"
CFLRUN_KILL_MATCH=run.h5 CFLRUN_KILL_COUNT="$work/count" LD_PRELOAD="$shim" "$cflrun" "${args[@]}" --out "$work/run.h5" \
  > /dev/null 2>&1 || fail "the counting run failed"
kill_at=$(( $(cat "$work/count") * 7 / 10 ))
# Another run (--seed 99), killed at the same write: its partial file and checkpoint.
(CFLRUN_KILL_MATCH=other.h5 CFLRUN_KILL_AT=$kill_at LD_PRELOAD="$shim" \
  "$cflrun" "${args[@]}" --seed 99 --out "$work/other.h5"; exit $?) > /dev/null 2>&1
[ -f "$work/other.h5.partial" ] && [ -f "$work/other.h5.checkpoint" ] || fail "the other run left no partial file and checkpoint"
rm -f "$work"/run.h5*
# Killed at 70 % of its writes: a partial file and a checkpoint of the rounds before.
(CFLRUN_KILL_MATCH=run.h5 CFLRUN_KILL_AT=$kill_at LD_PRELOAD="$shim" \
  "$cflrun" "${args[@]}" --out "$work/run.h5"; exit $?) > /dev/null 2>&1 && fail "the run was not killed"
[ -f "$work/run.h5.partial" ] && [ -f "$work/run.h5.checkpoint" ] || fail "no partial file and checkpoint to resume"
cp "$work"/run.h5.partial "$work"/run.h5.checkpoint "$work/saved/"

checked=0
for offset in $(offsets "$work/saved/run.h5.checkpoint"); do
  restore; flip "$work/run.h5.checkpoint" "$offset"; cp "$work/run.h5.checkpoint" "$work/flipped"
  "$cflrun" "${args[@]}" --out "$work/run.h5" --resume > "$work/resume.log" 2>&1 &&
    fail "checkpoint byte $offset changed: --resume went on"
  grep -q "error: .*$work/run.h5.checkpoint" "$work/resume.log" ||
    { cat "$work/resume.log"; fail "checkpoint byte $offset changed: the error does not name the checkpoint"; }
  cmp -s "$work/run.h5.checkpoint" "$work/flipped" && cmp -s "$work/run.h5.partial" "$work/saved/run.h5.partial" ||
    fail "checkpoint byte $offset changed: the refused resume changed the files"
  checked=$(( checked + 1 ))
done
echo "corrupt_resume: $checked checkpoints with one byte changed: each refused, naming the checkpoint; files unchanged"
echo "  e.g. $(grep 'error: ' "$work/resume.log")"
# With --overwrite too (the sweep scripts pass --resume --overwrite --skip-complete), the damaged
# checkpoint is replaced: the run starts again from round 1, says so, and completes.
"$cflrun" "${args[@]}" --out "$work/run.h5" --resume --overwrite --skip-complete > "$work/resume.log" 2>&1 ||
  { cat "$work/resume.log"; fail "--resume --overwrite: a damaged checkpoint was refused"; }
grep -q "note: .*$work/run.h5.checkpoint" "$work/resume.log" && grep -q "overwrite: starting again from round 1" \
  "$work/resume.log" || { cat "$work/resume.log"; fail "--resume --overwrite: no note naming the damaged checkpoint"; }
same || fail "--resume --overwrite over a damaged checkpoint: the file differs from the uninterrupted run"
[ ! -e "$work/run.h5.checkpoint" ] || fail "--resume --overwrite: the damaged checkpoint stayed"
echo "corrupt_resume: --resume --overwrite over a damaged checkpoint: started again with a note, equal to the reference"

checked=0; reported=0
for offset in $(offsets "$work/saved/run.h5.partial"); do
  restore; flip "$work/run.h5.partial" "$offset"
  "$cflrun" "${args[@]}" --out "$work/run.h5" --resume > "$work/resume.log" 2>&1 ||
    { cat "$work/resume.log"; fail "partial byte $offset changed: --resume failed"; }
  same || fail "partial byte $offset changed: the resumed file differs from the uninterrupted run"
  checked=$(( checked + 1 ))
  if grep -q "the partial result file $work/run.h5.partial did not match the checkpoint" "$work/resume.log"; then
    reported=$(( reported + 1 ))
  fi
done
echo "corrupt_resume: $checked partial files with one byte changed: each resumed, equal to the uninterrupted run;"
echo "  $reported of them changed a stored row and said so (the others changed bytes no row depends on)"
# Most of a small partial file is HDF5 metadata; one byte inside a round's stored row (a chunk of
# /rounds/ari, /clients/accuracy, /clients/loss_vectors; Debian's h5py finds its offset) changes that
# round's values: the resume must say so, naming the partial file.
chunk_middle() {  # chunk_middle FILE DATASET ROUND: the file offset of the middle byte of that round's chunk
  /usr/bin/python3 -c "import sys, h5py; f = h5py.File(sys.argv[1], 'r')
c = f[sys.argv[2]].id.get_chunk_info(int(sys.argv[3]))
print(f.userblock_size + c.byte_offset + c.size // 2)  # HDF5 addresses start after the user block" "$@"
}
for dataset in /rounds/ari /clients/accuracy /clients/loss_vectors; do
  restore; flip "$work/run.h5.partial" "$(chunk_middle "$work/saved/run.h5.partial" "$dataset" 1)"
  "$cflrun" "${args[@]}" --out "$work/run.h5" --resume > "$work/resume.log" 2>&1 ||
    { cat "$work/resume.log"; fail "a byte of $dataset's round 2 changed: --resume failed"; }
  grep -q "the partial result file $work/run.h5.partial did not match the checkpoint" "$work/resume.log" ||
    { cat "$work/resume.log"; fail "a byte of $dataset's round 2 changed: not reported"; }
  same || fail "a byte of $dataset's round 2 changed: the resumed file differs from the uninterrupted run"
done
echo "corrupt_resume: a byte inside a stored round of /rounds/ari, /clients/accuracy, /clients/loss_vectors: reported,"
echo "  rewritten from the checkpoint, equal to the uninterrupted run; e.g. $(grep 'did not match' "$work/resume.log")"

restore; cp "$work/other.h5.partial" "$work/run.h5.partial"
"$cflrun" "${args[@]}" --out "$work/run.h5" --resume > "$work/resume.log" 2>&1 || fail "a swapped partial file: --resume failed"
same || fail "a swapped partial file: the resumed file differs"
restore; rm "$work/run.h5.partial"
"$cflrun" "${args[@]}" --out "$work/run.h5" --resume > "$work/resume.log" 2>&1 || fail "no partial file: --resume failed"
same || fail "no partial file: the resumed file differs"
echo "corrupt_resume: a partial file from another run, or none: resumed, equal to the uninterrupted run"

# A checkpoint of another run (--seed 99) beside this run's partial file.
restore; cp "$work/other.h5.checkpoint" "$work/run.h5.checkpoint"
"$cflrun" "${args[@]}" --out "$work/run.h5" --resume > "$work/resume.log" 2>&1 && fail "another run's checkpoint: resumed"
grep -q "error: .*checkpoint $work/run.h5.checkpoint is of other options" "$work/resume.log" && grep -q -- "--seed: 3 (recorded 99)" \
  "$work/resume.log" || { cat "$work/resume.log"; fail "another run's checkpoint: no clear error"; }
echo "corrupt_resume: another run's checkpoint refused, naming --seed"
# The same rerun through the sweep scripts (a manifest line corrected after its run was stopped):
# they pass --resume --overwrite --skip-complete, and the run starts again instead of being refused.
restore; cp "$work/other.h5.checkpoint" "$work/run.h5.checkpoint"
"$cflrun" "${args[@]}" --out "$work/run.h5" --resume --overwrite --skip-complete > "$work/resume.log" 2>&1 ||
  { cat "$work/resume.log"; fail "--resume --overwrite: another run's checkpoint was refused"; }
grep -q -- "--seed: 3 (recorded 99)" "$work/resume.log" && grep -q "overwrite: starting again from round 1" \
  "$work/resume.log" || { cat "$work/resume.log"; fail "--resume --overwrite: no note naming --seed"; }
same || fail "--resume --overwrite over another run's checkpoint: the file differs from the uninterrupted run"
echo "corrupt_resume: --resume --overwrite over another run's checkpoint: started again with a note naming --seed"

# A complete file with one byte changed.
cp "$work/reference.h5" "$work/damaged.h5"; flip "$work/damaged.h5" 4000
for option in --skip-complete --resume; do
  "$cflrun" "${args[@]}" --out "$work/damaged.h5" "$option" > "$work/complete.log" 2>&1 && fail "$option accepted a damaged file"
  grep -q "error: $work/damaged.h5 does not match its checksum" "$work/complete.log" ||
    { cat "$work/complete.log"; fail "$option: no clear error"; }
done
# With --overwrite too (as sweeps pass it), the damaged file is run again, not refused for ever.
cp "$work/damaged.h5" "$work/redone.h5"
"$cflrun" "${args[@]}" --out "$work/redone.h5" --skip-complete --overwrite > "$work/redone.log" 2>&1 ||
  { cat "$work/redone.log"; fail "--skip-complete --overwrite refused a damaged file"; }
grep -q "does not match its checksum .*; --overwrite: running it again" "$work/redone.log" ||
  { cat "$work/redone.log"; fail "--skip-complete --overwrite did not say it runs the damaged file again"; }
"$check" identical "$work/reference.h5" "$work/redone.h5" || fail "the file run again differs from the reference"
"$cflrun" report "$work/damaged.h5" "$work/reference.h5" > "$work/report.txt" 2> "$work/report.err" ||
  fail "report failed with one good file"
grep -q "$work/damaged.h5.*damaged" "$work/report.err" || { cat "$work/report.err"; fail "report does not name the damaged file"; }
grep -q "| 1 |" "$work/report.txt" || { cat "$work/report.txt"; fail "report counted the damaged file"; }
echo "corrupt_resume: a damaged complete file: refused by --skip-complete and --resume, run again under --overwrite, left out by report"
echo "corrupt_resume: ok"
