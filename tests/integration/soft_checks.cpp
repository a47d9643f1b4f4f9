#include "soft_checks.hpp"
#include "check_failure.hpp"

#include <algorithm>
#include <cmath>
#include <iostream>
#include <numeric>
#include <set>
#include <vector>

#include <cflrun/io/result_reader.hpp>

namespace cflrun::checks {
namespace {

/// Largest |u[c][j] - mixture[c][source_of[j]]| over clients and centers.
double largest_deviation(const std::vector<float>& u, const std::vector<double>& mixture,
                         std::size_t offset, std::size_t clients,
                         const std::vector<std::size_t>& source_of) {
  const std::size_t k = source_of.size();
  double worst = 0.0;
  for (std::size_t c = 0; c < clients; ++c) {
    for (std::size_t j = 0; j < k; ++j) {
      worst = std::max(worst, std::abs(u[offset + c * k + j] - mixture[c * k + source_of[j]]));
    }
  }
  return worst;
}

}  // namespace

int importance_recovered(const std::string& file, double tolerance) {
  const io::ResultReader reader(file);
  std::vector<std::size_t> shape;
  const auto u = reader.read_f32("/clients/importance", &shape);
  std::vector<std::size_t> mixture_shape;
  const auto mixture = reader.read_f64("/clients/mixture", &mixture_shape);
  const std::size_t rounds = shape.at(0), clients = shape.at(1), k = shape.at(2);
  if (mixture_shape.at(1) != k) {
    return fail(file + ": " + std::to_string(k) + " centers but " +
                std::to_string(mixture_shape.at(1)) + " sources");
  }
  std::vector<std::size_t> source_of(k);
  std::iota(source_of.begin(), source_of.end(), 0);
  double best = INFINITY;
  do {  // every mapping of centers to sources; K is small
    best = std::min(best,
                    largest_deviation(u, mixture, (rounds - 1) * clients * k, clients, source_of));
  } while (std::next_permutation(source_of.begin(), source_of.end()));
  std::cout << file << ": largest |u - true share| over " << clients << " clients: " << best
            << std::endl;
  return best <= tolerance ? 0
                           : fail(file + ": importance weights off by " + std::to_string(best) +
                                  " > " + std::to_string(tolerance));
}

int centers_specialise(const std::string& file) {
  const io::ResultReader reader(file);
  std::vector<std::size_t> shape;
  const auto loss = reader.read_f32("/rounds/source_loss", &shape);
  const std::size_t rounds = shape.at(0), k = shape.at(1), sources = shape.at(2);
  const std::size_t last = (rounds - 1) * k * sources;
  std::set<std::size_t> best_centers;
  for (std::size_t s = 0; s < sources; ++s) {
    std::size_t best = 0;
    for (std::size_t j = 0; j < k; ++j) {
      std::cout << (j == 0 ? "source " + std::to_string(s) + " holdout loss per center:" : "")
                << " " << loss[last + j * sources + s];
      best = loss[last + j * sources + s] < loss[last + best * sources + s] ? j : best;
    }
    std::cout << " -> best center " << best << std::endl;
    best_centers.insert(best);
  }
  return best_centers.size() == sources ? 0 : fail(file + ": two sources share their best center");
}

}  // namespace cflrun::checks
