#include <cflrun/run/client_group.hpp>

#include "scores.hpp"
#include "stopwatch.hpp"

#include <limits>

#include <torch/torch.h>

#include <cflrun/cluster/principal_angles.hpp>
#include <cflrun/core/rng.hpp>
#include <cflrun/model/flat_state.hpp>

namespace cflrun::run {

ClientGroup::ClientGroup(const data::ClientData& data, int first, int end, model::Objective objective,
                         torch::Device device)
    : first_(first), objective_(objective), device_(device) {
  std::vector<data::ClientSamples> train;
  std::vector<data::ClientSamples> test;
  train_offsets_.push_back(0);
  for (int c = first; c < end; ++c) {
    train.push_back(data.samples(c, /*train=*/true));
    test.push_back(data.samples(c, /*train=*/false));
    train_counts_.push_back(train.back().targets.size(0));
    test_counts_.push_back(test.back().targets.size(0));
    train_offsets_.push_back(train_offsets_.back() + train_counts_.back());
  }
  train_ = stack(train, data);
  test_ = stack(test, data);
}

ClientGroup::Stack ClientGroup::stack(const std::vector<data::ClientSamples>& samples,
                                      const data::ClientData& data) const {
  const auto longs = torch::TensorOptions(device_).dtype(torch::kLong);
  if (samples.empty()) {
    std::vector<std::int64_t> shape{0};
    shape.insert(shape.end(), data.sample_shape.begin(), data.sample_shape.end());
    const auto target_type = data.num_classes > 0 ? torch::kLong : torch::kFloat32;
    return {torch::empty(shape, device_), torch::empty({0}, torch::TensorOptions(device_).dtype(target_type)),
            torch::empty({0}, longs)};
  }
  std::vector<torch::Tensor> inputs;
  std::vector<torch::Tensor> targets;
  std::vector<torch::Tensor> owners;
  for (std::size_t i = 0; i < samples.size(); ++i) {
    inputs.push_back(samples[i].inputs);
    targets.push_back(samples[i].targets);
    owners.push_back(torch::full({samples[i].targets.size(0)}, static_cast<std::int64_t>(i), torch::kLong));
  }
  return {torch::cat(inputs).to(device_), torch::cat(targets).to(device_), torch::cat(owners).to(device_)};
}

torch::Tensor ClientGroup::training_rows(const std::vector<std::int64_t>& hosted) const {
  if (static_cast<int>(hosted.size()) == size()) {
    return torch::arange(train_.targets.size(0), torch::TensorOptions(device_).dtype(torch::kLong));
  }
  return rows_of(hosted);
}

torch::Tensor ClientGroup::per_sample_training_losses(ModelSet& models, const torch::Tensor& rows) {
  auto losses = torch::empty({rows.size(0), models.size()}, torch::TensorOptions(device_).dtype(torch::kFloat64));
  const auto chunks = [&](const auto& fill_chunk) {
    for (std::int64_t start = 0; start < rows.size(0); start += kEvalChunk) {
      const auto length = std::min(kEvalChunk, rows.size(0) - start);
      const auto chunk = rows.narrow(0, start, length);
      fill_chunk(train_.inputs.index_select(0, chunk), train_.targets.index_select(0, chunk),
                 losses.narrow(0, start, length));
    }
  };
  if (models.can_stack() && objective_ == model::Objective::kClassification) {
    const auto stack = models.stack_all();
    chunks([&](const torch::Tensor& inputs, const torch::Tensor& targets, torch::Tensor out) {
      out.copy_(stack.per_sample_losses(inputs, targets));
    });
    return losses;
  }
  for (int j = 0; j < models.size(); ++j) {
    auto& model = models.load(j);
    model.eval();
    torch::InferenceMode inference;
    chunks([&](const torch::Tensor& inputs, const torch::Tensor& targets, torch::Tensor out) {
      out.select(/*dim=*/1, j).copy_(model::per_sample_loss(objective_, model.forward(inputs), inputs, targets));
    });
  }
  return losses;
}

std::vector<double> ClientGroup::loss_vectors(ModelSet& models, const std::vector<int>& participants) {
  Stopwatch watch(compute_seconds_);
  std::vector<std::int64_t> hosted;  // hosted-client indices of the participants
  for (int client : participants) {
    if (client >= first_ && client < first_ + size()) {
      hosted.push_back(client - first_);
    }
  }
  auto sums = torch::zeros({static_cast<std::int64_t>(size()), models.size()},
                           torch::TensorOptions(device_).dtype(torch::kFloat64));
  const auto rows = training_rows(hosted);
  sums.index_add_(0, train_.owner.index_select(0, rows), per_sample_training_losses(models, rows));
  const auto counts = torch::tensor(train_counts_, torch::kFloat64).to(device_).unsqueeze(1);
  const auto index = torch::tensor(hosted, torch::kLong).to(device_);
  const auto matrix = (sums / counts).index_select(0, index).to(torch::kCPU).contiguous();
  return std::vector<double>(matrix.data_ptr<double>(), matrix.data_ptr<double>() + matrix.numel());
}

torch::Tensor ClientGroup::rows_of(const std::vector<std::int64_t>& hosted) const {
  std::vector<torch::Tensor> ranges;
  for (const auto i : hosted) {
    const auto at = static_cast<std::size_t>(i);
    ranges.push_back(torch::arange(train_offsets_[at], train_offsets_[at] + train_counts_[at], torch::kLong));
  }
  return ranges.empty() ? torch::empty({0}, torch::kLong).to(device_) : torch::cat(ranges).to(device_);
}

double ClientGroup::train_client(model::Network& model, int i, int round, std::uint64_t seed,
                                 const LocalUpdateSettings& settings) {
  const auto at = static_cast<std::size_t>(i);
  const auto inputs = train_.inputs.narrow(0, train_offsets_[at], train_counts_[at]);
  const auto targets = train_.targets.narrow(0, train_offsets_[at], train_counts_[at]);
  if (settings.gradient_averaging) {
    return local_gradient(model, inputs, targets, settings.batch_size, settings.objective);
  }
  auto generator = core::make_torch_generator(seed, core::Purpose::kLocalUpdate, static_cast<std::uint64_t>(first_ + i),
                                              static_cast<std::uint64_t>(round));
  return local_update(model, inputs, targets, settings, generator);
}

std::vector<double> ClientGroup::local_updates(const std::vector<int>& assignment, ModelSet& models, int round,
                                               std::uint64_t seed, const LocalUpdateSettings& settings,
                                               std::vector<double>& train_loss) {
  Stopwatch watch(compute_seconds_);
  const std::int64_t k = models.size();
  const std::int64_t p = models.state_size();
  auto sums = torch::zeros({k * p + k}, torch::kFloat64);
  train_loss.assign(static_cast<std::size_t>(size()), 0.0);
  for (int i = 0; i < size(); ++i) {
    const int client = first_ + i;
    const int j = assignment.at(static_cast<std::size_t>(client));
    if (j < 0) {
      train_loss[static_cast<std::size_t>(i)] = std::numeric_limits<double>::quiet_NaN();
      continue;
    }
    auto& model = models.load(j);
    const auto n = train_counts_[static_cast<std::size_t>(i)];
    train_loss[static_cast<std::size_t>(i)] = train_client(model, i, round, seed, settings);
    // Option I sends the locally trained state, Option II the gradient (CLoVE Alg. 1 lines 11-12).
    const auto state = (settings.gradient_averaging ? model::flatten_gradients(model) : model::flatten_state(model))
                           .to(torch::kFloat64);
    sums.narrow(0, j * p, p).add_(state, /*alpha=*/static_cast<double>(n));
    sums[k * p + j] += static_cast<double>(n);
  }
  return std::vector<double>(sums.data_ptr<double>(), sums.data_ptr<double>() + sums.numel());
}

ClientEvaluation ClientGroup::evaluate(const std::vector<int>& assignment, ModelSet& models) {
  Stopwatch watch(compute_seconds_);
  const auto m = static_cast<std::int64_t>(size());
  const auto options = torch::TensorOptions(device_).dtype(torch::kFloat64);
  auto loss_sums = torch::zeros({m}, options);
  auto correct_sums = torch::zeros({m}, options);
  std::vector<std::int64_t> local_model(assignment.begin() + first_, assignment.begin() + first_ + m);
  const auto model_of_sample =
      torch::tensor(local_model, torch::kLong).to(device_).index_select(0, test_.owner);
  for (int j = 0; j < models.size(); ++j) {
    const auto rows = model_of_sample.eq(j).nonzero().flatten();
    if (rows.numel() > 0) {
      add_scores(models.load(j), objective_, test_.inputs, test_.targets, test_.owner, rows, loss_sums, correct_sums);
    }
  }
  return per_client_means(loss_sums, correct_sums, torch::tensor(local_model, torch::kLong).lt(0).to(device_));
}

ClientEvaluation ClientGroup::per_client_means(const torch::Tensor& loss_sums, const torch::Tensor& correct_sums,
                                               const torch::Tensor& absent) const {
  const auto counts = torch::tensor(test_counts_, torch::kFloat64).to(device_);
  const auto nan = std::numeric_limits<double>::quiet_NaN();
  const auto no_accuracy = model::has_accuracy(objective_) ? absent : torch::ones_like(absent);
  const auto accuracy = (correct_sums / counts).masked_fill(no_accuracy, nan).to(torch::kCPU).contiguous();
  const auto test_loss = (loss_sums / counts).masked_fill(absent, nan).to(torch::kCPU).contiguous();
  const auto m = static_cast<std::int64_t>(size());
  return {std::vector<double>(accuracy.data_ptr<double>(), accuracy.data_ptr<double>() + m),
          std::vector<double>(test_loss.data_ptr<double>(), test_loss.data_ptr<double>() + m)};
}

std::vector<double> ClientGroup::signatures(int p) const {
  std::vector<double> flat;
  for (int i = 0; i < size(); ++i) {
    const auto at = static_cast<std::size_t>(i);
    const auto inputs = train_.inputs.narrow(0, train_offsets_[at], train_counts_[at]).to(torch::kCPU);
    const auto signature = cluster::data_signature(inputs, p).contiguous();
    flat.insert(flat.end(), signature.data_ptr<double>(), signature.data_ptr<double>() + signature.numel());
  }
  return flat;
}

double ClientGroup::take_compute_seconds() {
  const double seconds = compute_seconds_;
  compute_seconds_ = 0.0;
  return seconds;
}

}  // namespace cflrun::run
