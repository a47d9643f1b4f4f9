#include <cflrun/run/source_holdouts.hpp>

#include <cflrun/local/scoring.hpp>

#include <limits>

#include <torch/types.h>

namespace cflrun::run {

SourceHoldouts::SourceHoldouts(const data::ClientData& data, model::Objective objective,
                               torch::Device device)
    : objective_(objective), counts_(torch::zeros({data.num_sources()}, torch::kFloat64)) {
  std::vector<torch::Tensor> inputs;
  std::vector<torch::Tensor> targets;
  std::vector<torch::Tensor> sources;
  for (int s = 0; s < data.num_sources(); ++s) {
    const auto holdout = data.holdout(s);
    inputs.push_back(holdout.inputs);
    targets.push_back(holdout.targets);
    sources.push_back(
        torch::full({holdout.targets.size(0)}, static_cast<std::int64_t>(s), torch::kLong));
    counts_[s] = static_cast<double>(holdout.targets.size(0));
  }
  if (!inputs.empty()) {
    inputs_ = torch::cat(inputs).to(device);
    targets_ = torch::cat(targets).to(device);
    source_ = torch::cat(sources).to(device);
  }
}

SourceScores SourceHoldouts::evaluate(ModelSet& models) const {
  SourceScores scores;
  if (size() == 0) {
    return scores;
  }
  const auto rows = torch::arange(source_.size(0), source_.options());
  for (int j = 0; j < models.size(); ++j) {
    const auto options = torch::TensorOptions(source_.device()).dtype(torch::kFloat64);
    auto loss_sums = torch::zeros({size()}, options);
    auto correct_sums = torch::zeros({size()}, options);
    local::add_scores(models.load(j), objective_, inputs_, targets_, source_, rows, loss_sums,
                      correct_sums);
    const auto counts = counts_.to(options.device());
    const auto loss = (loss_sums / counts).to(torch::kCPU).to(torch::kFloat32).contiguous();
    auto accuracy = (correct_sums / counts).to(torch::kCPU).to(torch::kFloat32).contiguous();
    if (!model::has_accuracy(objective_)) {
      accuracy.fill_(std::numeric_limits<float>::quiet_NaN());
    }
    scores.loss.insert(scores.loss.end(), loss.data_ptr<float>(), loss.data_ptr<float>() + size());
    scores.accuracy.insert(scores.accuracy.end(), accuracy.data_ptr<float>(),
                           accuracy.data_ptr<float>() + size());
  }
  return scores;
}

}  // namespace cflrun::run
