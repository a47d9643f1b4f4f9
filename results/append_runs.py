#!/usr/bin/python3
"""Appends to TARGET_CSV the per-run summaries (results/run_summaries.py) of the complete result files
under RESULTS_DIR whose (config, seed) neither TARGET_CSV nor any committed results/paper/*/runs.csv
or results/*/runs.csv holds yet, and prints
one line per appended run (config, seed, final accuracy). A new TARGET_CSV gets a header line; an
existing one keeps its columns, and a column that the appended rows fill and its header lacks (a
metric added since, e.g. accuracy_train) is added to it, empty in the older rows. For sweeps
finished over several sessions: rerun it after each and commit TARGET_CSV.

With --reruns, a run whose (config, seed) is committed already is appended too when no committed
row of that (config, seed) came from the same build (git_commit): a rerun from another build, e.g.
a committed build's rerun of rows a dirty build made; `cflrun report --paper` then shows one group
of runs per cell by its rule (most runs, then the sample-weighted accuracy recorded, then committed
code) and counts the others as left out.

Usage: /usr/bin/python3 results/append_runs.py [--reruns] RESULTS_DIR TARGET_CSV
  e.g. /usr/bin/python3 results/append_runs.py results/mnist100 results/paper/mnist_100/runs.csv
(Debian's python3-h5py; see results/requirements-debian.txt)."""
import csv
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import run_summaries  # noqa: E402


def run_key(row, reruns):
    """What makes a row the same run: (config, seed), and with --reruns also its build."""
    key = (row["config"], str(row["seed"]))
    return key + (row["git_commit"],) if reruns else key


def committed_runs(root, reruns):
    """run_key of every row of the committed results/paper/*/runs.csv and results/*/runs.csv."""
    runs = set()
    for path in [*root.glob("results/paper/*/runs.csv"), *root.glob("results/*/runs.csv")]:
        with open(path, newline="") as f:
            runs.update(run_key(row, reruns) for row in csv.DictReader(f))
    return runs


def main():
    args = sys.argv[1:]
    reruns = args[:1] == ["--reruns"]
    args = args[1:] if reruns else args
    if len(args) != 2:
        sys.exit(__doc__)
    have = committed_runs(pathlib.Path(__file__).resolve().parent.parent, reruns)
    target = pathlib.Path(args[1])
    old_rows = []
    fields = run_summaries.FIELDS
    if target.exists() and target.stat().st_size > 0:
        with open(target, newline="") as f:
            reader = csv.DictReader(f)
            old_rows = list(reader)
            fields = list(reader.fieldnames)
    have.update(run_key(row, reruns) for row in old_rows)
    rows = [row for row in run_summaries.summaries(args[0]) if run_key(row, reruns) not in have]
    if old_rows:
        fields += [name for name in run_summaries.FIELDS
                   if name not in fields and any(row.get(name) for row in rows)]
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target, "w", newline="") as f:
        writer = csv.DictWriter(f, fields, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(old_rows + rows)
    for row in rows:
        print(f"appended {row['config']} seed {row['seed']}: {row['accuracy'].split()[-1]}")


if __name__ == "__main__":
    main()
