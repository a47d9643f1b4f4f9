#!/usr/bin/python3
"""Appends to TARGET_CSV the per-run summaries (results/run_summaries.py) of the complete result files
under RESULTS_DIR whose (config, seed) no committed results/paper/fmnist_100*/runs.csv holds yet, and
prints one line per appended run (config, seed, final accuracy). For sweeps finished over several
sessions: rerun it after each and commit TARGET_CSV.

Usage: /usr/bin/python3 results/append_runs.py RESULTS_DIR TARGET_CSV
  e.g. /usr/bin/python3 results/append_runs.py results/gpu100 results/paper/fmnist_100_cpu/runs.csv
(Debian's python3-h5py; see results/requirements-debian.txt)."""
import csv
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import run_summaries  # noqa: E402


def committed_runs(root):
    """(config, seed) of every row of the committed results/paper/fmnist_100*/runs.csv."""
    runs = set()
    for path in root.glob("results/paper/fmnist_100*/runs.csv"):
        with open(path, newline="") as f:
            runs.update((row["config"], row["seed"]) for row in csv.DictReader(f))
    return runs


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    have = committed_runs(pathlib.Path(__file__).resolve().parent.parent)
    rows = [row for row in run_summaries.summaries(sys.argv[1])
            if (row["config"], row["seed"]) not in have]
    with open(sys.argv[2], "a", newline="") as f:
        csv.DictWriter(f, run_summaries.FIELDS).writerows(rows)
    for row in rows:
        print(f"appended {row['config']} seed {row['seed']}: {row['accuracy'].split()[-1]}")


if __name__ == "__main__":
    main()
