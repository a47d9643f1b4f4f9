#include "population_checks.hpp"

#include <algorithm>
#include <sstream>

#include "check_failure.hpp"

namespace cflrun::checks {
namespace {

std::string text_of(const std::vector<int>& values) {
  std::ostringstream text;
  for (std::size_t i = 0; i < values.size(); ++i) {
    text << (i > 0 ? "," : "") << values[i];
  }
  return text.str();
}

/// Row t of a [T, M] int32 dataset.
std::vector<int> row(const std::vector<int>& values, std::size_t m, std::size_t t) {
  return {values.begin() + static_cast<std::ptrdiff_t>(t * m),
          values.begin() + static_cast<std::ptrdiff_t>((t + 1) * m)};
}

}  // namespace

int changing_population(const std::string& file, const std::string& expected,
                        const std::string& truth_moves) {
  const io::ResultReader reader(file);
  const auto change_rounds = reader.read_i32("/population/change_rounds");
  if (text_of(change_rounds) != (expected == "-" ? "" : expected)) {
    return fail(file + ": change rounds " + text_of(change_rounds) + ", expected " + expected);
  }
  std::vector<std::size_t> shape;
  const auto truth = reader.read_i32("/clients/true_cluster", &shape);
  const auto available = reader.read_i32("/clients/available");
  const auto assignment = reader.read_i32("/clients/assignment");
  if (shape.size() != 2 || available.size() != truth.size() || assignment.size() != truth.size()) {
    return fail(file +
                ": /clients/true_cluster, /clients/available and /clients/assignment are "
                "not all [T, M]");
  }
  const std::size_t m = shape[1];
  std::vector<int> changed_at;
  int away = 0;
  for (std::size_t t = 0; t < shape[0]; ++t) {
    if (t > 0 && row(truth, m, t) != row(truth, m, t - 1)) {
      changed_at.push_back(static_cast<int>(t) + 1);
    }
    for (std::size_t c = 0; c < m; ++c) {
      if (available[t * m + c] == 0) {
        ++away;
        if (assignment[t * m + c] != -1) {
          return fail(file + ": client " + std::to_string(c) + " is away in round " +
                      std::to_string(t + 1) + " but was assigned model " +
                      std::to_string(assignment[t * m + c]));
        }
      }
    }
  }
  if (text_of(changed_at) != (truth_moves == "-" ? "" : truth_moves)) {
    return fail(file + ": the truth changes at rounds '" + text_of(changed_at) + "', expected '" +
                truth_moves + "'");
  }
  if (away == 0 && changed_at.empty()) {
    return fail(file + ": no client is ever away and the truth never moves; expected a change");
  }
  std::cout << file << ": truth changes at rounds " << text_of(changed_at) << ", " << away
            << " client-rounds away, none assigned" << std::endl;
  return 0;
}

}  // namespace cflrun::checks
