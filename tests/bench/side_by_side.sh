#!/usr/bin/env bash
# Benchmark (not a test): the same CLoVE round (jobs/fmnist_label_skew1.cfg, 1 rank, all cores) run
# by cflrun (as configured: --parallel-clients, and with --parallel-clients false), by the plain eager PyTorch reference
# tests/bench/pytorch_clove_round.py and by the torch.func (vmap) round tests/bench/torchfunc_round.py
# at the same shapes (25 clients, 500/400 samples, 5 clusters of 2 classes), alternating, REPEATS
# times each; prints seconds per round and per phase (mean of the rounds after the first, best of
# the repeats), the ratio reference / cflrun,
# and GFLOP/s against the round's FLOP count; then the floor of a round with LibTorch's fastest kernels
# here (tests/bench/machine_ceiling.py). With BASELINE_BUILD_DIR (another build of cflrun, e.g. an
# older commit's), its round runs in the same alternation and the speed-up over it is printed.
# The PyTorch side runs on setup.sh's venv (.venv: the torch wheel cflrun is built against, and
# Debian's h5py and numpy through the system site packages).
# Usage: tests/bench/side_by_side.sh [REPEATS=3] [ROUNDS=4] [BUILD_DIR=build] [BASELINE_BUILD_DIR]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
repeats="${1:-3}"
rounds="${2:-4}"
build="${3:-build}"
baseline="${4:-}"
python=.venv/bin/python  # setup.sh's venv: the same LibTorch as cflrun
"$python" -c 'import torch, h5py' 2>/dev/null ||
  { echo "side_by_side: needs setup.sh's .venv with torch, and h5py (apt-get install python3-h5py)" >&2; exit 2; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
threads="$(nproc)"

for r in $(seq 1 "$repeats"); do
  "$build/cflrun" --config jobs/fmnist_label_skew1.cfg --rounds "$rounds" --threads "$threads" --quiet \
    --checkpoint-every 0 --out "$work/cflrun$r.h5" > /dev/null
  "$python" tests/bench/pytorch_clove_round.py --rounds "$rounds" --threads "$threads" | tail -n 6 > "$work/pytorch$r.txt"
  "$python" tests/bench/torchfunc_round.py --clients 25 --train 500 --test 400 --clusters 5 \
    --rounds "$rounds" --threads "$threads" | tail -n 1 > "$work/torchfunc$r.txt"
  "$build/cflrun" --config jobs/fmnist_label_skew1.cfg --rounds "$rounds" --threads "$threads" \
    --parallel-clients false --quiet --checkpoint-every 0 --out "$work/parallel$r.h5" > /dev/null
  if [ -n "$baseline" ]; then
    "$baseline/cflrun" --config jobs/fmnist_label_skew1.cfg --rounds "$rounds" --threads "$threads" \
      --quiet --checkpoint-every 0 --out "$work/baseline$r.h5" > /dev/null
  fi
  echo "repeat $r of $repeats done" >&2
done

"$python" - "$work" "$repeats" <<'EOF'
import os, sys, h5py, numpy as np
work, repeats = sys.argv[1], int(sys.argv[2])
phases = ["query", "plan", "local_update", "aggregate", "evaluate"]
def cflrun_phases(path):
    with h5py.File(path, "r") as f:
        seconds = f["rounds/seconds"][1:]  # rounds after the first
        names = [n.decode() if isinstance(n, bytes) else n for n in f["rounds/seconds"].attrs["phases"]]
    mean = dict(zip(names, seconds.mean(0)))
    figures = {p: mean.get(p, 0.0) for p in phases}
    figures["other"] = sum(v for n, v in mean.items() if n not in phases)
    figures["round"] = seconds.sum(1).mean()
    return figures
def pytorch_phases(path):
    figures = dict((line.split()[0], float(line.split()[1])) for line in open(path))
    figures["other"] = 0.0
    return figures
ours = [cflrun_phases(f"{work}/cflrun{r}.h5") for r in range(1, repeats + 1)]
parallel = [cflrun_phases(f"{work}/parallel{r}.h5") for r in range(1, repeats + 1)]
ref = [pytorch_phases(f"{work}/pytorch{r}.txt") for r in range(1, repeats + 1)]
def torchfunc_phases(path):  # "torchfunc 25 clients on cpu: S s/round; query S plan S ..."
    words = open(path).read().split(";")[1].split()
    figures = {name: float(value) for name, value in zip(words[::2], words[1::2])}
    figures["other"] = 0.0
    figures["round"] = sum(figures[p] for p in phases)
    return figures
func = [torchfunc_phases(f"{work}/torchfunc{r}.txt") for r in range(1, repeats + 1)]
# FLOPs of one round: the CNN's forward is 242 560 multiply-adds per 28x28 image (conv1 86 400,
# conv2 153 600, linear 2 560); training counts forward + backward as 3 forwards.
forward = 2 * 242_560
flops = forward * (25 * 500 * 5 + 3 * 25 * 500 + 25 * 400)
best = lambda runs, p: min(o[p] for o in runs)
print(f"{'phase':<14}{'cflrun s':>10}{'serial s':>12}{'PyTorch s':>11}{'ratio':>8}{'ratio':>8}"
      f"{'torch.func s':>14}{'ratio':>8}"
      f"   (best of {repeats}, rounds after the first; cflrun = the default --parallel-clients, then"
      f" --parallel-clients false; ratios: PyTorch / cflrun, PyTorch / serial, torch.func / cflrun)")
for p in phases + ["other", "round"]:
    a, c, b, f = best(ours, p), best(parallel, p), best(ref, p), best(func, p)
    ratio = lambda x, y: x / y if y > 0 else float("nan")
    print(f"{p:<14}{a:>10.3f}{c:>12.3f}{b:>11.3f}{ratio(b, a):>8.2f}{ratio(b, c):>8.2f}"
          f"{f:>14.3f}{ratio(f, a):>8.2f}")
print(f"round FLOPs {flops / 1e9:.1f} G; PyTorch {flops / best(ref, 'round') / 1e9:.1f} GFLOP/s; "
      f"torch.func {flops / best(func, 'round') / 1e9:.1f} GFLOP/s")
for name, runs in (("cflrun", ours), ("cflrun --parallel-clients false", parallel)):
    r = best(runs, "round")
    print(f"{name}: {flops / r / 1e9:.1f} GFLOP/s, {best(ref, 'round') / r:.2f}x faster per round than the plain PyTorch script")
if os.path.exists(f"{work}/baseline1.h5"):
    base = best([cflrun_phases(f"{work}/baseline{r}.h5") for r in range(1, repeats + 1)], "round")
    print(f"baseline build: {base:.3f} s per round; cflrun {base / best(ours, 'round'):.2f}x faster")
EOF
# What LibTorch's fastest kernels allow on this machine: the floor of a round (machine_ceiling.py).
"$python" tests/bench/machine_ceiling.py --threads "$threads" --repeats 3
