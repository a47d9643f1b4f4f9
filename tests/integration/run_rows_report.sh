#!/usr/bin/env bash
# The committed-rows path of the paper tables for Table 5 (unsupervised test loss): real result files
# of an unsupervised CLoVE and IFCA run, laid out as jobs/paper/sweep.sh does, summarised by
# results/run_summaries.py into a runs.csv, then `cflrun report --paper` on the CSV gives the same
# Table 5 rows (test loss, class) as on the result files themselves, and --summary counts the cells.
# Usage: run_rows_report.sh CFLRUN SOURCE_DIR WORKDIR CLOVE_H5 IFCA_H5
set -euo pipefail
cflrun="$1"; source_dir="$2"; work="$3"; clove="$4"; ifca="$5"
source "$(dirname "$0")/run_rows_common.sh"  # fail, lay_out; $values; $work emptied
lay_out "$work/runs" fmnist_unsupervised_clove 2 "$clove"
lay_out "$work/runs" fmnist_unsupervised_ifca 2 "$ifca"

/usr/bin/python3 "$source_dir/results/run_summaries.py" "$work/runs" > "$work/runs.csv"
head -n 1 "$work/runs.csv" | grep -q ',test_loss' || fail "runs.csv has no test_loss column"
[ "$(grep -c '^fmnist_unsupervised_' "$work/runs.csv")" -eq 2 ] || fail "runs.csv lacks a run"

from_rows="$(paper_rows '^| Table 5 |')"
echo "$from_rows"
[ "$(echo "$from_rows" | grep -c 'test_loss')" -eq 2 ] || fail "the result files give no 2 Table 5 rows"
echo "$from_rows" | grep -Eq '\| (within|outside) \|$' || fail "a Table 5 row has no class"

summary="$("$cflrun" report "$work/runs.csv" --paper "$values" --summary)"
echo "$summary" | grep -E '^\| fmnist \| test_loss \| 4 \| [0-2] \| 0 \| [0-2] \| 2 \|$' ||
  { echo "$summary"; fail "--summary does not count fmnist's 4 test-loss cells, 2 of them missing"; }
echo "run_rows_report: ok, the runs.csv rows report Table 5 as the result files do"
