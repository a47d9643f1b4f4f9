#include <cflrun/run/rank_layout.hpp>

#include <cstdint>

namespace cflrun::run {

ClientRange hosted_clients(int rank, int ranks, int num_clients) {
  if (ranks == 1) {
    return {0, num_clients};
  }
  if (rank == 0) {
    return {0, 0};
  }
  const std::int64_t workers = ranks - 1;
  const std::int64_t w = rank - 1;
  return {static_cast<int>(w * num_clients / workers), static_cast<int>((w + 1) * num_clients / workers)};
}

}  // namespace cflrun::run
