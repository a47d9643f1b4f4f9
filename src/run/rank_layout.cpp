#include <cflrun/run/rank_layout.hpp>

#include <cstdint>

namespace cflrun::run {

ClientRange hosted_clients(int rank, int ranks, int num_clients, bool server_hosts_clients) {
  if (ranks == 1) {
    return {0, num_clients};
  }
  const bool server_only = !server_hosts_clients;
  if (server_only && rank == 0) {
    return {0, 0};
  }
  const std::int64_t hosts = server_only ? ranks - 1 : ranks;
  const std::int64_t h = server_only ? rank - 1 : rank;
  return {static_cast<int>(h * num_clients / hosts),
          static_cast<int>((h + 1) * num_clients / hosts)};
}

}  // namespace cflrun::run
