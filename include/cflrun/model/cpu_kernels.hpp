#pragma once
/// @file
/// cflrun's own CPU kernels for the small layers of the paper's models (issue 46), used in place
/// of LibTorch's where they measured faster and give the same floats. Every kernel here is
/// bit-identical to the LibTorch operations it replaces, so a run's results do not depend on
/// whether it is used; `--fused-kernels false` keeps LibTorch's everywhere (the reference).
///
/// First kernel: ReLU fused with 2 x 2 max-pooling (the cnn's two pooling stages). LibTorch's
/// max_pool2d_with_indices took 35 % of a cnn training step on one thread (PyTorch profiler,
/// batch 100, Intel Xeon AVX-512; tests/bench/cpu_roofline prints the layer times).

#include <torch/types.h>

namespace cflrun::model {

/// Whether cflrun's CPU kernels replace LibTorch's (process-wide; default true). Set once at
/// set-up from --fused-kernels (run/experiment_setup.cpp), before any model runs.
void set_fused_kernels(bool enabled);
/// The current setting of set_fused_kernels.
bool fused_kernels_enabled();

/// relu(max_pool2d(x, 2)), i.e. max_pool2d(relu(x), 2) (ReLU is monotone): 2 x 2 windows, stride
/// 2, no padding, floor mode; NaN propagates as in LibTorch. With autograd: the gradient flows to
/// the first maximum of each window in row-major order (LibTorch's choice) where the output is
/// not <= 0, as LibTorch's max_pool2d_with_indices_backward and threshold_backward give it.
/// Runs the fused kernel when fused_kernels_enabled() and `x` is a contiguous float32 CPU tensor,
/// else the two LibTorch operations; the results are bit-identical either way.
/// @param x  [N, C, H, W] float tensor, H and W at least 2.
/// @return   [N, C, H / 2, W / 2] (floors).
/// @throws ShapeError if x is not 4-d or H or W is below 2.
torch::Tensor relu_max_pool2(const torch::Tensor& x);

}  // namespace cflrun::model
