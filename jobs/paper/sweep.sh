#!/usr/bin/env bash
# Writes one manifest for a SLURM job array that runs paper configs over seeds, and prints the
# sbatch command. Every config gets its own result directory, RESULTS_DIR/<config name>/seed<S>.h5,
# which `cflrun report --paper RESULTS_DIR` compares with the paper's tables.
#
#   jobs/paper/sweep.sh RESULTS_DIR ROUNDS SEEDS CONFIG...
#
#   RESULTS_DIR  where the manifest (manifest.txt) and the result files go
#   ROUNDS       communication rounds of every run (the paper: 100)
#   SEEDS        comma-separated seeds (the paper: 1,2,3)
#   CONFIG...    jobs/paper/*.cfg files; lines run config by config, seeds fastest
#
# Example, the Fashion-MNIST cells of Tables 1, 2 and 4, two single-core runs at a time:
#   jobs/paper/sweep.sh results/paper_fmnist 100 1,2,3 \
#       jobs/paper/fmnist_{label_skew_1,label_skew_2,concept_shift,feature_skew}_{clove,ifca,pacfl,fedavg,local}.cfg
#   sbatch --array=0-59%2 --ntasks=1 --cpus-per-task=1 jobs/slurm/sweep.sbatch results/paper_fmnist/manifest.txt
set -euo pipefail
if [ "$#" -lt 4 ]; then
  sed -n '2,17p' "$0" >&2
  exit 2
fi
results_dir=$1 rounds=$2 seeds=$3
shift 3
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cflrun="${CFLRUN:-$here/../../build/cflrun}"
mkdir -p "$results_dir"
manifest="$results_dir/manifest.txt"
part="$(mktemp)"
trap 'rm -f "$part"' EXIT
: > "$manifest"
for config in "$@"; do
  name="$(basename "$config" .cfg)"
  "$cflrun" sweep --config "$config" --set "seed=$seeds" --set "rounds=$rounds" \
      --results-dir "$results_dir/$name" --out "$part" --force > /dev/null
  cat "$part" >> "$manifest"
done
runs=$(grep -cv '^\s*\(#\|$\)' "$manifest")
echo "wrote $runs runs to $manifest"
echo "submit with: sbatch --array=0-$((runs - 1))%2 --ntasks=1 --cpus-per-task=1 jobs/slurm/sweep.sbatch $manifest"
