#!/bin/bash
# Every shipped config runs: `cflrun check` dry-runs each config of one group (options valid, data
# loaded, partition, algorithm and models built, nothing written). MNIST and CIFAR-10 configs use the
# real files when datasets/ has them, else stand-in files of the same format, size and class counts
# (stand_in_datasets.py). Group `generated` checks that jobs/paper holds exactly what
# make_configs.py writes, and that a CIFAR-10 config without the CIFAR files stops with the message
# that says where to get them.
# Usage: paper_configs.sh SOURCE_DIR CFLRUN generated|fmnist|mnist|cifar10_sample|cifar10|cifar10_pacfl
set -euo pipefail
source_dir=$1
cflrun=$2
group=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$source_dir"
results_before=$(find results/paper -name '*.h5*' 2>/dev/null | sort || true)

# The dry runs of one dataset's configs, on DIR (real data) or on stand-ins; one thread (no spinning).
check_group() {
  local data_dir=$1
  shift
  local extra=(--threads 1)
  [ -n "$data_dir" ] && extra+=(--data-dir "$data_dir")
  "$cflrun" check "$@" -- "${extra[@]}" > "$work/out.txt" 2>&1 || {
    grep -E "^(FAIL|cflrun: error)" "$work/out.txt" >&2
    echo "FAIL: some configs do not pass --dry-run" >&2
    exit 1
  }
  tail -n 1 "$work/out.txt"
  local configs=$#
  [ "$(grep -c '^ok: ' "$work/out.txt")" -eq "$configs" ] || { echo "FAIL: expected $configs ok lines" >&2; exit 1; }
}

# dataset_dir NAME: "" (the default, datasets/NAME) when the real files are there, else the directory of
# stand-in files of the same format, size and class counts.
dataset_dir() {
  [ -d "datasets/$1" ] && return
  python3 "$source_dir/tests/integration/stand_in_datasets.py" "$work/stand_in" >&2
  echo "$work/stand_in/$1"
}

case "$group" in
  generated)
    python3 jobs/paper/make_configs.py "$work/generated"
    cp jobs/paper/make_configs.py jobs/paper/official_draws.py jobs/paper/sweep.sh jobs/paper/paper_values.csv \
        jobs/paper/accuracy_definitions.csv jobs/paper/evidence.csv \
        "$work/generated/"
    diff -r jobs/paper "$work/generated" || {
      echo "FAIL: jobs/paper differs from what make_configs.py writes; run jobs/paper/make_configs.py" >&2
      exit 1
    }
    echo "ok: jobs/paper is what make_configs.py writes"
    # The (F)MNIST label skew 2 configs give the official seed-1 draw that official_draws.py replays.
    for dataset in fmnist mnist; do
      /usr/bin/python3 jobs/paper/official_draws.py 1 "$dataset" > "$work/draws.txt"
      [ "$(wc -l < "$work/draws.txt")" -eq 3 ] || { echo "FAIL: official_draws.py printed no draw" >&2; exit 1; }
      for config in jobs/paper/"$dataset"_label_skew_2_*.cfg; do
        while read -r line; do
          grep -qxF "$line" "$config" || { echo "FAIL: $config lacks: $line" >&2; exit 1; }
        done < "$work/draws.txt"
      done
      echo "ok: the $dataset label skew 2 configs give the draw official_draws.py replays"
    done
    # A failing config is named, the others still run, and the exit status is 1.
    printf 'dataset = fmnist\nclusters = 6\n' > "$work/impossible.cfg"
    if "$cflrun" check "$work/impossible.cfg" jobs/fmnist_label_skew1.cfg "$work/absent.cfg" -- --threads 1 \
        > "$work/out.txt" 2>&1; then
      echo "FAIL: cflrun check passed bad configs" >&2; exit 1
    fi
    grep -q "^FAIL: $work/impossible.cfg: --clusters must be between 1 and 5" "$work/out.txt" &&
      grep -q "^ok: jobs/fmnist_label_skew1.cfg" "$work/out.txt" &&
      grep -q "^FAIL: $work/absent.cfg: --config .*: not a regular file" "$work/out.txt" &&
      grep -q "^1 of 3 configs passed" "$work/out.txt" || { cat "$work/out.txt"; echo "FAIL: check output" >&2; exit 1; }
    echo "ok: cflrun check names the failing configs and exits 1"
    if [ ! -d datasets/cifar-10-batches-bin ]; then
      if "$cflrun" --config jobs/paper/cifar10_label_skew_1_clove.cfg --dry-run > "$work/out.txt" 2>&1; then
        echo "FAIL: a CIFAR-10 config ran without the CIFAR-10 files" >&2; exit 1
      fi
      grep -q "cifar-10-binary.tar.gz" "$work/out.txt" || { cat "$work/out.txt"; echo "FAIL: no download hint" >&2; exit 1; }
      echo "ok: CIFAR-10 absent, clear message: $(grep error "$work/out.txt" | head -1)"
    fi
    ;;
  fmnist)  # and the configs of generated data (linreg)
    check_group "" jobs/*.cfg jobs/paper/fmnist_*.cfg jobs/paper/linreg_*.cfg
    ;;
  mnist)
    dir=$(dataset_dir mnist)
    check_group "$dir" jobs/paper/mnist_*.cfg
    ;;
  cifar10_sample)
    # CI's share of the CIFAR-10 configs (no real CIFAR-10 here: stand-ins): one config of every
    # algorithm, the partitions taken in turn, and the configs of the other models and clustering
    # options (the unsupervised autoencoder, Table 12's ablations); groups cifar10 and cifar10_pacfl
    # (the long configuration) check all of them.
    dir=$(dataset_dir cifar-10-batches-bin)
    partitions=(label_skew_1 label_skew_2 concept_shift feature_skew label_skew_3 label_skew_4)
    configs=()
    turn=0
    for config in jobs/paper/cifar10_label_skew_1_*.cfg; do
      algorithm=${config#jobs/paper/cifar10_label_skew_1_}
      configs+=("jobs/paper/cifar10_${partitions[turn % ${#partitions[@]}]}_$algorithm")
      turn=$((turn + 1))
    done
    configs+=(jobs/paper/cifar10_unsupervised_clove.cfg jobs/paper/cifar10_label_skew_3_ablation_clove_*.cfg)
    check_group "$dir" "${configs[@]}"
    ;;
  cifar10)
    # PACFL's configs in a group of their own: their dry runs compute every client's signatures
    # (per-label SVDs of 3 072-pixel images, about 70 s), the other 72 configs about 40 s.
    dir=$(dataset_dir cifar-10-batches-bin)
    configs=()
    for config in jobs/paper/cifar10_*.cfg; do
      [[ "$config" == *_pacfl.cfg ]] || configs+=("$config")
    done
    check_group "$dir" "${configs[@]}"
    ;;
  cifar10_pacfl)
    dir=$(dataset_dir cifar-10-batches-bin)
    check_group "$dir" jobs/paper/cifar10_*_pacfl.cfg
    ;;
  *)
    echo "usage: paper_configs.sh SOURCE_DIR CFLRUN generated|fmnist|mnist|cifar10_sample|cifar10|cifar10_pacfl" >&2
    exit 2
    ;;
esac
if [ "$(find results/paper -name '*.h5*' 2>/dev/null | sort || true)" != "$results_before" ]; then
  echo "FAIL: a dry run wrote a result file under results/paper" >&2
  exit 1
fi
