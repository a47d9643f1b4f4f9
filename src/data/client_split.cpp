#include <cflrun/data/cluster_pools.hpp>

#include <string>

#include <cflrun/core/error.hpp>
#include <cflrun/core/rng.hpp>

namespace cflrun::data {

at::Generator partition_generator(std::uint64_t data_seed, PartitionStream stream,
                                  std::uint64_t index) {
  return core::make_torch_generator(data_seed, core::Purpose::kPartition, index,
                                    static_cast<std::uint64_t>(stream));
}

std::vector<std::vector<std::int64_t>> split_among_clients(const torch::Tensor& pool, int clients,
                                                           std::int64_t samples,
                                                           at::Generator generator) {
  if (clients < 1 || samples < 1) {
    throw ConfigError("split_among_clients: clients and samples must be at least 1, but got " +
                      std::to_string(clients) + " clients and " + std::to_string(samples) +
                      " samples");
  }
  const std::int64_t chunk = pool.size(0) / clients;
  if (samples > chunk) {
    throw DataError("a pool of " + std::to_string(pool.size(0)) + " samples gives at most " +
                    std::to_string(chunk) + " per client to " + std::to_string(clients) +
                    " clients, but " + std::to_string(samples) + " were requested");
  }
  const torch::Tensor shuffled =
      pool.index_select(0, torch::randperm(pool.size(0), generator, torch::kInt64))
          .to(torch::kInt64)
          .contiguous();
  const std::int64_t* data = shuffled.data_ptr<std::int64_t>();
  std::vector<std::vector<std::int64_t>> split(static_cast<std::size_t>(clients));
  for (int w = 0; w < clients; ++w) {
    const std::int64_t* begin = data + w * chunk;
    split[static_cast<std::size_t>(w)].assign(begin, begin + samples);
  }
  return split;
}

}  // namespace cflrun::data
