#!/bin/bash
# jobs/paper/ holds exactly what make_configs.py writes, and every Fashion-MNIST setting in it (one
# config per partition; the algorithms of a cell share its data settings) and every algorithm's
# label skew 1 config pass a --dry-run: options valid, data loaded, partition, algorithm and
# models built. A CIFAR-10 config without the CIFAR
# files stops with the message that says where to get them.
# Usage: paper_configs.sh SOURCE_DIR CFLRUN
set -euo pipefail
source_dir=$1
cflrun=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

python3 "$source_dir/jobs/paper/make_configs.py" "$work/generated"
cp "$source_dir/jobs/paper/make_configs.py" "$work/generated/"
diff -r "$source_dir/jobs/paper" "$work/generated" || {
  echo "FAIL: jobs/paper differs from what make_configs.py writes; run jobs/paper/make_configs.py" >&2
  exit 1
}

cd "$source_dir"
for cfg in jobs/paper/fmnist_*_clove.cfg jobs/paper/fmnist_label_skew_1_*.cfg; do
  "$cflrun" --config "$cfg" --dry-run > "$work/out.txt" 2>&1 || { cat "$work/out.txt"; echo "FAIL: $cfg" >&2; exit 1; }
  grep -q "nothing (--dry-run)" "$work/out.txt"
  echo "ok: $cfg: $(grep -o '[0-9]* clients in .*models ([^)]*)' "$work/out.txt")"
done
test ! -e results/paper/fmnist_label_skew_1_clove.h5 || { echo "FAIL: --dry-run wrote a result file" >&2; exit 1; }

if [ ! -d datasets/cifar-10-batches-bin ]; then
  if "$cflrun" --config jobs/paper/cifar10_label_skew_1_clove.cfg --dry-run > "$work/out.txt" 2>&1; then
    echo "FAIL: a CIFAR-10 config ran without the CIFAR-10 files" >&2; exit 1
  fi
  grep -q "cifar-10-binary.tar.gz" "$work/out.txt" || { cat "$work/out.txt"; echo "FAIL: no download hint" >&2; exit 1; }
  echo "ok: CIFAR-10 absent, clear message: $(grep error "$work/out.txt" | head -1)"
fi
