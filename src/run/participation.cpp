#include <cflrun/run/participation.hpp>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <sstream>

#include <cflrun/core/error.hpp>
#include <cflrun/core/rng.hpp>

namespace cflrun::run {

int participants_per_round(int num_clients, double fraction) {
  if (!(fraction > 0.0 && fraction <= 1.0)) {
    std::ostringstream message;
    message << "--participation must be in (0, 1], but got " << fraction;
    throw ConfigError(message.str());
  }
  return std::max(1, static_cast<int>(std::lround(fraction * num_clients)));
}

std::vector<int> draw_participants(int num_clients, double fraction, std::uint64_t seed,
                                   int round) {
  std::vector<int> ids(static_cast<std::size_t>(num_clients));
  std::iota(ids.begin(), ids.end(), 0);
  const int count = participants_per_round(num_clients, fraction);
  if (count == num_clients) {
    return ids;
  }
  auto engine =
      core::make_engine(seed, core::Purpose::kParticipation, 0, static_cast<std::uint64_t>(round));
  core::shuffle_prefix(engine, ids, static_cast<std::size_t>(count));
  ids.resize(static_cast<std::size_t>(count));
  std::sort(ids.begin(), ids.end());
  return ids;
}

}  // namespace cflrun::run
