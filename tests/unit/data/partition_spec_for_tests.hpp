#pragma once
// Test helper shared by the partition tests: a PartitionSpec from its main fields.

#include <cstdint>

#include <cflrun/data/partition.hpp>

namespace cflrun::data {

inline PartitionSpec spec_of(PartitionKind kind, int clusters, int cpc, std::int64_t train,
                             std::int64_t test, std::uint64_t seed = 7) {
  PartitionSpec spec;
  spec.kind = kind;
  spec.clusters = clusters;
  spec.clients_per_cluster = cpc;
  spec.train_samples = train;
  spec.test_samples = test;
  spec.data_seed = seed;
  return spec;
}

}  // namespace cflrun::data
