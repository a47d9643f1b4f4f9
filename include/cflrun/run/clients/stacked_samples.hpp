#pragma once
/// @file
/// One split (training or test) of the samples of the clients a rank hosts, stacked client after
/// client into one tensor on the device with a per-sample owner index, so that one forward pass
/// scores many clients (the loss vectors of CLoVE Alg. 1 lines 5-7, the test metrics) and a
/// client's own samples are a view (its local update).

#include <cstdint>
#include <vector>

#include <torch/types.h>

#include <cflrun/data/client_data.hpp>

namespace cflrun::run {

/// The samples of clients [first, end) of a split, m = end - first clients with n samples in all.
/// Hosted client i (0 <= i < m) owns rows [offset(i), offset(i) + count(i)).
class StackedSamples {
 public:
  /// Materialises the split of clients [first, end) on `device` (data.samples(c, train)).
  /// @param train  the training split (true) or the test split (false).
  /// @throws what data.samples throws for a missing or malformed client (DataError).
  StackedSamples(const data::ClientData& data, int first, int end, bool train,
                 torch::Device device);

  /// [n, ...sample shape] float32 on the device: every hosted client's inputs, client after client.
  const torch::Tensor& inputs() const { return inputs_; }
  /// [n] int64 labels (classification) or float32 values, in the order of inputs().
  const torch::Tensor& targets() const { return targets_; }
  /// [n] int64 on the device: the hosted index i of the client that owns each row.
  const torch::Tensor& owner() const { return owner_; }
  /// [m] the clients' sample counts n_i.
  const std::vector<std::int64_t>& counts() const { return counts_; }
  /// The first row of hosted client i. @pre 0 <= i < m.
  std::int64_t offset(std::int64_t i) const { return offsets_[static_cast<std::size_t>(i)]; }
  /// n_i, the rows of hosted client i. @pre 0 <= i < m.
  std::int64_t count(std::int64_t i) const { return counts_[static_cast<std::size_t>(i)]; }
  /// A view of hosted client i's inputs, [n_i, ...sample shape]. @pre 0 <= i < m.
  torch::Tensor inputs_of(std::int64_t i) const { return inputs_.narrow(0, offset(i), count(i)); }
  /// A view of hosted client i's targets, [n_i]. @pre 0 <= i < m.
  torch::Tensor targets_of(std::int64_t i) const { return targets_.narrow(0, offset(i), count(i)); }
  /// The rows of the hosted clients `hosted` (increasing hosted indices, each < m), [r] int64 on
  /// the device, client after client; every row when `hosted` names all m clients.
  torch::Tensor rows(const std::vector<std::int64_t>& hosted) const;

 private:
  torch::Tensor inputs_;
  torch::Tensor targets_;
  torch::Tensor owner_;
  std::vector<std::int64_t> counts_;   // [m]
  std::vector<std::int64_t> offsets_;  // [m + 1]
};

}  // namespace cflrun::run
