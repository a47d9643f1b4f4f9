# Sourced by the committed-rows tests (run_rows_report.sh, train_accuracy_rows_report.sh): how they
# fail, the h5py they need, and result files laid out as jobs/paper/sweep.sh lays them out.
fail() { echo "$(basename "$0" .sh): FAIL: $*"; exit 1; }
/usr/bin/python3 -c "import h5py" 2>/dev/null ||
  fail "Debian's python3-h5py is not installed (results/requirements-debian.txt)"
# lay_out DIR CONFIG SEED FILE: FILE as DIR/CONFIG/seed<SEED>.h5.
lay_out() { mkdir -p "$1/$2" && cp "$4" "$1/$2/seed$3.h5"; }
# The paper's values, and an empty work directory ($source_dir and $work set by the script).
values="$source_dir/jobs/paper/paper_values.csv"
rm -rf "$work"
# paper_rows PATTERN: the `cflrun report --paper` rows matching PATTERN (grep) from the result files
# under $work/runs, which must equal those from $work/runs.csv ($cflrun set by the script).
paper_rows() {
  local from_files from_rows
  from_files="$("$cflrun" report "$work/runs" --paper "$values" 2> /dev/null | grep "$1" || true)"
  from_rows="$("$cflrun" report "$work/runs.csv" --paper "$values" 2> /dev/null | grep "$1" || true)"
  [ "$from_files" = "$from_rows" ] ||
    { diff <(echo "$from_files") <(echo "$from_rows") >&2; fail "runs.csv reports otherwise"; }
  echo "$from_rows"
}
