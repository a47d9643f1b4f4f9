#!/usr/bin/env bash
# Benchmark (not a test): a CLoVE round of jobs/fmnist_label_skew1.cfg (1 rank, cflrun's default
# thread choice unless EXTRA_OPTIONS say otherwise) alone and beside 1, 2 and 3 busy processes
# (shell loops that never sleep), REPEATS times each, alternating. Prints seconds per round (mean of
# the rounds after the first, best of the repeats) and the slowdown against the round alone.
# Usage: tests/bench/contention.sh [REPEATS=3] [ROUNDS=4] [BUILD_DIR=build] [EXTRA_OPTIONS...]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
repeats="${1:-3}"
rounds="${2:-4}"
build="${3:-build}"
shift $(($# < 3 ? $# : 3))
python=.venv/bin/python  # setup.sh's venv: the system's h5py
[ -x "$python" ] || python=/usr/bin/python3
"$python" -c 'import h5py' 2>/dev/null || { echo "contention: needs h5py (apt-get install python3-h5py)" >&2; exit 2; }
work="$(mktemp -d)"
busy_pids=()
stop_busy() {
  if [ "${#busy_pids[@]}" -gt 0 ]; then kill "${busy_pids[@]}" 2>/dev/null || true; fi
  busy_pids=()
}
trap 'stop_busy; rm -rf "$work"' EXIT

for r in $(seq 1 "$repeats"); do
  for busy in 0 1 2 3; do
    for _ in $(seq 1 "$busy"); do
      bash -c 'while :; do :; done' &
      busy_pids+=("$!")
    done
    "$build/cflrun" --config jobs/fmnist_label_skew1.cfg --rounds "$rounds" --quiet --checkpoint-every 0 \
      --out "$work/busy${busy}_$r.h5" "$@" > /dev/null
    stop_busy
  done
  echo "repeat $r of $repeats done" >&2
done

"$python" - "$work" "$repeats" <<'EOF'
import sys, h5py
work, repeats = sys.argv[1], int(sys.argv[2])
def round_seconds(path):
    with h5py.File(path, "r") as f:
        threads = f["config"].attrs.get("threads_per_rank", b"?")
        seconds = f["rounds/seconds"][1:].sum(1).mean()  # rounds after the first
    return seconds, threads.decode() if isinstance(threads, bytes) else threads
best = {}
for busy in range(4):
    runs = [round_seconds(f"{work}/busy{busy}_{r}.h5") for r in range(1, repeats + 1)]
    best[busy] = min(runs)
alone = best[0][0]
print(f"{'busy processes':<16}{'s/round':>9}{'slowdown':>10}{'threads':>9}   (best of {repeats}, rounds after the first)")
for busy in range(4):
    seconds, threads = best[busy]
    print(f"{busy:<16}{seconds:>9.3f}{seconds / alone:>9.2f}x{threads:>9}")
EOF
