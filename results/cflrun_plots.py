#!/usr/bin/python3
"""Plots from cflrun HDF5 result files (schema: results/README.md).

  cflrun_plots.py rounds  [--out FILE] [--include-incomplete] PATH...
      ARI and test accuracy per round, one line per configuration (mean over seeds, +- std band);
      the CLoVE paper's Fig. 2, 3a and 5. Runs without accuracy (regression, unsupervised) show the
      test loss instead, on a log scale. PATH is a result file or a directory searched for *.h5.
      Runs of a changing population (/population/change_rounds) get a dashed line at each
      round where their population changes.
  cflrun_plots.py heatmap [--out FILE] [--round N] [--scale auto|log|linear] FILE
      Client x model loss matrix of one round (/clients/loss_vectors, clove and ifca runs only),
      clients grouped by true cluster, each client's assigned model outlined; the paper's Fig. 4.
  cflrun_plots.py soft    [--out FILE] FILE
      A mixture-partition run (FedSoft Fig. 1): top, each center's holdout loss on each source per
      round (/rounds/source_loss); bottom (FedSoft runs), the importance weights per round,
      averaged over the clients with the same true mixture (/clients/importance, /clients/mixture).

The output format follows the --out extension (.png, .svg, .pdf). Needs Debian's Python with
python3-h5py, python3-matplotlib and python3-numpy (results/requirements-debian.txt).
"""

import argparse
import os
import pathlib
import sys
import warnings

# Read files that a running job holds open (results/README.md, "Storage"); must precede h5py.
os.environ["HDF5_USE_FILE_LOCKING"] = "FALSE"

import h5py  # noqa: E402
import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.backend_bases import FigureCanvasBase  # noqa: E402
from matplotlib.colors import LogNorm  # noqa: E402
from matplotlib.patches import Rectangle  # noqa: E402

# /config keys that never split groups: seeds, paths, compute placement, provenance and keys that
# follow from others; the same as `cflrun report` (include/cflrun/report/group_statistics.hpp).
IGNORED_KEYS = {
    "seed", "data-seed", "out", "overwrite", "quiet", "config", "threads", "device", "ranks",
    "threads_per_rank", "blas", "git_commit", "version", "torch_version", "skip-complete",
    "data-dir", "clients", "models", "resume", "checkpoint-every", "checkpoint-seconds", "round-timeout",
    "server-hosts-clients", "parallel-clients",
}
# The algorithms' own options: named after their algorithm ("pacfl-beta"), CLoVE's excepted. A file
# records its own algorithm's options only; files written before 2026-11-28 record every
# algorithm's, which grouping leaves out so that both kinds of file of one experiment group together.
# These two sets are what those older builds recorded, so they stay as they are when an algorithm or
# option is added (a newer file never holds another algorithm's options); `cflrun report` derives the
# same from its registry (cli::other_algorithms_options).
CLOVE_OPTIONS = {"kmeans-restarts", "kmeans-init", "loss-transform", "clustering", "matching", "select-k"}
OPTION_PREFIXES = {"pacfl", "fedsoft", "cfl", "flexcfl", "fesem", "perfedavg", "fedproto", "fedala", "fedpac"}
DPI = 100


def other_algorithms_option(key, algorithm):
    """Whether /config key is an option of another algorithm than `algorithm`."""
    if key in CLOVE_OPTIONS:
        return algorithm != "clove"
    prefix = key.split("-", 1)[0]
    return "-" in key and prefix in OPTION_PREFIXES and prefix != algorithm


class PlotError(Exception):
    """A problem with the inputs, reported as one line on stderr."""


def text(value):
    """An HDF5 string attribute as str (h5py gives str or bytes, depending on how it was stored)."""
    return value.decode() if isinstance(value, bytes) else str(value)


class Run:
    """One result file: its status, /config, per-round series (first completed_rounds rows) and the
    1-based rounds at which its population changes (empty for a fixed population)."""

    def __init__(self, path):
        self.path = str(path)
        try:
            with h5py.File(self.path, "r") as f:
                self.status = text(f.attrs["status"])
                self.rounds = int(f.attrs["completed_rounds"])
                self.config = {k: text(v) for k, v in f["config"].attrs.items()}
                self.ari = np.asarray(f["rounds/ari"][: self.rounds], dtype=float)
                self.accuracy = np.asarray(f["rounds/accuracy"][: self.rounds], dtype=float)
                self.test_loss = np.asarray(f["rounds/test_loss"][: self.rounds], dtype=float)
                self.change_rounds = (np.asarray(f["population/change_rounds"][:], dtype=int)
                                      if "population/change_rounds" in f else np.zeros(0, dtype=int))
        except (OSError, KeyError) as e:
            raise PlotError(f"{self.path}: not a readable cflrun result file ({e})") from e

    def group_key(self):
        algorithm = self.config.get("algorithm", "clove")
        return tuple(sorted((k, v) for k, v in self.config.items()
                            if k not in IGNORED_KEYS and not other_algorithms_option(k, algorithm)))


def find_files(paths):
    """Result files named on the command line, directories searched recursively for *.h5 and for
    *.h5.partial (the files of runs still running or stopped; skipped unless --include-incomplete)."""
    files = []
    for p in map(pathlib.Path, paths):
        if p.is_dir():
            files += sorted(p.rglob("*.h5")) + sorted(p.rglob("*.h5.partial"))
        elif p.is_file():
            files.append(p)
        else:
            raise PlotError(f"{p}: no such file or directory")
    if not files:
        raise PlotError(f"no *.h5 result files in {' '.join(paths)}")
    unique = {f.resolve(): f for f in reversed(files)}  # a file named twice counts once
    return sorted(unique.values())


def load_runs(paths, include_incomplete):
    runs = []
    for path in find_files(paths):
        try:
            run = Run(path)
        except PlotError as e:
            print(f"warning: skipping {e}", file=sys.stderr)
            continue
        if run.status != "complete" and not include_incomplete:
            print(f"note: skipping {path} (status '{run.status}'; use --include-incomplete)",
                  file=sys.stderr)
        elif run.rounds == 0:
            print(f"note: skipping {path} (no finished rounds)", file=sys.stderr)
        else:
            runs.append(run)
    if not runs:
        raise PlotError("no usable result files (none complete with at least one round)")
    return runs


def group_runs(runs):
    """{config without seed-like keys: [runs]}, plus the config keys that tell the groups apart."""
    groups = {}
    for run in runs:
        groups.setdefault(run.group_key(), []).append(run)
    return groups, distinguishing_keys([dict(key) for key in groups])


def distinguishing_keys(configs):
    """The fewest varying keys, algorithm first, whose values tell the configs apart; keys that
    follow from those already chosen (fedavg's models=1) are left out of the labels."""
    varying = sorted(k for k in set().union(*configs) if len({c.get(k) for c in configs}) > 1)
    chosen = []
    for key in sorted(varying, key=lambda k: k != "algorithm"):
        distinct = len({tuple(c.get(k) for k in chosen) for c in configs})
        if distinct == len(configs):
            break
        if len({tuple(c.get(k) for k in chosen + [key]) for c in configs}) > distinct:
            chosen.append(key)
    return chosen


def group_label(config, varying):
    if not varying:
        return config.get("algorithm", "all runs")
    if varying == ["algorithm"]:
        return config["algorithm"]
    return ", ".join(f"{k}={shown(config.get(k, '-'))}" for k in varying)


def shown(value):
    """An option's recorded text as a label: a real number in its shortest form (/config holds
    17 digits, e.g. separation 0.00029999999999999997 -> 0.0003), anything else as recorded."""
    try:
        number = float(value)
    except ValueError:
        return value
    return value if value.lstrip("-").isdigit() else repr(number)


def common_title(config, varying):
    """What all plotted runs share: dataset, partition (where the data has one: linreg only takes
    the mixtures), clients and clusters."""
    keys = ("dataset", "partition")
    if config.get("dataset") == "linreg" and not config.get("partition", "").startswith("mixture_"):
        keys = ("dataset",)
    parts = [config[k] for k in keys if k in config and k not in varying]
    if "clients" in config and "clusters" in config and not {"clients", "clusters"} & set(varying):
        parts.append(f"{config['clients']} clients in {config['clusters']} clusters")
    return ", ".join(parts)


def stack_series(runs, field, note=False):
    """[seeds, T] array of one series, truncated to the shortest run of the group."""
    length = min(run.rounds for run in runs)
    if note and any(run.rounds != length for run in runs):
        print(f"note: truncating {len(runs)} runs to their common {length} rounds: "
              + ", ".join(f"{run.path} ({run.rounds})" for run in runs), file=sys.stderr)
    return np.stack([getattr(run, field)[:length] for run in runs])


def mean_std(values):
    """Mean and std over seeds of a [seeds, T] array, NaN-aware; ddof=0 like `cflrun report` and
    the official CLoVE notebook (clove-official-setup.md Sec. 12)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.nanmean(values, axis=0), np.nan_to_num(np.nanstd(values, axis=0))


def draw_series(ax, values, label, color):
    mean, std = mean_std(values)
    x = np.arange(1, len(mean) + 1)
    ax.plot(x, mean, color=color, label=label, linewidth=1.8, marker="o", markersize=3)
    lower = mean - std
    if ax.get_yscale() == "log":  # a band below 0 has no place there: cut it at a tenth of the mean
        lower = np.where(lower > 0, lower, mean / 10)
    ax.fill_between(x, lower, mean + std, color=color, alpha=0.2, linewidth=0)


def change_rounds(runs):
    """The rounds (1-based) at which any of `runs` changes its population, within their rounds."""
    last = max(run.rounds for run in runs)
    return sorted({int(r) for run in runs for r in run.change_rounds if r <= last})


def draw_change_rounds(axes, rounds):
    """A dashed vertical line at each change round on every axis; one "change" legend entry each."""
    for ax in axes:
        for i, r in enumerate(rounds):
            ax.axvline(r, color="grey", linestyle="--", linewidth=1,
                       label="change" if i == 0 else None)


def plot_rounds(args):
    plotted = load_runs(args.paths, args.include_incomplete)
    groups, varying = group_runs(plotted)
    fig, (ax_ari, ax_acc) = plt.subplots(1, 2, figsize=(11, 4.2), constrained_layout=True)
    undefined = []
    # Regression and unsupervised runs have no accuracy (NaN): their right panel is the test loss.
    metric = "accuracy" if any(not np.isnan(run.accuracy).all() for run in plotted) else "test_loss"
    if metric == "test_loss":
        ax_acc.set_yscale("log")
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for i, (key, runs) in enumerate(sorted(groups.items())):
        config = dict(key)
        label = f"{group_label(config, varying)} ({len(runs)} seed{'s' * (len(runs) > 1)})"
        color = colors[i % len(colors)]
        ari = stack_series(runs, "ari", note=True)
        if np.isnan(ari).all():
            undefined.append(group_label(config, varying))
        else:
            draw_series(ax_ari, ari, label, color)
        draw_series(ax_acc, stack_series(runs, metric), label, color)
    if undefined:
        # An invisible entry so the ARI legend says why a configuration has no line.
        ax_ari.plot([], [], " ", label=f"no ARI (one model): {', '.join(undefined)}")
    draw_change_rounds((ax_ari, ax_acc), change_rounds(plotted))
    metric_name = {"accuracy": "test accuracy", "test_loss": "test loss"}[metric]
    for ax, name in ((ax_ari, "ARI (clustering accuracy)"), (ax_acc, metric_name)):
        ax.set_xlabel("round")
        ax.set_ylabel(name)
        ax.grid(alpha=0.3)
        ax.xaxis.get_major_locator().set_params(integer=True)
        ax.legend(fontsize="small", loc="best")
    ax_ari.set_ylim(min(-0.05, ax_ari.get_ylim()[0]), 1.05)
    ax_ari.set_title("ARI per round (mean ± std over seeds)")
    ax_acc.set_title(f"{metric_name} per round (mean ± std over seeds)")
    title = common_title(next(iter(groups.values()))[0].config, varying)
    if title:
        fig.suptitle(title)
    save(fig, args.out)


def read_round(path, round_number):
    """(loss [M, K], assignment [M], true_cluster [M], config, round 1-based, rounds, ARI)."""
    run = Run(path)
    with h5py.File(path, "r") as f:
        if "loss_vectors" not in f["clients"]:
            raise PlotError(
                f"{path} has no /clients/loss_vectors: algorithm "
                f"'{run.config.get('algorithm', '?')}' does not compute loss vectors; "
                "plot a clove or ifca run")
        if run.rounds == 0:
            raise PlotError(f"{path} has no finished rounds")
        t = run.rounds if round_number is None else round_number
        if not 1 <= t <= run.rounds:
            raise PlotError(f"--round {t} is out of range: {path} holds rounds 1..{run.rounds}")
        loss = np.asarray(f["clients/loss_vectors"][t - 1], dtype=float)
        if np.isnan(loss).all():
            raise PlotError(
                f"round {t} of {path} has no loss vectors (a random first assignment needs none); "
                "choose another --round")
        assignment = np.asarray(f["clients/assignment"][t - 1])
        true_cluster = np.asarray(f["clients/true_cluster"][:])
        if true_cluster.ndim == 2:  # a changing population's [T, M]: that round's truth
            true_cluster = true_cluster[t - 1]
    return loss, assignment, true_cluster, run, t


def plot_heatmap(args):
    loss, assignment, true_cluster, run, t = read_round(args.file, args.round)
    order = np.argsort(true_cluster, kind="stable")
    loss, assignment, true_cluster = loss[order], assignment[order], true_cluster[order]
    clients, models = loss.shape
    fig, ax = plt.subplots(figsize=(3.2 + 0.55 * min(models, 24), 2.0 + 0.28 * min(clients, 32)),
                           constrained_layout=True)
    draw_matrix(fig, ax, loss, args.scale)
    for i, k in enumerate(assignment):
        ax.add_patch(Rectangle((k - 0.5, i - 0.5), 1, 1, fill=False, edgecolor="red",
                               linewidth=2 if clients <= 40 else 1))
    mark_clusters(ax, true_cluster, order, models)
    ax.set_xticks(range(models), [str(k) for k in range(models)])
    ax.set_xlabel("model (red outline: the model each client is assigned to)")
    ax.set_ylabel("client (grouped by true cluster)")
    ari = run.ari[t - 1]
    ari_text = "undefined" if np.isnan(ari) else f"{ari:.3f}"
    ax.set_title(f"{run.config.get('algorithm', '?')}: loss vectors, round {t} of {run.rounds}, "
                 f"ARI {ari_text}", fontsize="medium")
    save(fig, args.out)


def read_soft(path):
    """(run, source_loss [T, K, S], importance [T, M, K] or None, mixture [M, S])."""
    run = Run(path)
    with h5py.File(path, "r") as f:
        if "mixture" not in f["clients"]:
            raise PlotError(f"{path} has no /clients/mixture: plot a run with a mixture_* --partition")
        if run.rounds == 0:
            raise PlotError(f"{path} has no finished rounds")
        source_loss = np.asarray(f["rounds/source_loss"][:run.rounds], dtype=float)
        importance = (np.asarray(f["clients/importance"][:run.rounds], dtype=float)
                      if "importance" in f["clients"] else None)
        mixture = np.asarray(f["clients/mixture"][:], dtype=float)
    return run, source_loss, importance, mixture


def plot_soft(args):
    run, source_loss, importance, mixture = read_soft(args.file)
    rounds, centers, sources = source_loss.shape
    x = np.arange(1, rounds + 1)
    panels = 2 if importance is not None else 1
    fig, axes = plt.subplots(panels, sources, figsize=(4.2 * sources, 3.2 * panels), squeeze=False,
                             constrained_layout=True)
    for s in range(sources):
        ax = axes[0][s]
        for j in range(centers):
            ax.plot(x, source_loss[:, j, s], label=f"center {j}")
        ax.set_yscale("log" if source_loss[:, :, s].max() > 100 * source_loss[:, :, s].min() > 0 else "linear")
        ax.set_title(f"holdout of source {s}", fontsize="medium")
        ax.set_xlabel("round")
        ax.set_ylabel("test loss")
        ax.legend(fontsize="small")
    if importance is not None:
        # Clients with the same mixture (10:90, 30:70) form one line; linear and random mixtures
        # are grouped by dominant source.
        keys = np.round(mixture, 3) if len(np.unique(np.round(mixture, 3), axis=0)) <= 8 else None
        groups = (np.unique(keys, axis=0, return_inverse=True)[1] if keys is not None
                  else mixture.argmax(axis=1))
        for s in range(min(sources, centers)):
            ax = axes[1][s]
            for g in np.unique(groups):
                members = groups == g
                share = np.round(mixture[members].mean(axis=0), 2)
                ax.plot(x, importance[:, members, s].mean(axis=1), label=f"true shares {list(share)}")
            ax.set_ylim(0, 1)
            ax.set_title(f"importance weight of center {s}", fontsize="medium")
            ax.set_xlabel("round")
            ax.legend(fontsize="small")
        for s in range(min(sources, centers), sources):
            axes[1][s].axis("off")
    fig.suptitle(f"{run.config.get('algorithm', '?')} on {run.config.get('partition', '?')}", fontsize="medium")
    save(fig, args.out)


def draw_matrix(fig, ax, loss, scale):
    """The [M, K] loss matrix as coloured cells with a colour bar; values written in small ones."""
    shown, norm = colour_scale(loss, scale)
    image = ax.imshow(shown, cmap="viridis", aspect="auto", interpolation="nearest", norm=norm)
    log = isinstance(norm, LogNorm)
    fig.colorbar(image, ax=ax, label="training loss" + (" (log scale)" if log else ""))
    if loss.size > 400:
        return
    for (i, k), value in np.ndenumerate(loss):
        shade = np.mean(image.cmap(image.norm(shown[i, k]))[:3])
        ax.text(k, i, short_number(value), ha="center", va="center", fontsize=7,
                color="black" if shade > 0.5 else "white")


def colour_scale(loss, scale):
    """(loss to draw, norm). The right model's loss is often orders of magnitude below the wrong
    ones' (e.g. 0.03 vs 100), so 'auto' takes a log scale when the values span over 100x."""
    floor = max(loss.max() * 1e-8, np.finfo(np.float32).tiny)
    low = max(loss.min(), floor)
    if scale == "linear" or (scale == "auto" and loss.max() < 100 * low):
        return loss, None
    return np.maximum(loss, low), LogNorm(vmin=low, vmax=max(loss.max(), low * 10))


def short_number(value):
    if value >= 10:
        return f"{value:.0f}"
    return f"{value:.3g}" if value >= 0.01 else f"{value:.0e}"


def mark_clusters(ax, true_cluster, client_ids, models):
    """Lines between true clusters, client ids on the left and cluster names on the right."""
    clients = len(true_cluster)
    starts = [0] + [i for i in range(1, clients) if true_cluster[i] != true_cluster[i - 1]]
    for start in starts[1:]:
        ax.axhline(start - 0.5, color="white", linewidth=2.5)
    ends = starts[1:] + [clients]
    # Row positions are not client ids once sorted: label each row, or none when too many.
    if clients <= 40:
        ax.set_yticks(range(clients), [str(c) for c in client_ids])
    else:
        ax.set_yticks([])
    if len(starts) > 25:
        return
    for start, end in zip(starts, ends):
        ax.text(models - 0.5 + 0.1, (start + end - 1) / 2, f" cluster {true_cluster[start]}",
                va="center", ha="left", fontsize="small", clip_on=False)


def check_out(out):
    """Refuses an --out whose extension matplotlib cannot write, before any work is done."""
    suffix = pathlib.Path(out).suffix
    if suffix.lstrip(".").lower() not in FigureCanvasBase.get_supported_filetypes():
        raise PlotError(f"--out {out}: unknown image type '{suffix}'; use .png or .svg")


def save(fig, out):
    out = pathlib.Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=DPI)
    plt.close(fig)
    print(f"wrote {out}")


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="\n".join(__doc__.split("\n")[1:]))
    sub = parser.add_subparsers(dest="command", required=True)
    rounds = sub.add_parser("rounds", help="ARI and accuracy per round, mean +- std over seeds")
    rounds.add_argument("paths", nargs="+", metavar="PATH", help="result files or directories")
    rounds.add_argument("--out", default="ari_accuracy_per_round.png",
                        help="output image, .png or .svg (default: %(default)s)")
    rounds.add_argument("--include-incomplete", action="store_true",
                        help="also use the finished rounds of running, killed or failed runs")
    rounds.set_defaults(func=plot_rounds)
    heatmap = sub.add_parser("heatmap", help="client x model loss matrix of one round")
    heatmap.add_argument("file", help="result file of a clove or ifca run")
    heatmap.add_argument("--round", type=int, default=None,
                         help="round to show, 1-based (default: the last finished round)")
    heatmap.add_argument("--scale", choices=("auto", "log", "linear"), default="auto",
                         help="colour scale; auto = log when losses span over 100x (default)")
    heatmap.add_argument("--out", default="loss_heatmap.png",
                         help="output image, .png or .svg (default: %(default)s)")
    heatmap.set_defaults(func=plot_heatmap)
    soft = sub.add_parser("soft", help="holdout loss per source and importance weights per round")
    soft.add_argument("file", help="result file of a run with a mixture_* partition")
    soft.add_argument("--out", default="soft_clustering.png",
                      help="output image, .png or .svg (default: %(default)s)")
    soft.set_defaults(func=plot_soft)
    return parser.parse_args(argv)


def main(argv):
    args = parse_args(argv)
    try:
        check_out(args.out)
        args.func(args)
    except PlotError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
