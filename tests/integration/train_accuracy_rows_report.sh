#!/usr/bin/env bash
# The committed-rows path of a FedAvg cell compared as the CLoVE notebook computes it (the clients'
# training-data accuracy at the round's start, --train-accuracy): real result files of a FedAvg run
# with and without --train-accuracy, summarised by results/run_summaries.py and appended by
# results/append_runs.py to a runs.csv whose header predates the accuracy_train column; then
# `cflrun report --paper` on the CSV and on the files picks the run that recorded the definition
# (of two groups of equal size), shows its final training-data accuracy and says so; appended again,
# nothing new, but with --reruns a rerun from another build; a directory without result files is
# refused; a -dirty build's run is refused by a table's committed rows unless --allow-dirty.
# Usage: train_accuracy_rows_report.sh CFLRUN SOURCE_DIR WORKDIR WITH_H5 WITHOUT_H5
set -euo pipefail
cflrun="$1"; source_dir="$2"; work="$3"; with="$4"; without="$5"
source "$(dirname "$0")/run_rows_common.sh"  # fail, lay_out; $values; $work emptied
lay_out "$work/runs" tiny_fedavg_train_accuracy 3 "$with"
lay_out "$work/runs" tiny_fedavg 3 "$without"
# A runs.csv as committed before the column existed: the run without, no accuracy_train column.
/usr/bin/python3 "$source_dir/results/run_summaries.py" "$work/runs" |
  /usr/bin/python3 -c "
import csv, sys
rows = [row for row in csv.DictReader(sys.stdin) if row['config'] == 'tiny_fedavg']
writer = csv.DictWriter(sys.stdout, [f for f in rows[0] if f != 'accuracy_train'], extrasaction='ignore')
writer.writeheader(); writer.writerows(rows)" > "$work/runs.csv"
head -n 1 "$work/runs.csv" | grep -q 'accuracy_train' && fail "the old-style runs.csv has the column"
/usr/bin/python3 "$source_dir/results/append_runs.py" "$work/runs" "$work/runs.csv"
head -n 1 "$work/runs.csv" | grep -q ',accuracy_train' || fail "append_runs.py added no accuracy_train column"
[ "$(grep -c '^tiny_fedavg' "$work/runs.csv")" -eq 2 ] || fail "runs.csv does not hold both runs"

expected="$(/usr/bin/python3 -c "
import h5py
print(f\"{100 * h5py.File('$with', 'r')['rounds/accuracy_train'][-1]:.1f}\")")"
from_rows="$(paper_rows '| fedavg | .* | accuracy |')"
echo "$from_rows"
[ "$(echo "$from_rows" | grep -c .)" -eq 1 ] || fail "no single FedAvg accuracy row"
echo "$from_rows" | grep -q "| training data | 1 | $expected +- 0.0 |" ||
  fail "the row is not the run with --train-accuracy's final training-data accuracy ($expected)"
# Appended again: nothing new. With --reruns, a run whose committed row came from another build
# (here: that row's git_commit rewritten) is appended beside it, once.
/usr/bin/python3 "$source_dir/results/append_runs.py" "$work/runs" "$work/runs.csv"
[ "$(grep -c '^tiny_fedavg,' "$work/runs.csv")" -eq 1 ] || fail "append_runs.py appended a run twice"
# A config's directory given for the sweep's: no result file at RESULTS_DIR/<config>/seed<S>.h5.
cp "$work/runs.csv" "$work/runs_before.csv"
status=0; /usr/bin/python3 "$source_dir/results/append_runs.py" "$work/runs/tiny_fedavg" \
  "$work/runs.csv" 2> "$work/no_files.err" || status=$?
cat "$work/no_files.err"
[ "$status" -eq 1 ] || fail "a RESULTS_DIR without result files exited $status, not 1"
grep -q "no complete result file.*the one above its config directories" "$work/no_files.err" ||
  fail "a RESULTS_DIR without result files did not say so"
cmp -s "$work/runs.csv" "$work/runs_before.csv" || fail "a RESULTS_DIR without result files changed runs.csv"
/usr/bin/python3 -c "
import csv, sys
with open('$work/runs.csv', newline='') as f:
    reader = csv.DictReader(f); rows = list(reader)
for row in rows:
    if row['config'] == 'tiny_fedavg': row['git_commit'] = 'f' * 40 + '-dirty'
with open('$work/runs.csv', 'w', newline='') as f:
    writer = csv.DictWriter(f, reader.fieldnames); writer.writeheader(); writer.writerows(rows)"
for _ in 1 2; do
  /usr/bin/python3 "$source_dir/results/append_runs.py" --reruns "$work/runs" "$work/runs.csv"
done
[ "$(grep -c '^tiny_fedavg,' "$work/runs.csv")" -eq 2 ] || fail "--reruns did not append the rerun once"
[ "$(grep -c '^tiny_fedavg_train_accuracy,' "$work/runs.csv")" -eq 1 ] ||
  fail "--reruns appended a run of the same build again"
# A table's committed rows (a runs.csv inside the repository's results/) take no run of a -dirty
# build: refused with exit 1 and the CSV untouched; --allow-dirty appends it.
mkdir -p "$work/repo/results/table" "$work/dirty/tiny_fedavg"
cp "$source_dir"/results/{append_runs,run_summaries}.py "$work/repo/results/"
cp "$work/runs.csv" "$work/repo/results/table/runs.csv"
cp "$without" "$work/dirty/tiny_fedavg/seed4.h5"
/usr/bin/python3 -c "
import h5py
with h5py.File('$work/dirty/tiny_fedavg/seed4.h5', 'r+') as f:
    f['config'].attrs['seed'] = '4'; f['config'].attrs['git_commit'] = 'e' * 40 + '-dirty'"
table="$work/repo/results/table/runs.csv"; before="$(sha256sum < "$table")"
status=0; /usr/bin/python3 "$work/repo/results/append_runs.py" "$work/dirty" "$table" \
  2> "$work/dirty.err" || status=$?
cat "$work/dirty.err"
[ "$status" -eq 1 ] || fail "a -dirty run appended to a table's rows exited $status, not 1"
grep -q 'uncommitted code.*tiny_fedavg seed 4.*--allow-dirty' "$work/dirty.err" ||
  fail "the refusal does not name the run and the fix"
[ "$(sha256sum < "$table")" = "$before" ] || fail "the refused append changed the table's rows"
/usr/bin/python3 "$work/repo/results/append_runs.py" --allow-dirty "$work/dirty" "$table"
grep -q "^tiny_fedavg,4,.*eeee-dirty" "$table" || fail "--allow-dirty did not append the run"
echo "train_accuracy_rows_report: ok, FedAvg compared as the notebook computes it ($expected)"
