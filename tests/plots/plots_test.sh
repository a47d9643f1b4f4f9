#!/usr/bin/env bash
# Renders the plots of results/cflrun_plots.py from real cflrun result files and checks that each
# is a real PNG of some substance; also checks that the heatmap refuses a run without loss vectors.
# Usage: plots_test.sh CFLRUN WORKDIR [CLOVE_H5 FEDAVG_H5 FEDSOFT_H5]
#   Without the three files it first makes them: the tiny CLoVE config, 4 rounds, clove and fedavg,
#   and jobs/linreg_fedsoft_10_90.cfg, 6 rounds (CTest passes the integration tests' result files).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
plots="$here/../../results/cflrun_plots.py"
cflrun="$1"; work="$2"; shift 2
mkdir -p "$work"

fail() { echo "plots_test: FAIL: $*"; exit 1; }

/usr/bin/python3 -c "import h5py, matplotlib, numpy" 2>/dev/null ||
  fail "Debian's python3-h5py, python3-matplotlib and python3-numpy are not installed (results/requirements-debian.txt)"

if [ $# -ge 3 ]; then
  clove="$1"; fedavg="$2"; fedsoft="$3"
else
  clove="$work/clove.h5"; fedavg="$work/fedavg.h5"; fedsoft="$work/fedsoft.h5"
  for algorithm in clove fedavg; do
    "$cflrun" --config "$here/../integration/tiny_clove.cfg" --algorithm "$algorithm" --rounds 4 \
      --quiet --overwrite --out "$work/$algorithm.h5"
  done
  "$cflrun" --config "$here/../../jobs/linreg_fedsoft_10_90.cfg" --rounds 6 --quiet --overwrite --out "$fedsoft"
fi

# check_png FILE: exists, starts with the PNG signature, over 10 KB.
check_png() {
  [ -f "$1" ] || fail "$1 was not written"
  [ "$(head -c 8 "$1" | od -An -tx1 | tr -d ' \n')" = "89504e470d0a1a0a" ] || fail "$1 is not a PNG"
  local size; size="$(stat -c %s "$1")"
  [ "$size" -gt 10240 ] || fail "$1 is only $size bytes"
  echo "plots_test: $1: PNG, $size bytes"
}

rm -f "$work/rounds.png" "$work/heatmap.png" "$work/rounds.svg" "$work/none.png"
"$plots" rounds --out "$work/rounds.png" "$clove" "$fedavg" || fail "rounds plot failed"
check_png "$work/rounds.png"
"$plots" heatmap --round 2 --out "$work/heatmap.png" "$clove" || fail "heatmap failed"
check_png "$work/heatmap.png"
"$plots" rounds --out "$work/rounds.svg" "$clove" >/dev/null || fail "SVG rounds plot failed"
grep -q "<svg" "$work/rounds.svg" || fail "$work/rounds.svg is not an SVG"

if message="$("$plots" heatmap --out "$work/none.png" "$fedavg" 2>&1)"; then
  fail "heatmap of a fedavg run succeeded; expected an error about missing loss vectors"
fi
echo "$message" | grep -q "no /clients/loss_vectors" || fail "unexpected heatmap error: $message"
[ ! -f "$work/none.png" ] || fail "heatmap wrote $work/none.png despite the error"
# FedSoft Fig. 1 from a real FedSoft run on a 10:90 linear-regression mixture; refused on a
# run without a mixture.
rm -f "$work/soft.png" "$work/none_soft.png"
"$plots" soft --out "$work/soft.png" "$fedsoft" || fail "soft plot failed"
check_png "$work/soft.png"
if message="$("$plots" soft --out "$work/none_soft.png" "$clove" 2>&1)"; then
  fail "soft plot of a hard-partition run succeeded; expected an error about /clients/mixture"
fi
echo "$message" | grep -q "no /clients/mixture" || fail "unexpected soft plot error: $message"
# A file of a build before 2026-11-28 (every algorithm's options in /config) groups with a later
# file of the same experiment, which records the run's own algorithm's options only.
/usr/bin/python3 - "$plots" "$clove" "$work/old_style.h5" <<'PYTHON' || fail "an old-style file formed its own group"
import importlib.machinery, shutil, sys
import h5py
plots = importlib.machinery.SourceFileLoader("cflrun_plots", sys.argv[1]).load_module()
shutil.copy(sys.argv[2], sys.argv[3])
with h5py.File(sys.argv[3], "r+") as f:
    f["config"].attrs["pacfl-beta"] = "7"
    f["config"].attrs["cfl-eps1"] = "0.5"
    f["config"].attrs["seed"] = "2"
groups, _ = plots.group_runs([plots.Run(sys.argv[2]), plots.Run(sys.argv[3])])
assert len(groups) == 1, f"{len(groups)} groups"
with h5py.File(sys.argv[3], "r+") as f:
    f["config"].attrs["kmeans-restarts"] = "1"  # an option of the run's own algorithm still counts
groups, varying = plots.group_runs([plots.Run(sys.argv[2]), plots.Run(sys.argv[3])])
assert len(groups) == 2 and varying == ["kmeans-restarts"], (len(groups), varying)
PYTHON
# A run of a changing population (issue 45), made from the CLoVE file with h5py: a dashed line at
# each of its change rounds on both axes, with one "change" entry in each legend, and none for a
# file without /population/change_rounds; the heatmap takes its round's row of the [T, M] truth.
rm -f "$work/changes.png" "$work/changes_heatmap.png"
/usr/bin/python3 - "$plots" "$clove" "$work/changes.h5" <<'PYTHON' || fail "change rounds drawn wrongly"
import importlib.machinery, shutil, sys
import h5py
import numpy as np
plots = importlib.machinery.SourceFileLoader("cflrun_plots", sys.argv[1]).load_module()
fixed, changing = sys.argv[2], sys.argv[3]
shutil.copy(fixed, changing)
with h5py.File(changing, "r+") as f:
    f.create_dataset("population/change_rounds", data=np.array([2, 3], dtype=np.int32))
    truth = f["clients/true_cluster"][:]
    del f["clients/true_cluster"]
    f.create_dataset("clients/true_cluster", data=np.stack([truth] * int(f.attrs["completed_rounds"])))
figures = []
plots.save = lambda fig, out: figures.append(fig)


def change_lines(paths):
    """Per axis: the x of its dashed lines and how often its legend says "change"."""
    figures.clear()
    plots.plot_rounds(plots.parse_args(["rounds", *paths]))
    return [(sorted(line.get_xdata()[0] for line in ax.get_lines() if line.get_linestyle() == "--"),
             [t.get_text() for t in ax.get_legend().get_texts()].count("change"))
            for ax in figures[0].axes]


assert change_lines([changing, fixed]) == [([2, 3], 1)] * 2, change_lines([changing, fixed])
assert change_lines([fixed]) == [([], 0)] * 2, change_lines([fixed])
PYTHON
# A run without accuracy (FedSoft on linear regression: NaN) plots its test loss, log scale, the
# file's values; real-valued options label the lines in their shortest form.
/usr/bin/python3 - "$plots" "$fedsoft" <<'PYTHON' || fail "the test-loss panel or the labels are wrong"
import importlib.machinery, sys
import h5py
import numpy as np
plots = importlib.machinery.SourceFileLoader("cflrun_plots", sys.argv[1]).load_module()
figures = []
plots.save = lambda fig, out: figures.append(fig)
plots.plot_rounds(plots.parse_args(["rounds", sys.argv[2]]))
right = figures[0].axes[1]
assert right.get_ylabel() == "test loss" and right.get_yscale() == "log", (right.get_ylabel(), right.get_yscale())
with h5py.File(sys.argv[2], "r") as f:
    loss = f["rounds/test_loss"][:]
assert np.allclose(right.get_lines()[0].get_ydata(), loss), (right.get_lines()[0].get_ydata(), loss)
assert [plots.shown(v) for v in ("0.00029999999999999997", "0.10000000000000001", "5", "-2", "kmeans")] == \
    ["0.0003", "0.1", "5", "-2", "kmeans"]
PYTHON
"$plots" rounds --out "$work/changes.png" "$work/changes.h5" || fail "rounds plot of a changing population failed"
check_png "$work/changes.png"
"$plots" heatmap --round 2 --out "$work/changes_heatmap.png" "$work/changes.h5" ||
  fail "heatmap of a changing population failed"
check_png "$work/changes_heatmap.png"
echo "plots_test: PASS"
