#!/usr/bin/python3
"""Per-run summaries of a paper sweep, small enough to commit: one CSV row per complete result file
under RESULTS_DIR (RESULTS_DIR/<config>/seed<S>.h5, as jobs/paper/sweep.sh lays them out) with the
run's config name, seed, rounds, the build that ran it, and its per-round mean test accuracy and ARI
(space-separated, one value per round; ARI "nan" where undefined). From these the final accuracy,
final ARI, ARI at round 10 and the first round with ARI >= 0.9 of every cell can be rebuilt after
the result files are gone. Incomplete and unreadable files are listed on stderr and left out.

Usage: /usr/bin/python3 results/run_summaries.py RESULTS_DIR > RESULTS_DIR/runs.csv
(Debian's python3-h5py; see results/requirements-debian.txt)."""
import csv
import pathlib
import sys

import h5py


def text(value):
    return value.decode() if isinstance(value, bytes) else str(value)


def summary(path):
    with h5py.File(path, "r") as f:
        status = text(f.attrs["status"])
        if status != "complete":
            raise ValueError(f"status {status!r}")
        rounds = int(f.attrs["completed_rounds"])
        config = f["config"].attrs
        accuracy = f["rounds/accuracy"][:rounds]
        ari = f["rounds/ari"][:rounds]
        return {
            "config": path.parent.name,
            "seed": text(config["seed"]),
            "rounds": rounds,
            "git_commit": text(config.get("git_commit", "")),
            "accuracy": " ".join(f"{v:.6g}" for v in accuracy),
            "ari": " ".join(f"{v:.6g}" for v in ari),
        }


FIELDS = ["config", "seed", "rounds", "git_commit", "accuracy", "ari"]


def summaries(results_dir):
    """The summary() rows of the complete result files under RESULTS_DIR/<config>/seed<S>.h5, in
    path order; incomplete and unreadable files are listed on stderr and left out."""
    rows = []
    for path in sorted(pathlib.Path(results_dir).glob("*/seed*.h5")):
        try:
            rows.append(summary(path))
        except (OSError, KeyError, ValueError) as error:
            print(f"run_summaries: left out {path}: {error}", file=sys.stderr)
    return rows


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    writer = csv.DictWriter(sys.stdout, FIELDS)
    writer.writeheader()
    writer.writerows(summaries(sys.argv[1]))


if __name__ == "__main__":
    main()
