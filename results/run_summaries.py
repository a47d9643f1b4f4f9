#!/usr/bin/python3
"""Per-run summaries of a paper sweep, small enough to commit: one CSV row per complete result file
under RESULTS_DIR (RESULTS_DIR/<config>/seed<S>.h5, as jobs/paper/sweep.sh lays them out) with the
run's config name, seed, rounds, the build that ran it, its per-round mean test accuracy and ARI
(space-separated, one value per round; ARI "nan" where undefined) and what makes it traceable:
the sample-weighted accuracy and the mean test loss per round (Table 5's metric for unsupervised
runs; files written before the sample-weighted accuracy existed leave it empty), the clients'
training-data accuracy at each round's start (`accuracy_train`, runs with --train-accuracy only), the
device (with the CPU kernels or the CUDA it used), MPI ranks and threads per rank, the builds
that ran its rounds, and its full options (`options`: every option of /config but the config
file's name and the output bookkeeping, as config-file lines `key = value` joined by "; ", so
that `tr ';' '\\n'` of it is a config that runs it again). From these the final accuracy, final
ARI, ARI at round 10 and the first round with ARI >= 0.9 of every cell can be rebuilt after the
result files are gone (`cflrun report` reads such a CSV). Incomplete and unreadable files are listed on stderr and left out.

Usage: /usr/bin/python3 results/run_summaries.py RESULTS_DIR > RESULTS_DIR/runs.csv
(Debian's python3-h5py; see results/requirements-debian.txt)."""
import csv
import pathlib
import sys

import h5py


def text(value):
    return value.decode() if isinstance(value, bytes) else str(value)


# /config attributes that are not options of the run (provenance, or where its files went).
NOT_OPTIONS = {"version", "git_commit", "torch_version", "ranks", "cuda", "cpu_kernels", "threads_per_rank", "clients",
               "build_history", "config", "out", "overwrite", "resume", "skip-complete"}


def series(values):
    return " ".join(f"{v:.6g}" for v in values)


def options_text(config):
    """The run's options as config-file lines joined by "; ": every option of /config with a value
    (`... | tr ';' '\\n' > run.cfg` gives a config that runs it again)."""
    return "; ".join(f"{key} = {text(value)}" for key, value in sorted(config.items())
                     if key not in NOT_OPTIONS and text(value) != "")


def device(config):
    """The device with what ran on it: the CPU kernels, or the CUDA build."""
    name = text(config.get("device", "cpu"))
    detail = text(config.get("cpu_kernels" if name == "cpu" else "cuda", ""))
    return f"{name}: {detail}" if detail else name


def config_name(path):
    """The cell a result file belongs to: its directory's name for <config>/seed<S>.h5, and
    <directory>_<name> for <directory>/<name>_seed<S>.h5 (jobs/dynamic/table_manifest.txt)."""
    name = path.stem.rsplit("seed", 1)[0].rstrip("_")
    return f"{path.parent.name}_{name}" if name else path.parent.name


def summary(path):
    with h5py.File(path, "r") as f:
        status = text(f.attrs["status"])
        if status != "complete":
            raise ValueError(f"status {status!r}")
        rounds = int(f.attrs["completed_rounds"])
        config = f["config"].attrs
        weighted = f["rounds/accuracy_weighted"][:rounds] if "rounds/accuracy_weighted" in f else []
        train = f["rounds/accuracy_train"][:rounds] if "rounds/accuracy_train" in f else []
        return {
            "config": config_name(path),
            "seed": text(config["seed"]),
            "rounds": rounds,
            "git_commit": text(config.get("git_commit", "")),
            "accuracy": series(f["rounds/accuracy"][:rounds]),
            "ari": series(f["rounds/ari"][:rounds]),
            "accuracy_weighted": series(weighted),
            "test_loss": series(f["rounds/test_loss"][:rounds]),
            "accuracy_train": series(train),
            "device": device(config),
            "ranks": text(config.get("ranks", "")),
            "threads_per_rank": text(config.get("threads_per_rank", "")),
            "builds": text(config.get("build_history", "")),
            "options": options_text(config),
            "change_rounds": series(f["population/change_rounds"][:]) if "population" in f else "",
        }


FIELDS = ["config", "seed", "rounds", "git_commit", "accuracy", "ari", "accuracy_weighted", "device", "ranks",
          "threads_per_rank", "builds", "options", "change_rounds", "test_loss", "accuracy_train"]


def summaries(results_dir):
    """The summary() rows of the complete result files under RESULTS_DIR/<config>/seed<S>.h5 or
    RESULTS_DIR/<dir>/<name>_seed<S>.h5, in path order; incomplete and unreadable files are listed
    on stderr and left out."""
    rows = []
    for path in sorted(pathlib.Path(results_dir).glob("*/*seed*.h5")):
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
