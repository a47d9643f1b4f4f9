#include <cflrun/cluster/adjusted_rand_index.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include <cflrun/core/error.hpp>

namespace cflrun::cluster {
namespace {

std::int64_t pairs(std::int64_t count) { return count * (count - 1) / 2; }

/// Sum over the entries of a count table of C(count, 2).
template <typename Key>
std::int64_t sum_of_pairs(const std::map<Key, std::int64_t>& counts) {
  std::int64_t total = 0;
  for (const auto& entry : counts) {
    total += pairs(entry.second);
  }
  return total;
}

}  // namespace

double adjusted_rand_index(const std::vector<int>& truth, const std::vector<int>& predicted) {
  if (truth.size() != predicted.size() || truth.empty()) {
    throw ShapeError(
        "adjusted_rand_index: expected two non-empty labelings of equal length, but "
        "got " +
        std::to_string(truth.size()) + " and " + std::to_string(predicted.size()) + " labels");
  }
  std::map<std::pair<int, int>, std::int64_t> contingency;
  std::map<int, std::int64_t> truth_sizes;
  std::map<int, std::int64_t> predicted_sizes;
  for (std::size_t i = 0; i < truth.size(); ++i) {
    ++contingency[{truth[i], predicted[i]}];
    ++truth_sizes[truth[i]];
    ++predicted_sizes[predicted[i]];
  }
  // Unordered pairs of points: together in both labelings (tp), in truth only (fn), in the
  // prediction only (fp), in neither (tn); scikit-learn's pair_confusion_matrix counts ordered
  // pairs, twice these, which cancels in the ratio.
  const std::int64_t together_in_both = sum_of_pairs(contingency);
  const std::int64_t truth_only = sum_of_pairs(truth_sizes) - together_in_both;
  const std::int64_t predicted_only = sum_of_pairs(predicted_sizes) - together_in_both;
  const std::int64_t neither = pairs(static_cast<std::int64_t>(truth.size())) - together_in_both -
                               truth_only - predicted_only;
  if (truth_only == 0 && predicted_only == 0) {
    return 1.0;  // same partition; covers the 0/0 cases (one cluster, or all singletons, in both)
  }
  // scikit-learn: 2 (tp tn - fn fp) / ((tp + fn)(fn + tn) + (tp + fp)(fp + tn)), which equals
  // Hubert & Arabie's (index - expected) / (max - expected). Products of counts below 2^32 are
  // exact in long double's 64-bit mantissa.
  using Wide = long double;
  const Wide tp = together_in_both, fn = truth_only, fp = predicted_only, tn = neither;
  const Wide numerator = 2 * (tp * tn - fn * fp);
  const Wide denominator = (tp + fn) * (fn + tn) + (tp + fp) * (fp + tn);
  return static_cast<double>(numerator / denominator);
}

}  // namespace cflrun::cluster
