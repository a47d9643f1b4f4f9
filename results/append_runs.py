#!/usr/bin/python3
"""Appends to TARGET_CSV the per-run summaries (results/run_summaries.py) of the complete result files
under RESULTS_DIR whose (config, seed) neither TARGET_CSV nor any committed results/paper/*/runs.csv
or results/*/runs.csv holds yet, and prints
one line per appended run (config, seed, final accuracy). A new TARGET_CSV gets a header line; an
existing one keeps its columns, and a column that the appended rows fill and its header lacks (a
metric added since, e.g. accuracy_train) is added to it, empty in the older rows. For sweeps
finished over several sessions: rerun it after each and commit TARGET_CSV. A RESULTS_DIR without
any complete result file (e.g. a config's directory given for the sweep's) is an error: exit 1,
nothing written.

With --reruns, a run whose (config, seed) is committed already is appended too when no committed
row of that (config, seed) came from the same build (git_commit): a rerun from another build, e.g.
a committed build's rerun of rows a dirty build made; `cflrun report --paper` then shows one group
of runs per cell by its rule (most runs, then the sample-weighted accuracy recorded, then committed
code) and counts the others as left out.

A TARGET_CSV inside this repository's results/ (the tables' committed rows) takes runs of
committed code only: a run whose git_commit ends in -dirty (a build of uncommitted changes) is
refused, nothing is written, and the exit status is 1. Commit, rebuild (`cflrun --version` shows
no -dirty) and rerun; --allow-dirty appends such runs anyway.

Usage: /usr/bin/python3 results/append_runs.py [--reruns] [--allow-dirty] RESULTS_DIR TARGET_CSV
  e.g. /usr/bin/python3 results/append_runs.py results/mnist100 results/paper/mnist_100/runs.csv
(Debian's python3-h5py; see results/requirements-debian.txt)."""
import argparse
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


def parse_arguments():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reruns", action="store_true",
                        help="also append reruns of committed (config, seed) from another build")
    parser.add_argument("--allow-dirty", action="store_true",
                        help="append runs of uncommitted code (git_commit ...-dirty) to a table")
    parser.add_argument("results_dir")
    parser.add_argument("target_csv", type=pathlib.Path)
    return parser.parse_args()


def refuse_dirty_runs(rows, target, root):
    """Exits with status 1 when TARGET lies in root/results and a row came from a -dirty build."""
    dirty = [row for row in rows if row["git_commit"].endswith("-dirty")]
    if not dirty or not target.resolve().is_relative_to((root / "results").resolve()):
        return
    runs = ", ".join(f"{row['config']} seed {row['seed']}" for row in dirty[:5])
    more = f" and {len(dirty) - 5} more" if len(dirty) > 5 else ""
    sys.exit(f"error: {len(dirty)} run(s) come from a build of uncommitted code "
             f"({dirty[0]['git_commit']}): {runs}{more}; {target} is a table's committed rows, "
             "which take runs of committed code only. Commit, rebuild (cflrun --version shows no "
             "-dirty) and rerun them, or pass --allow-dirty. Nothing was written.")


def main():
    args = parse_arguments()
    root = pathlib.Path(__file__).resolve().parent.parent
    have = committed_runs(root, args.reruns)
    target = args.target_csv
    old_rows = []
    fields = run_summaries.FIELDS
    if target.exists() and target.stat().st_size > 0:
        with open(target, newline="") as f:
            reader = csv.DictReader(f)
            old_rows = list(reader)
            fields = list(reader.fieldnames)
    have.update(run_key(row, args.reruns) for row in old_rows)
    found = run_summaries.summaries(args.results_dir)
    if not found:
        sys.exit(f"error: no complete result file RESULTS_DIR/<config>/seed<S>.h5 under "
                 f"{args.results_dir}; give the sweep's results directory, the one above its config "
                 "directories. Nothing was written.")
    rows = [row for row in found if run_key(row, args.reruns) not in have]
    if not rows:
        print(f"nothing to append: the {len(found)} complete run(s) under {args.results_dir} "
              f"are in {target} or the committed runs.csv files already")
    if not args.allow_dirty:
        refuse_dirty_runs(rows, target, root)
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
