#include "variant_checks.hpp"
#include "check_failure.hpp"

#include <cmath>
#include <iostream>
#include <set>
#include <vector>

#include <cflrun/io/result_reader.hpp>

namespace cflrun::checks {
namespace {

bool row_is_nan(const std::vector<float>& values, std::size_t row, std::size_t width) {
  for (std::size_t i = row * width; i < (row + 1) * width; ++i) {
    if (!std::isnan(values[i])) {
      return false;
    }
  }
  return true;
}

}  // namespace

int stability_switch(const std::string& file, int max_round) {
  const io::ResultReader reader(file);
  const double switch_round = reader.read_f64_attribute("/summary", "stability_switch_round");
  if (!(switch_round >= 2 && switch_round <= max_round)) {
    return fail(file + ": stability_switch_round " + std::to_string(switch_round) +
                ", expected 2.." + std::to_string(max_round));
  }
  const auto first =
      static_cast<std::size_t>(switch_round) - 1;  // 0-based first round without clustering
  std::vector<std::size_t> shape;
  const auto loss_vectors = reader.read_f32("/clients/loss_vectors", &shape);
  const auto assignment = reader.read_i32("/clients/assignment");
  const auto bytes = round_values(reader, "/rounds/bytes_sent");
  const std::size_t width = shape.at(1) * shape.at(2);
  const std::size_t clients = shape.at(1);
  if (row_is_nan(loss_vectors, first - 1, width)) {
    return fail(file + ": no loss vectors in the round before the switch");
  }
  for (std::size_t t = first; t < shape.at(0); ++t) {
    if (!row_is_nan(loss_vectors, t, width) || !(bytes[t] < bytes[first - 1])) {
      return fail(file + ": round " + std::to_string(t + 1) +
                  " still sent loss vectors or all models");
    }
    for (std::size_t c = 0; c < clients; ++c) {
      if (assignment[t * clients + c] != assignment[(first - 1) * clients + c]) {
        return fail(file + ": client " + std::to_string(c) + " changed its model after the switch");
      }
    }
  }
  std::cout << file << ": switched in round " << switch_round << "; bytes sent " << bytes[first - 1]
            << " -> " << bytes[first] << std::endl;
  return 0;
}

int test_loss_at_most(const std::string& a, const std::string& b) {
  const double la = round_values(io::ResultReader(a), "/rounds/test_loss").back();
  const double lb = round_values(io::ResultReader(b), "/rounds/test_loss").back();
  std::cout << "final test loss " << la << " (" << a << ") vs " << lb << " (" << b << ")"
            << std::endl;
  return la <= lb ? 0 : fail("final test loss of " + a + " is above that of " + b);
}

int final_test_loss_below(const std::string& file, double max) {
  const auto loss = round_values(io::ResultReader(file), "/rounds/test_loss");
  std::cout << file << ": final test loss " << loss.back() << std::endl;
  return loss.back() <= max ? 0 : fail(file + ": final test loss above " + std::to_string(max));
}

int models_used(const std::string& file, int expected) {
  std::vector<std::size_t> shape;
  const auto assignment = io::ResultReader(file).read_i32("/clients/assignment", &shape);
  std::set<int> used;
  for (std::size_t c = 0; c < shape.at(1); ++c) {
    used.insert(assignment[(shape.at(0) - 1) * shape[1] + c]);
  }
  std::cout << file << ": last round uses " << used.size() << " models" << std::endl;
  return static_cast<int>(used.size()) == expected
             ? 0
             : fail(file + ": last round uses " + std::to_string(used.size()) +
                    " models, expected " + std::to_string(expected));
}

int bytes_sent(const std::string& file, int round, double expected) {
  const auto bytes = round_values(io::ResultReader(file), "/rounds/bytes_sent");
  const double got = bytes.at(static_cast<std::size_t>(round - 1));
  std::cout << file << ": round " << round << " sent " << got << " bytes" << std::endl;
  return got == expected ? 0 : fail(file + ": expected " + std::to_string(expected) + " bytes");
}

}  // namespace cflrun::checks
