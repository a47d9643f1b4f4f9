#include <cflrun/data/cluster_pools.hpp>

#include <algorithm>
#include <string>

#include <cflrun/core/error.hpp>

#include "integer_rows.hpp"

namespace cflrun::data {
namespace {

std::string set_text(const std::vector<std::int64_t>& set) {
  std::string text;
  for (const std::int64_t c : set) {
    text += (text.empty() ? "" : ",") + std::to_string(c);
  }
  return "{" + text + "}";
}

bool holds(const std::vector<std::int64_t>& set, std::int64_t c) {
  return std::find(set.begin(), set.end(), c) != set.end();
}

/// Checks the counts against the label sets and the class sizes of the split.
void check_counts(const ClassCounts& counts, const LabelSets& label_sets,
                  const std::vector<torch::Tensor>& class_indices, const std::string& option) {
  if (counts.size() != label_sets.size()) {
    throw ConfigError(option + ": " + std::to_string(counts.size()) + " rows for " +
                      std::to_string(label_sets.size()) + " clusters");
  }
  for (std::size_t c = 0; c < class_indices.size(); ++c) {
    std::int64_t total = 0;
    for (std::size_t k = 0; k < counts.size(); ++k) {
      const std::int64_t n = counts[k][c];
      if (n > 0 && !holds(label_sets[k], static_cast<std::int64_t>(c))) {
        throw ConfigError(option + ": cluster " + std::to_string(k) + " has " + std::to_string(n) +
                          " samples of class " + std::to_string(c) + ", which its label set " +
                          set_text(label_sets[k]) +
                          " does not hold; give the counts of the same draw as --label-sets");
      }
      total += n;
    }
    if (total > class_indices[c].size(0)) {
      throw ConfigError(option + ": the clusters take " + std::to_string(total) +
                        " samples of class " + std::to_string(c) + ", but the split has only " +
                        std::to_string(class_indices[c].size(0)) + "; lower the counts of class " +
                        std::to_string(c));
    }
  }
}

}  // namespace

ClassCounts parse_class_counts(const std::string& text, const std::string& option, int clusters,
                               int num_classes) {
  const auto fail = [&](const std::string& problem) {
    return ConfigError("--" + option + " '" + text + "': " + problem + "; give " +
                       std::to_string(clusters) + " rows (clusters) of " +
                       std::to_string(num_classes) +
                       " sample counts >= 0 (classes), rows separated by '/', counts by ','");
  };
  ClassCounts counts = parse_integer_rows(text, fail);
  if (static_cast<int>(counts.size()) != clusters) {
    throw fail(std::to_string(counts.size()) + " rows for " + std::to_string(clusters) +
               " clusters");
  }
  for (const std::vector<std::int64_t>& row : counts) {
    if (static_cast<int>(row.size()) != num_classes) {
      throw fail("a row of " + std::to_string(row.size()) + " counts");
    }
    if (std::any_of(row.begin(), row.end(), [](std::int64_t n) { return n < 0; })) {
      throw fail("a negative count");
    }
  }
  return counts;
}

std::vector<torch::Tensor> split_classes_by_counts(const torch::Tensor& labels, int num_classes,
                                                   const LabelSets& label_sets,
                                                   const ClassCounts& counts,
                                                   std::uint64_t pool_seed, PartitionStream stream,
                                                   const std::string& option) {
  std::vector<torch::Tensor> class_indices;
  for (int c = 0; c < num_classes; ++c) {
    class_indices.push_back(torch::nonzero(labels.eq(c)).flatten());
  }
  check_counts(counts, label_sets, class_indices, "--" + option);
  at::Generator generator = partition_generator(pool_seed, stream, 0);
  std::vector<std::vector<torch::Tensor>> parts(counts.size());
  for (std::size_t c = 0; c < class_indices.size(); ++c) {
    const std::int64_t size = class_indices[c].size(0);
    const torch::Tensor shuffled =
        class_indices[c].index_select(0, torch::randperm(size, generator, torch::kInt64));
    std::int64_t start = 0;
    for (std::size_t k = 0; k < counts.size(); ++k) {
      parts[k].push_back(shuffled.narrow(0, start, counts[k][c]));
      start += counts[k][c];
    }
  }
  std::vector<torch::Tensor> pools;
  for (const auto& cluster_parts : parts) {
    pools.push_back(torch::cat(cluster_parts));
  }
  return pools;
}

}  // namespace cflrun::data
