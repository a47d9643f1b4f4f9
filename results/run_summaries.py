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


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    rows = []
    for path in sorted(pathlib.Path(sys.argv[1]).glob("*/seed*.h5")):
        try:
            rows.append(summary(path))
        except (OSError, KeyError, ValueError) as error:
            print(f"run_summaries: left out {path}: {error}", file=sys.stderr)
    writer = csv.DictWriter(sys.stdout, ["config", "seed", "rounds", "git_commit", "accuracy", "ari"])
    writer.writeheader()
    writer.writerows(rows)


if __name__ == "__main__":
    main()
