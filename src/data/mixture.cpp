#include <cflrun/data/mixture.hpp>

#include <algorithm>
#include <iterator>
#include <numeric>
#include <utility>

#include <torch/types.h>

#include <cflrun/core/error.hpp>
#include <cflrun/core/rng.hpp>
#include <cflrun/data/cluster_pools.hpp>

namespace cflrun::data {
namespace {

constexpr int kMaxRotations = 4;

/// Every client's sample counts per source, [M][S], for n_k samples each.
std::vector<std::vector<std::int64_t>> counts_per_client(const torch::Tensor& weights,
                                                         const std::vector<std::int64_t>& totals) {
  std::vector<std::vector<std::int64_t>> counts;
  for (std::size_t c = 0; c < totals.size(); ++c) {
    counts.push_back(source_counts(weights[static_cast<std::int64_t>(c)], totals[c]));
  }
  return counts;
}

std::vector<int> dominant_sources(const torch::Tensor& weights) {
  const auto dominant = weights.argmax(/*dim=*/1).contiguous();
  return std::vector<int>(dominant.data_ptr<std::int64_t>(),
                          dominant.data_ptr<std::int64_t>() + dominant.numel());
}

void check_sizes(const MixtureSpec& spec) {
  if (spec.min_train_samples < 1 || spec.min_train_samples > spec.max_train_samples) {
    throw ConfigError("--min-train-samples must be between 1 and --train-samples (" +
                      std::to_string(spec.max_train_samples) + "), but got " +
                      std::to_string(spec.min_train_samples));
  }
  if (spec.test_samples < 1 || spec.holdout_samples < 1) {
    throw ConfigError(
        "--test-samples and --holdout-samples must be at least 1 for a mixture partition");
  }
}

/// Where each (client, source) takes its points in one split, and the holdout of each source.
struct SourceDraws {
  std::vector<std::vector<std::vector<std::int64_t>>> client;  // [M][S] indices into the split
  std::vector<std::vector<std::int64_t>> holdout;              // [S] indices (test split only)
};

/// Indices of the split that source s may use: all (rotation) or its label group's classes.
std::vector<std::int64_t> source_pool(const ImageSplit& split, const MixtureSpec& spec,
                                      int num_classes, int s, int which) {
  const auto n = split.labels.size(0);
  auto generator =
      core::make_torch_generator(spec.data_seed, core::Purpose::kPartition, 1000U + s, which);
  const auto order = torch::randperm(n, generator, torch::kLong);
  const auto labels = split.labels.index_select(0, order);
  const auto keep = spec.source_kind == SourceKind::kRotation
                        ? torch::ones({n}, torch::kBool)
                        : labels.mul(spec.sources).div(num_classes, "floor").eq(s);
  const auto pool = order.masked_select(keep).contiguous();
  return std::vector<std::int64_t>(pool.data_ptr<std::int64_t>(),
                                   pool.data_ptr<std::int64_t>() + pool.numel());
}

SourceDraws draw_split(const ImageSplit& split, const MixtureSpec& spec, int num_classes,
                       const std::vector<std::vector<std::int64_t>>& counts, bool test) {
  SourceDraws draws;
  draws.client.assign(counts.size(), std::vector<std::vector<std::int64_t>>(
                                         static_cast<std::size_t>(spec.sources)));
  for (int s = 0; s < spec.sources; ++s) {
    const auto pool = source_pool(split, spec, num_classes, s, test ? 1 : 0);
    std::int64_t needed = test ? spec.holdout_samples : 0;
    for (const auto& row : counts) {
      needed += row[static_cast<std::size_t>(s)];
    }
    if (needed > static_cast<std::int64_t>(pool.size())) {
      throw DataError("mixture partition: source " + std::to_string(s) + " has " +
                      std::to_string(pool.size()) + " " + (test ? "test" : "training") +
                      " points but the clients" + (test ? " and its holdout" : "") + " need " +
                      std::to_string(needed) + "; lower --" +
                      (test ? "test-samples or --holdout-samples" : "train-samples") +
                      " or --clients-per-cluster");
    }
    auto next = pool.begin();
    if (test) {
      draws.holdout.emplace_back(next, next + spec.holdout_samples);
      next += spec.holdout_samples;
    }
    for (std::size_t c = 0; c < counts.size(); ++c) {
      const auto take = counts[c][static_cast<std::size_t>(s)];
      draws.client[c][static_cast<std::size_t>(s)].assign(next, next + take);
      next += take;
    }
  }
  return draws;
}

/// The samples of one source of one split: its indices, rotated by `quarters` quarter turns,
/// labels kept.
ClientSamples source_samples(const ImageDataset& dataset, const std::vector<std::int64_t>& indices,
                             int quarters, bool train) {
  ClientShard shard;
  (train ? shard.train_indices : shard.test_indices) = indices;
  shard.rotation_quarters = quarters;
  shard.label_map = identity_label_map(dataset.num_classes);
  return client_samples(dataset, shard, train);
}

/// Concatenates the parts of a client's data, source by source.
ClientSamples concatenated(const std::vector<ClientSamples>& parts) {
  std::vector<torch::Tensor> inputs;
  std::vector<torch::Tensor> targets;
  for (const auto& part : parts) {
    inputs.push_back(part.inputs);
    targets.push_back(part.targets);
  }
  return {torch::cat(inputs).contiguous(), torch::cat(targets).contiguous()};
}

/// A client's image samples: per source s its indices, rotated by s quarter turns if `rotate`.
ClientSamples materialise(const ImageDataset& dataset,
                          const std::vector<std::vector<std::int64_t>>& per_source, bool rotate,
                          bool train) {
  std::vector<ClientSamples> parts;
  for (std::size_t s = 0; s < per_source.size(); ++s) {
    parts.push_back(
        source_samples(dataset, per_source[s], rotate ? static_cast<int>(s) : 0, train));
  }
  return concatenated(parts);
}

/// A client's linear-regression samples: count_s points of every source s.
ClientSamples regression_samples(const torch::Tensor& models,
                                 const std::vector<std::int64_t>& counts, double noise,
                                 at::Generator& generator) {
  std::vector<ClientSamples> parts;
  for (std::size_t s = 0; s < counts.size(); ++s) {
    parts.push_back(
        linear_samples(models[static_cast<std::int64_t>(s)], counts[s], noise, generator));
  }
  return concatenated(parts);
}

/// The mixture partitions by command-line name.
constexpr std::pair<const char*, MixturePattern> kPatterns[] = {
    {"mixture_10_90", MixturePattern::k10To90},
    {"mixture_30_70", MixturePattern::k30To70},
    {"mixture_linear", MixturePattern::kLinear},
    {"mixture_random", MixturePattern::kRandom}};

}  // namespace

bool is_mixture_partition(const std::string& partition) {
  return std::any_of(std::begin(kPatterns), std::end(kPatterns),
                     [&](const auto& p) { return partition == p.first; });
}

std::vector<std::string> mixture_partition_names() {
  std::vector<std::string> names;
  for (const auto& pattern : kPatterns) {
    names.emplace_back(pattern.first);
  }
  return names;
}

MixturePattern parse_mixture_pattern(const std::string& partition) {
  for (const auto& [name, pattern] : kPatterns) {
    if (partition == name)
      return pattern;
  }
  throw ConfigError(
      "--partition must be one of mixture_10_90, mixture_30_70, mixture_linear, mixture_random "
      "for a mixture, but got '" +
      partition + "'");
}

torch::Tensor mixture_weights(const MixtureSpec& spec) {
  if (spec.sources < 1 || spec.clients_per_source < 1) {
    throw ConfigError(
        "a mixture partition needs --clusters (sources) >= 1 and --clients-per-cluster >= 1");
  }
  const bool two_sources = spec.pattern != MixturePattern::kRandom;
  if (two_sources && spec.sources != 2) {
    throw ConfigError(
        "--partition mixture_10_90, mixture_30_70 and mixture_linear need exactly 2 sources, but "
        "--clusters is " +
        std::to_string(spec.sources) + "; use --clusters 2 or --partition mixture_random");
  }
  const std::int64_t m = static_cast<std::int64_t>(spec.sources) * spec.clients_per_source;
  auto weights = torch::zeros({m, spec.sources}, torch::kFloat64);
  for (std::int64_t c = 0; c < m; ++c) {
    if (spec.pattern == MixturePattern::kRandom) {
      auto engine = core::make_engine(spec.data_seed, core::Purpose::kMixture,
                                      static_cast<std::uint64_t>(c), 0);
      std::vector<double> cuts{0.0, 1.0};
      for (int i = 1; i < spec.sources; ++i)
        cuts.push_back(core::uniform01(engine));
      std::sort(cuts.begin(), cuts.end());
      for (int s = 0; s < spec.sources; ++s)
        weights[c][s] = cuts[static_cast<std::size_t>(s) + 1] - cuts[static_cast<std::size_t>(s)];
      continue;
    }
    const double major = spec.pattern == MixturePattern::k10To90 ? 0.9 : 0.7;
    const double share1 = spec.pattern == MixturePattern::kLinear
                              ? static_cast<double>(c) / static_cast<double>(m)
                              : (c < spec.clients_per_source ? 1.0 - major : major);
    weights[c][0] = 1.0 - share1;
    weights[c][1] = share1;
  }
  return weights;
}

std::vector<std::int64_t> source_counts(const torch::Tensor& shares, std::int64_t n) {
  const auto w = shares.to(torch::kFloat64).contiguous();
  const auto s = static_cast<std::size_t>(w.numel());
  std::vector<std::int64_t> counts(s);
  std::vector<double> remainder(s);
  std::int64_t assigned = 0;
  for (std::size_t i = 0; i < s; ++i) {
    const double exact = w.data_ptr<double>()[i] * static_cast<double>(n);
    counts[i] = static_cast<std::int64_t>(std::floor(exact + 1e-9));
    remainder[i] = exact - static_cast<double>(counts[i]);
    assigned += counts[i];
  }
  std::vector<std::size_t> order(s);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return remainder[a] > remainder[b]; });
  for (std::size_t i = 0; assigned < n; ++i, ++assigned) {
    ++counts[order[i % s]];
  }
  return counts;
}

std::vector<std::int64_t> train_sample_counts(const MixtureSpec& spec) {
  check_sizes(spec);
  const auto m =
      static_cast<std::size_t>(spec.sources) * static_cast<std::size_t>(spec.clients_per_source);
  std::vector<std::int64_t> counts(m);
  const auto span = static_cast<std::uint64_t>(spec.max_train_samples - spec.min_train_samples + 1);
  for (std::size_t c = 0; c < m; ++c) {
    auto engine = core::make_engine(spec.data_seed, core::Purpose::kMixture, c, 1);
    counts[c] =
        spec.min_train_samples + static_cast<std::int64_t>(core::uniform_index(engine, span));
  }
  return counts;
}

ClientData mixture_image_data(std::shared_ptr<const ImageDataset> dataset,
                              const MixtureSpec& spec) {
  const int limit =
      spec.source_kind == SourceKind::kRotation ? kMaxRotations : dataset->num_classes;
  if (spec.sources > limit) {
    throw ConfigError("--clusters " + std::to_string(spec.sources) +
                      " sources: --mixture-sources " +
                      (spec.source_kind == SourceKind::kRotation ? "rotation" : "label_groups") +
                      " allows at most " + std::to_string(limit));
  }
  const auto weights = mixture_weights(spec);
  const auto train = counts_per_client(weights, train_sample_counts(spec));
  const auto test =
      counts_per_client(weights, std::vector<std::int64_t>(train.size(), spec.test_samples));
  auto train_draws = std::make_shared<const SourceDraws>(
      draw_split(dataset->train, spec, dataset->num_classes, train, false));
  auto test_draws = std::make_shared<const SourceDraws>(
      draw_split(dataset->test, spec, dataset->num_classes, test, true));
  ClientData data;
  data.sample_shape = dataset->train.images.sizes().slice(1).vec();
  data.num_classes = dataset->num_classes;
  data.true_clusters = dominant_sources(weights);
  data.mixture = weights;
  const bool rotate = spec.source_kind == SourceKind::kRotation;
  data.samples = [dataset, train_draws, test_draws, rotate](int client, bool is_train) {
    const auto& draws = is_train ? *train_draws : *test_draws;
    return materialise(*dataset, draws.client.at(static_cast<std::size_t>(client)), rotate,
                       is_train);
  };
  data.holdout = [dataset, test_draws, rotate](int source) {
    return source_samples(*dataset, test_draws->holdout.at(static_cast<std::size_t>(source)),
                          rotate ? source : 0,
                          /*train=*/false);
  };
  return data;
}

ClientData mixture_linear_regression_data(const LinearRegressionSpec& regression,
                                          const MixtureSpec& spec) {
  auto sources_spec = regression;
  sources_spec.clusters = spec.sources;
  const auto models = optimal_models(sources_spec);
  const auto weights = mixture_weights(spec);
  const auto train = counts_per_client(weights, train_sample_counts(spec));
  const auto test =
      counts_per_client(weights, std::vector<std::int64_t>(train.size(), spec.test_samples));
  ClientData data;
  data.sample_shape = {regression.dimension};
  data.num_classes = 0;
  data.true_clusters = dominant_sources(weights);
  data.mixture = weights;
  const auto seed = spec.data_seed;
  const double noise = regression.noise;
  data.samples = [models, train, test, seed, noise](int client, bool is_train) {
    auto generator = core::make_torch_generator(
        seed, core::Purpose::kMixture, static_cast<std::uint64_t>(client), is_train ? 2 : 3);
    return regression_samples(
        models, (is_train ? train : test).at(static_cast<std::size_t>(client)), noise, generator);
  };
  const auto m = static_cast<std::uint64_t>(train.size());
  const auto holdout = spec.holdout_samples;
  data.holdout = [models, seed, noise, m, holdout](int source) {
    auto generator = core::make_torch_generator(seed, core::Purpose::kMixture,
                                                m + static_cast<std::uint64_t>(source), 4);
    return linear_samples(models[source], holdout, noise, generator);
  };
  return data;
}

}  // namespace cflrun::data
