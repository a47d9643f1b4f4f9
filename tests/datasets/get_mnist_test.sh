#!/usr/bin/env bash
# datasets/get_mnist.sh: installs the official MNIST from a directory (gzip or plain files, either
# naming), from the first working mirror (file:// URLs here), refuses corrupt files and a DEST that
# holds something else, and what it installs trains a tiny CLoVE run (cflrun --dataset mnist).
# Needs the official files: $CFLRUN_MNIST_FULL_DIR, else ../shared/datasets/mnist-full beside the
# source tree, else the source tree's datasets/mnist if setup.sh installed them there; skipped
# (77) without them. No network: PyPI is turned off (CFLRUN_MNIST_PYPI=).
# Usage: get_mnist_test.sh SOURCE_DIR CFLRUN
set -uo pipefail
src="$(cd "$1" && pwd)"
cflrun="$2"
script="$src/datasets/get_mnist.sh"
work="$(mktemp -d /tmp/cflrun-get-mnist.XXXXXX)"
trap 'rm -rf "$work"' EXIT
export CFLRUN_MNIST_PYPI=""
# shellcheck source=../expect.sh
source "$src/tests/expect.sh"

official=""
for candidate in "${CFLRUN_MNIST_FULL_DIR:-}" "$src/../shared/datasets/mnist-full" "$src/datasets/mnist"; do
  if [ -n "$candidate" ] && [ -d "$candidate" ] && "$script" --from "$candidate" "$work/probe" > /dev/null 2>&1; then
    official="$candidate"
    break
  fi
done
if [ -z "$official" ]; then
  echo "get_mnist_test: SKIP: no official MNIST at hand (set CFLRUN_MNIST_FULL_DIR, or run setup.sh)"
  exit 77
fi
echo "get_mnist_test: official files from $official"

gz_names() { find "$1" -mindepth 1 -printf '%f\n' | sort | tr '\n' ' '; }
readonly kInstalled="t10k-images-idx3-ubyte.gz t10k-labels-idx1-ubyte.gz train-images-idx3-ubyte.gz train-labels-idx1-ubyte.gz "

expect from_directory 0 "installed the official MNIST in $work/a" "$script" --from "$official" "$work/a"
[ "$(gz_names "$work/a")" = "$kInstalled" ] || fail_check from_directory "$(gz_names "$work/a")"
expect already_there 0 "already holds the official MNIST" "$script" --from "$official" "$work/a"

# Plain files with the dotted naming (train-images.idx3-ubyte), as some packages ship them.
mkdir -p "$work/plain"
for name in train-images-idx3-ubyte train-labels-idx1-ubyte t10k-images-idx3-ubyte t10k-labels-idx1-ubyte; do
  gzip -dc "$work/a/$name.gz" > "$work/plain/${name/-idx/.idx}"
done
expect plain_dotted_files 0 "installed the official MNIST" "$script" --from "$work/plain" "$work/b"
cmp -s <(gzip -dc "$work/a/train-images-idx3-ubyte.gz") <(gzip -dc "$work/b/train-images-idx3-ubyte.gz") ||
  fail_check plain_dotted_files "train images differ"

# Mirrors: the first (absent) fails, the second serves the files.
expect mirror_fallback 0 "file://$work/none did not give the official files" \
  env CFLRUN_MNIST_MIRRORS="file://$work/none file://$work/a" "$script" "$work/c"
[ "$(gz_names "$work/c")" = "$kInstalled" ] || fail_check mirror_fallback "$(gz_names "$work/c")"

# A mirror whose labels file is corrupt: refused, nothing installed.
cp -r "$work/a" "$work/corrupt" && chmod -R u+w "$work/corrupt"
printf 'x' | dd of="$work/corrupt/train-labels-idx1-ubyte.gz" bs=1 seek=100 conv=notrunc status=none
expect corrupt_mirror 1 "train-labels-idx1-ubyte.gz: SHA-256 of its content is" \
  env CFLRUN_MNIST_MIRRORS="file://$work/corrupt" "$script" "$work/d"
[ ! -e "$work/d" ] || fail_check corrupt_mirror "$work/d was created"
expect corrupt_directory 1 "does not hold the official MNIST files" "$script" --from "$work/corrupt" "$work/d"

# A DEST holding something else (the 8 000-digit subset, say) stays untouched.
mkdir -p "$work/other" && echo keep > "$work/other/train-images-idx3-ubyte"
expect other_dest_kept 1 "exists and does not hold the official MNIST files" "$script" --from "$official" "$work/other"
[ "$(cat "$work/other/train-images-idx3-ubyte")" = keep ] || fail_check other_dest_kept "changed"
ln -s "$work/nowhere" "$work/dangling"
expect dangling_link_dest 1 "dangling is a symbolic link to .*nowhere, which does not exist" \
  "$script" --from "$official" "$work/dangling"
expect no_leftovers 0 "^$" bash -c "ls -A '$work' | grep '^\.get_mnist' || true"

# What it installed is what cflrun reads: a tiny CLoVE run on MNIST reaches ARI 1.
expect cflrun_reads_it 0 "^round +3/3 +ARI 1\.000" \
  "$cflrun" --config "$src/tests/integration/tiny_clove.cfg" --dataset mnist --data-dir "$work/a" \
  --rounds 3 --threads 1 --out "$work/tiny.h5"

expect_summary
