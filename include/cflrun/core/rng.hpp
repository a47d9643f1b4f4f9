#pragma once
/// @file
/// Counter-based derivation of independent random streams.
///
/// Every random draw in cflrun comes from a stream named by (seed, purpose, client, round), never
/// from one global generator. Which rank hosts a client, how many ranks there are, or whether a run
/// was resumed therefore cannot change what any stream draws (issue 2, determinism).

#include <cstdint>
#include <random>
#include <stdexcept>
#include <utility>
#include <vector>

#include <ATen/core/Generator.h>

namespace cflrun::core {

/// What a random stream is used for. Values are part of the reproducibility contract: never
/// renumber them, only append.
enum class Purpose : std::uint64_t {
  kPartition = 1,          ///< shuffling data pools and splitting them among clients
  kModelInit = 2,          ///< initial parameters of each model
  kLocalUpdate = 3,        ///< mini-batch order during a client's local update
  kFirstAssignment = 4,    ///< the random first-round assignment
  kClustering = 5,         ///< k-means++ seeding and restarts
  kConceptShiftSwaps = 6,  ///< label swaps drawn for clusters beyond the paper's fixed four
  kParticipation = 7,      ///< the clients sampled to participate in a round
  kSyntheticData =
      8,         ///< synthetic datasets: optimal models (a = 0) and client samples (a = client + 1)
  kMixture = 9,  ///< mixture partitions: mixture weights and sample counts (a = client), holdouts
  kClientSelection = 10,  ///< FedSoft's per-cluster client selection (b = round)
  kWarmUp =
      11,  ///< mini-batch order of a warm-up (pre-training) update, FlexCFL (a = client, b = round)
  kColdStart = 12,  ///< FlexCFL's cold-start sample of clients and its k-means (b = round)
  kFineTune =
      13,  ///< a client's fine-tuning batch before it is scored, Per-FedAvg (a = client, b = round)
  kAdaptiveAggregation = 14,  ///< FedALA's random slice of a client's data (a = client, b = round)
  kHeadPairing = 15,  ///< FedPAC's PFLlib head pairing: the selection (a = 0) and upload (a = 1)
                      ///< orders (b = round)
  kDropout = 16,      ///< dropout masks drawn alongside another stream (dropout_seed)
  kPopulationChange = 17,     ///< which clients a drift or split moves, and where (a = event index)
  kClientAbsence = 18,        ///< a client's per-round dropout (a = client, b = round)
  kAvailabilityPeriods = 19,  ///< a client's on/off availability periods (a = client)
  kClientSpeed = 20,          ///< a client's speed factor (a = client)
};

/// Mixes (seed, purpose, a, b) into one 64-bit seed with SplitMix64 finalisers.
/// Pure function: the same inputs give the same output on every platform.
/// @param seed     the run's seed (`--seed` or `--data-seed`).
/// @param purpose  what the stream is for.
/// @param a        first index, usually the client id (0 when unused).
/// @param b        second index, usually the round (0 when unused).
std::uint64_t derive_seed(std::uint64_t seed, Purpose purpose, std::uint64_t a = 0,
                          std::uint64_t b = 0);

/// A std::mt19937_64 seeded with `derive_seed(...)`; its output sequence is fixed by the C++
/// standard, so draws through `uniform01` and `uniform_index` are portable.
std::mt19937_64 make_engine(std::uint64_t seed, Purpose purpose, std::uint64_t a = 0,
                            std::uint64_t b = 0);

/// A LibTorch CPU generator seeded with `derive_seed(...)`, for torch::randperm and friends.
at::Generator make_torch_generator(std::uint64_t seed, Purpose purpose, std::uint64_t a = 0,
                                   std::uint64_t b = 0);

/// The seed of the dropout masks drawn alongside the (seed, purpose, a, b) stream:
/// derive_seed(derive_seed(seed, purpose, a, b), Purpose::kDropout). Pure function.
std::uint64_t dropout_seed(std::uint64_t seed, Purpose purpose, std::uint64_t a = 0,
                           std::uint64_t b = 0);

/// A double uniform in [0, 1) built from the top 53 bits of one draw (portable, unlike
/// std::uniform_real_distribution).
double uniform01(std::mt19937_64& engine);

/// An index uniform in [0, n) by rejection sampling (portable, unlike
/// std::uniform_int_distribution). @throws std::invalid_argument if n == 0.
std::uint64_t uniform_index(std::mt19937_64& engine, std::uint64_t n);

/// Moves a uniform sample without replacement of `count` entries of `values` to its front, in draw
/// order (forward partial Fisher-Yates: position j swaps with j + uniform_index(n - j)); count =
/// values.size() shuffles all of it. The draw order is fixed: recorded draws (label skew 2's label
/// sets, participants, FlexCFL's cold-start sample) depend on it.
/// @throws std::invalid_argument if count > values.size().
template <typename T>
void shuffle_prefix(std::mt19937_64& engine, std::vector<T>& values, std::size_t count) {
  if (count > values.size()) {
    throw std::invalid_argument("shuffle_prefix: count exceeds the number of values");
  }
  for (std::size_t j = 0; j < count; ++j) {
    std::swap(values[j], values[j + uniform_index(engine, values.size() - j)]);
  }
}

}  // namespace cflrun::core
