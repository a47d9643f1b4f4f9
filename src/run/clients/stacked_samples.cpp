#include <cflrun/run/clients/stacked_samples.hpp>

namespace cflrun::run {

StackedSamples::StackedSamples(const data::ClientData& data, int first, int end, bool train,
                               torch::Device device)
    : offsets_{0} {
  std::vector<torch::Tensor> inputs;
  std::vector<torch::Tensor> targets;
  std::vector<torch::Tensor> owners;
  for (int c = first; c < end; ++c) {
    const auto samples = data.samples(c, train);
    counts_.push_back(samples.targets.size(0));
    offsets_.push_back(offsets_.back() + counts_.back());
    inputs.push_back(samples.inputs);
    targets.push_back(samples.targets);
    owners.push_back(
        torch::full({counts_.back()}, static_cast<std::int64_t>(c - first), torch::kLong));
  }
  if (inputs.empty()) {  // a server rank without clients: empty tensors of the right shapes
    std::vector<std::int64_t> shape{0};
    shape.insert(shape.end(), data.sample_shape.begin(), data.sample_shape.end());
    const auto target_type = data.num_classes > 0 ? torch::kLong : torch::kFloat32;
    inputs_ = torch::empty(shape, device);
    targets_ = torch::empty({0}, torch::TensorOptions(device).dtype(target_type));
    owner_ = torch::empty({0}, torch::TensorOptions(device).dtype(torch::kLong));
    return;
  }
  inputs_ = torch::cat(inputs).to(device);
  targets_ = torch::cat(targets).to(device);
  owner_ = torch::cat(owners).to(device);
}

torch::Tensor StackedSamples::rows(const std::vector<std::int64_t>& hosted) const {
  const auto longs = torch::TensorOptions(targets_.device()).dtype(torch::kLong);
  if (hosted.size() == counts_.size()) {
    return torch::arange(targets_.size(0), longs);
  }
  std::vector<torch::Tensor> ranges;
  for (const auto i : hosted) {
    ranges.push_back(torch::arange(offset(i), offset(i) + count(i), torch::kLong));
  }
  return ranges.empty() ? torch::empty({0}, longs) : torch::cat(ranges).to(targets_.device());
}

}  // namespace cflrun::run
