#include <cflrun/algo/prototypes.hpp>

#include <limits>

namespace cflrun::algo {

GlobalPrototypes::GlobalPrototypes(std::string algorithm, int num_classes, int feature_size)
    : algorithm_(std::move(algorithm)), num_classes_(num_classes), feature_size_(feature_size) {}

void GlobalPrototypes::average(const torch::Tensor& reports) {
  const auto c = num_classes_;
  const auto d = feature_size_;
  const auto table = reports.to(torch::kFloat64);
  std::tie(prototypes_, present_) = average_prototypes(
      table.narrow(1, 0, c * d).view({table.size(0), c, d}), table.narrow(1, c * d, c));
}

AlgorithmState GlobalPrototypes::payload() const {
  if (!prototypes_.defined()) {
    return {};
  }
  return {{"prototypes", prototypes_}, {"present", present_}};
}

void GlobalPrototypes::restore(const AlgorithmState& state) {
  if (state.empty()) {
    prototypes_ = present_ = torch::Tensor();
    return;
  }
  prototypes_ =
      state_tensor(state, algorithm_, "prototypes", {num_classes_, feature_size_}).clone();
  present_ = state_tensor(state, algorithm_, "present", {num_classes_}).clone();
}

torch::Tensor prototype_targets(const torch::Tensor& features, const torch::Tensor& labels,
                                const AlgorithmState& payload) {
  const auto found = payload.find("prototypes");
  if (found == payload.end()) {
    return features.detach();
  }
  const auto prototypes = found->second.to(features.device()).to(features.scalar_type());
  const auto present = payload.at("present").to(features.device()).gt(0.0);
  return torch::where(present.index_select(0, labels).unsqueeze(1),
                      prototypes.index_select(0, labels), features.detach());
}

std::pair<torch::Tensor, torch::Tensor> class_means(const torch::Tensor& features,
                                                    const torch::Tensor& labels, int num_classes) {
  const auto options = features.options().dtype(torch::kFloat64);
  auto sums = torch::zeros({num_classes, features.size(1)}, options);
  auto counts = torch::zeros({num_classes}, options);
  sums.index_add_(0, labels, features.to(torch::kFloat64));
  counts.index_add_(0, labels, torch::ones({labels.size(0)}, options));
  return {sums / counts.clamp_min(1.0).unsqueeze(1), counts};
}

void add_class_sums(torch::Tensor& sums, torch::Tensor& counts, const torch::Tensor& features,
                    const torch::Tensor& labels, const torch::Tensor& valid) {
  const auto g = features.size(0);
  const auto width = features.size(1);
  const auto classes = sums.size(1);
  const auto client = torch::arange(g, labels.options()).repeat_interleave(width);
  const auto real = valid.reshape({-1}).gt(0).nonzero().flatten();
  const auto slots = (client * classes + labels).index_select(0, real);  // client-major, row order
  sums.view({-1, sums.size(2)})
      .index_add_(0, slots,
                  features.reshape({g * width, -1}).index_select(0, real).to(torch::kFloat64));
  counts.view({-1}).index_add_(0, slots, torch::ones({slots.size(0)}, counts.options()));
}

std::vector<std::vector<double>> class_mean_rows(const torch::Tensor& sums,
                                                 const torch::Tensor& counts) {
  const auto means = sums / counts.clamp_min(1.0).unsqueeze(2);
  const auto rows = torch::cat({means.flatten(1), counts}, /*dim=*/1)
                        .to(torch::kCPU, torch::kFloat64)
                        .contiguous();
  std::vector<std::vector<double>> result;
  for (std::int64_t c = 0; c < rows.size(0); ++c) {
    const auto* row = rows[c].data_ptr<double>();
    result.emplace_back(row, row + rows.size(1));
  }
  return result;
}

torch::Tensor nearest_prototype(const torch::Tensor& features, const torch::Tensor& prototypes,
                                const torch::Tensor& present) {
  if (!present.gt(0.0).any().item<bool>()) {
    return torch::full({features.size(0)}, -1, features.options().dtype(torch::kInt64));
  }
  const auto distances =
      (features.unsqueeze(1) - prototypes.unsqueeze(0)).pow(2).mean(/*dim=*/2);  // [n, C]
  return distances
      .masked_fill(present.le(0.0).unsqueeze(0), std::numeric_limits<double>::infinity())
      .argmin(1);
}

std::pair<torch::Tensor, torch::Tensor> average_prototypes(const torch::Tensor& prototypes,
                                                           const torch::Tensor& counts) {
  const auto has = counts.gt(0.0).to(torch::kFloat64);                           // [n, C]
  const auto clients = has.sum(/*dim=*/0);                                       // [C]
  const auto sums = (prototypes.to(torch::kFloat64) * has.unsqueeze(2)).sum(0);  // [C, d]
  return {sums / clients.clamp_min(1.0).unsqueeze(1), clients.gt(0.0).to(torch::kFloat64)};
}

}  // namespace cflrun::algo
