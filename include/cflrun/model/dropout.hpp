#pragma once
/// @file
/// Dropout (Srivastava et al., JMLR 2014, Sec. 2) whose masks come from a generator the caller sets
/// per client and round, so that clients training at once on several threads (--parallel-clients)
/// each draw their own masks. torch::nn::Dropout draws from LibTorch's process-wide default
/// generator, which concurrent clients would share in an order set by the scheduler.

#include <cstdint>
#include <optional>

#include <ATen/core/Generator.h>
#include <torch/nn/cloneable.h>
#include <torch/nn/pimpl.h>
#include <torch/types.h>

namespace cflrun::model {

/// Inverted dropout with probability p of zeroing a unit: in training mode
/// x * bernoulli(1 - p) / (1 - p) elementwise, in eval mode x. The masks come from the generator
/// set with set_generator (a CPU generator for inputs on the CPU), else from the device's default
/// generator (torch::dropout). With a CPU generator seeded with s, the output equals
/// torch::dropout's after torch::manual_seed(s) bit for bit (LibTorch's CPU dropout draws the same
/// bernoulli noise).
class DropoutImpl : public torch::nn::Cloneable<DropoutImpl> {
 public:
  /// @param probability  p in [0, 1). @throws ConfigError otherwise.
  explicit DropoutImpl(double probability);
  /// Nothing to reset: no parameters or buffers.
  void reset() override {}
  /// @param x  any shape, float. @return x's shape: the masked, rescaled x in training mode.
  torch::Tensor forward(const torch::Tensor& x);
  /// p, the probability of zeroing a unit.
  double probability() const { return probability_; }
  /// The generator the next masks come from; std::nullopt: the device's default generator.
  void set_generator(std::optional<at::Generator> generator) { generator_ = std::move(generator); }

 private:
  double probability_;
  std::optional<at::Generator> generator_;
};
TORCH_MODULE(Dropout);

/// x * mask with mask = bernoulli(1 - p) / (1 - p) of x's shape drawn from `generator` (a CPU
/// generator, x on the CPU), or torch::dropout(x, p, true) from the device's default generator
/// when `generator` is std::nullopt. @param x any shape, float. @param p in [0, 1).
torch::Tensor dropout(const torch::Tensor& x, double p,
                      const std::optional<at::Generator>& generator);

/// The generator that dropout masks seeded with `seed` come from on `device`: a new CPU generator
/// seeded with it on the CPU; on a CUDA device std::nullopt, after seeding LibTorch's default
/// generators with it (torch::manual_seed), from which torch::dropout draws there.
std::optional<at::Generator> dropout_generator(std::uint64_t seed, torch::Device device);

/// Sets `generator` on every Dropout module in `module` (itself included): they draw from it in
/// turn, one layer after another, as torch::nn::Dropout layers draw from the default generator.
void set_dropout_generator(torch::nn::Module& module,
                           const std::optional<at::Generator>& generator);

}  // namespace cflrun::model
