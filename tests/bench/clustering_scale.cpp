// Benchmark (not a test): CLoVE's plan step on the server (k-means with k = K on the [M, K] loss
// vectors, then the min-cost matching of clusters to models,
// cluster::assign_by_loss_vector_clustering) at M = 1 000 to 100 000 clients, with the defaults of
// a run (10 k-means++ restarts). The loss vectors are drawn like a round's: client i of true
// cluster c = i mod K has loss 0.3 on model c and 2.3 on the others, plus N(0, 0.2) noise. Prints
// the best of the repeats in seconds and the ARI of the assignment against the true clusters (1
// when the plan recovers them). Usage: build/tests/bench/clustering_scale [K=10] [REPEATS=5]
// [THREADS=1]
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iomanip>
#include <iostream>
#include <limits>
#include <random>
#include <vector>

#include <torch/types.h>
#include <torch/utils.h>

#include <cflrun/cluster/adjusted_rand_index.hpp>
#include <cflrun/cluster/clove_assignment.hpp>

namespace {

torch::Tensor round_like_loss_vectors(std::int64_t clients, std::int64_t models,
                                      std::vector<int>& truth) {
  torch::manual_seed(1);
  truth.resize(clients);
  torch::Tensor losses = torch::full({clients, models}, 2.3, torch::kFloat64);
  for (std::int64_t client = 0; client < clients; ++client) {
    truth[client] = static_cast<int>(client % models);
    losses[client][truth[client]] = 0.3;
  }
  return losses + 0.2 * torch::randn({clients, models}, torch::kFloat64);
}

}  // namespace

int main(int argc, char** argv) {
  const int models = argc > 1 ? std::atoi(argv[1]) : 10;
  const int repeats = argc > 2 ? std::atoi(argv[2]) : 5;
  torch::set_num_threads(argc > 3 ? std::atoi(argv[3]) : 1);
  std::cout << "K = " << models << ", 10 k-means++ restarts, best of " << repeats << ", "
            << torch::get_num_threads() << " thread(s)\n";
  for (const std::int64_t clients : {1000, 10000, 100000}) {
    std::vector<int> truth;
    const torch::Tensor losses = round_like_loss_vectors(clients, models, truth);
    double best = std::numeric_limits<double>::infinity();
    std::vector<int> assignment;
    for (int repeat = 0; repeat < repeats; ++repeat) {
      std::mt19937_64 engine(static_cast<std::uint64_t>(repeat));
      const auto start = std::chrono::steady_clock::now();
      assignment = cflrun::cluster::assign_by_loss_vector_clustering(
          losses, cflrun::cluster::KMeansOptions{}, engine);
      best = std::min(
          best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    std::cout << std::setw(7) << clients << " clients  " << std::fixed << std::setprecision(4)
              << best << " s  ARI " << cflrun::cluster::adjusted_rand_index(assignment, truth)
              << '\n';
  }
  return 0;
}
