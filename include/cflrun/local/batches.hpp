#pragma once
/// @file
/// Mini-batch passes over one client's samples, for local updates written by an algorithm's
/// client side (algo::ClientProcedure) as well as local::local_update.

#include <cstdint>
#include <functional>

#include <ATen/core/Generator.h>
#include <torch/types.h>

namespace cflrun::local {

/// Runs `epochs` passes over n samples in mini-batches of `batch_size`, each pass in a fresh
/// random order (one torch::randperm from `generator` per pass), calling `step(rows)` with the
/// batch's row indices ([b] int64 on `device`). The last, smaller batch of a pass is kept unless
/// `drop_last` (PFLlib's loaders drop it).
/// @return the mean of step's return values over the last pass's batches (0 if it had none).
double run_batches(std::int64_t n, std::int64_t batch_size, int epochs, bool drop_last,
                   at::Generator& generator, torch::Device device,
                   const std::function<double(const torch::Tensor& rows)>& step);

}  // namespace cflrun::local
