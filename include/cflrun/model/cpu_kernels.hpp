#pragma once
/// @file
/// cflrun's own CPU kernels for the small layers of the paper's models (issue 46), used in place
/// of LibTorch's where they measured faster; `--fused-kernels false` keeps LibTorch's everywhere
/// (the reference).
///
/// - A 5 x 5 convolution fused with ReLU and 2 x 2 max-pooling, forward and backward (both of the
///   cnn's layers): equal to LibTorch's within float rounding (another summation order), so runs
///   with and without it agree in assignments and within 1e-4 in accuracies, not bit for bit.
/// - ReLU fused with 2 x 2 max-pooling alone, where the fused convolution does not apply:
///   bit-identical to LibTorch. LibTorch's max_pool2d_with_indices took 35 % of a cnn training
///   step on one thread (PyTorch profiler, batch 100, Intel Xeon AVX-512; tests/bench/cpu_roofline
///   prints the layer times).

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

/// relu(max_pool2d(conv2d(x, weight, bias), 2)): a valid, stride-1 5 x 5 convolution, then as
/// relu_max_pool2. The fused kernel runs when fused_kernels_enabled(), every tensor is float32 on
/// the CPU, `x` is contiguous and the pooled rows are at most 64 wide; else LibTorch's conv2d and
/// relu_max_pool2.
/// Fused, the convolution is computed per sample over "flat positions" (oy * W + ox, a 1-d
/// correlation with the taps at ky * W + kx, vectorised with Google Highway for the CPU's best
/// instruction set; over the output channels instead where they fill one or two vectors, e.g. 16)
/// into a scratch buffer that is pooled at once. The backward pass works from the nonzero output
/// gradients only (a window's winner where the output is above 0: at most a quarter of the
/// convolution's outputs): the weight and bias gradients from each one's 5 x 5 input window and,
/// where `x` needs its gradient (a layer after the first), the input gradient by scattering each
/// one over the kernel's taps, vectorised over the input channels. The weight gradient is summed
/// in fixed groups of 8 samples and the input gradient per sample, so neither depends on the
/// thread count. The layers are those of the paper's (F)MNIST CNN (GenConvNet of the official
/// CLoVE code, clove-official-setup.md Sec. 9: two conv 5x5 + ReLU + max-pool 2x2 stages).
/// @param x       [N, C, H, W] float tensor, H and W at least 6.
/// @param weight  [OC, C, 5, 5]
/// @param bias    [OC]
/// @return        [N, OC, (H - 4) / 2, (W - 4) / 2] (floors).
/// @throws c10::Error from LibTorch's conv2d if the shapes do not fit (the fused kernel's
///         conditions send every such call there).
torch::Tensor conv5x5_relu_max_pool2(const torch::Tensor& x, const torch::Tensor& weight,
                                     const torch::Tensor& bias);

}  // namespace cflrun::model
