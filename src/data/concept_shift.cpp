#include <cflrun/data/cluster_pools.hpp>

#include <algorithm>
#include <array>
#include <string>
#include <utility>

#include <cflrun/core/error.hpp>
#include <cflrun/core/rng.hpp>

namespace cflrun::data {
namespace {

/// Two disjoint transpositions of labels: {a, b, c, d} means a<->b and c<->d.
using SwapPair = std::array<std::int64_t, 4>;

/// The official exp111 swaps of clusters 0..3 (clove-official-setup.md Sec. 6).
constexpr std::array<SwapPair, 4> kOfficialSwaps = {{
    {0, 3, 8, 9},
    {1, 4, 6, 9},
    {1, 2, 3, 6},
    {3, 5, 4, 7},
}};
constexpr int kOfficialClasses = 10;
constexpr std::int64_t kOfficialTrainPerClass =
    1250;                                            // exp111: train samples per class and cluster
constexpr std::int64_t kOfficialTestPerClass = 200;  // exp111: test samples per class and cluster

std::vector<std::int64_t> apply_swaps(int num_classes, const SwapPair& swaps) {
  std::vector<std::int64_t> map = identity_label_map(num_classes);
  std::swap(map[swaps[0]], map[swaps[1]]);
  std::swap(map[swaps[2]], map[swaps[3]]);
  return map;
}

/// Four distinct classes drawn uniformly in order, read as two disjoint swaps.
SwapPair draw_swaps(std::mt19937_64& engine, int num_classes) {
  SwapPair classes{};
  for (std::size_t i = 0; i < classes.size(); ++i) {
    do {
      classes[i] = static_cast<std::int64_t>(
          core::uniform_index(engine, static_cast<std::uint64_t>(num_classes)));
    } while (std::find(classes.begin(), classes.begin() + i, classes[i]) != classes.begin() + i);
  }
  return classes;
}

/// Cluster k's pool of one split: part k of every class after a seeded shuffle of that class.
std::vector<torch::Tensor> class_shares(const ImageSplit& split, int num_classes, int clusters,
                                        std::uint64_t data_seed, PartitionStream stream,
                                        std::int64_t max_share) {
  std::vector<std::vector<torch::Tensor>> parts(static_cast<std::size_t>(clusters));
  for (int c = 0; c < num_classes; ++c) {
    const torch::Tensor indices = torch::nonzero(split.labels.eq(c)).flatten();
    const std::int64_t count = indices.size(0);
    const torch::Tensor shuffled = indices.index_select(
        0, torch::randperm(count, partition_generator(data_seed, stream, c), torch::kInt64));
    const std::int64_t share = count / clusters;
    const std::int64_t taken = max_share > 0 ? std::min(share, max_share) : share;
    for (int k = 0; k < clusters; ++k) {
      parts[static_cast<std::size_t>(k)].push_back(shuffled.narrow(0, k * share, taken));
    }
  }
  std::vector<torch::Tensor> pools;
  pools.reserve(parts.size());
  for (const auto& cluster_parts : parts) {
    pools.push_back(torch::cat(cluster_parts));
  }
  return pools;
}

}  // namespace

std::vector<std::vector<std::int64_t>> concept_shift_label_maps(int clusters, int num_classes,
                                                                std::uint64_t data_seed) {
  check_cluster_count(PartitionKind::kConceptShift, clusters, num_classes);
  if (num_classes < kOfficialClasses) {
    throw DataError(
        "concept_shift: the official label swaps use classes 0..9, but the dataset has " +
        std::to_string(num_classes) + " classes; use a dataset with 10 classes");
  }
  std::vector<std::vector<std::int64_t>> maps;
  maps.reserve(static_cast<std::size_t>(clusters));
  for (int k = 0; k < clusters; ++k) {
    if (k < static_cast<int>(kOfficialSwaps.size())) {
      maps.push_back(apply_swaps(num_classes, kOfficialSwaps[static_cast<std::size_t>(k)]));
      continue;
    }
    // Beyond the paper's four clusters: redraw until the label map is new (check_cluster_count
    // guarantees that enough distinct maps exist).
    std::mt19937_64 engine = core::make_engine(data_seed, core::Purpose::kConceptShiftSwaps,
                                               static_cast<std::uint64_t>(k));
    std::vector<std::int64_t> map = apply_swaps(num_classes, draw_swaps(engine, num_classes));
    while (std::find(maps.begin(), maps.end(), map) != maps.end()) {
      map = apply_swaps(num_classes, draw_swaps(engine, num_classes));
    }
    maps.push_back(std::move(map));
  }
  return maps;
}

ClassShare official_concept_shift_share() {
  return {kOfficialTrainPerClass, kOfficialTestPerClass};
}

std::vector<ClusterPool> concept_shift_pools(const ImageDataset& dataset, int clusters,
                                             std::uint64_t data_seed, ClassShare share) {
  std::vector<std::vector<std::int64_t>> maps =
      concept_shift_label_maps(clusters, dataset.num_classes, data_seed);
  std::vector<torch::Tensor> train =
      class_shares(dataset.train, dataset.num_classes, clusters, data_seed,
                   PartitionStream::kClassShuffleTrain, share.max_train);
  std::vector<torch::Tensor> test =
      class_shares(dataset.test, dataset.num_classes, clusters, data_seed,
                   PartitionStream::kClassShuffleTest, share.max_test);
  std::vector<ClusterPool> pools(static_cast<std::size_t>(clusters));
  for (std::size_t k = 0; k < pools.size(); ++k) {
    pools[k].train = std::move(train[k]);
    pools[k].test = std::move(test[k]);
    pools[k].label_map = std::move(maps[k]);
  }
  return pools;
}

}  // namespace cflrun::data
