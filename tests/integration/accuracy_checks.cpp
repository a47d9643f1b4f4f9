#include "accuracy_checks.hpp"
#include "check_failure.hpp"

#include <cmath>
#include <iostream>
#include <sstream>
#include <vector>

#include <cflrun/io/result_reader.hpp>

namespace cflrun::checks {
namespace {

/// "375x5,463x2,203" -> 375 five times, 463 twice, 203 once.
std::vector<double> expand_counts(const std::string& spec) {
  std::vector<double> counts;
  std::stringstream items(spec);
  std::string item;
  while (std::getline(items, item, ',')) {
    const auto times = item.find('x');
    const double count = std::stod(item.substr(0, times));
    const int repeat = times == std::string::npos ? 1 : std::stoi(item.substr(times + 1));
    counts.insert(counts.end(), static_cast<std::size_t>(repeat), count);
  }
  return counts;
}

}  // namespace

int accuracy_weighted(const std::string& file, const std::string& counts_spec) {
  const io::ResultReader reader(file);
  const auto counts = expand_counts(counts_spec);
  std::vector<std::size_t> shape;
  const auto clients = reader.read_f32("/clients/accuracy", &shape);
  const auto mean = round_values(reader, "/rounds/accuracy");
  const auto weighted = round_values(reader, "/rounds/accuracy_weighted");
  if (shape.size() != 2 || shape[1] != counts.size() || weighted.size() != shape[0] ||
      weighted.empty()) {
    return fail(file + ": " + std::to_string(counts.size()) +
                " test sample counts given, but the file holds " +
                (shape.size() == 2 ? std::to_string(shape[1]) : std::string("no")) +
                " clients' accuracies and " + std::to_string(weighted.size()) + " rounds");
  }
  bool differs = false;
  for (std::size_t t = 0; t < shape[0]; ++t) {
    double correct = 0.0;
    double samples = 0.0;
    for (std::size_t c = 0; c < shape[1]; ++c) {
      const float accuracy = clients[t * shape[1] + c];
      if (!std::isnan(accuracy)) {
        correct += accuracy * counts[c];
        samples += counts[c];
      }
    }
    const double expected = correct / samples;
    if (!(std::fabs(weighted[t] - expected) <= 1e-6)) {
      return fail(file + ": round " + std::to_string(t + 1) + ": accuracy_weighted " +
                  std::to_string(weighted[t]) + ", but the clients' accuracies give " +
                  std::to_string(expected));
    }
    differs = differs || std::fabs(weighted[t] - mean[t]) > 1e-4;
  }
  if (!differs) {
    return fail(file +
                ": the sample-weighted accuracy equals the client mean in every round; "
                "give clients with different test sample counts");
  }
  if (reader.read_f64_attribute("/summary", "final_accuracy_weighted") != weighted.back()) {
    return fail(file + ": /summary final_accuracy_weighted is not the last round's");
  }
  std::cout << file << ": accuracy per round, client mean / sample-weighted, last: " << mean.back()
            << " / " << weighted.back() << std::endl;
  return 0;
}

int train_accuracy(const std::string& file, const std::string& twin, double tolerance,
                   double min_last) {
  const io::ResultReader reader(file);
  const auto values = round_values(reader, "/rounds/accuracy_train");
  const auto others = round_values(io::ResultReader(twin), "/rounds/accuracy_train");
  if (values.empty() || values.size() != others.size()) {
    return fail(file + " and " + twin + ": /rounds/accuracy_train holds " +
                std::to_string(values.size()) + " and " + std::to_string(others.size()) +
                " rounds");
  }
  for (std::size_t t = 0; t < values.size(); ++t) {
    if (!(values[t] >= 0.0 && values[t] <= 1.0 && std::fabs(values[t] - others[t]) <= tolerance)) {
      return fail(file + ": round " + std::to_string(t + 1) + ": accuracy_train " +
                  std::to_string(values[t]) + ", " + twin + " " + std::to_string(others[t]));
    }
  }
  if (!(values.front() < values.back() && values.back() >= min_last)) {
    return fail(file + ": accuracy_train first " + std::to_string(values.front()) + ", last " +
                std::to_string(values.back()) + ": expected a rise to at least " +
                std::to_string(min_last));
  }
  std::cout << file
            << ": training-data accuracy at the rounds' start, first / last: " << values.front()
            << " / " << values.back() << std::endl;
  return 0;
}

}  // namespace cflrun::checks
