#include "stacked_scores.hpp"

#include <limits>

#include "loaded_models.hpp"

#include <cflrun/local/scoring.hpp>
#include <cflrun/model/flat_state.hpp>

namespace cflrun::run::detail {
namespace {

/// Per-client means of the sums over `samples` (NaN where `absent` or, for accuracy, without
/// labels).
ClientEvaluation per_client_means(const HostedClients& clients, const StackedSamples& samples,
                                  const torch::Tensor& loss_sums, const torch::Tensor& correct_sums,
                                  const torch::Tensor& absent) {
  const auto counts = torch::tensor(samples.counts(), torch::kFloat64).to(clients.device());
  const auto nan = std::numeric_limits<double>::quiet_NaN();
  const auto no_accuracy =
      model::has_accuracy(clients.objective()) ? absent : torch::ones_like(absent);
  const auto accuracy =
      (correct_sums / counts).masked_fill(no_accuracy, nan).to(torch::kCPU).contiguous();
  const auto test_loss = (loss_sums / counts).masked_fill(absent, nan).to(torch::kCPU).contiguous();
  const auto m = static_cast<std::int64_t>(clients.size());
  return {std::vector<double>(accuracy.data_ptr<double>(), accuracy.data_ptr<double>() + m),
          std::vector<double>(test_loss.data_ptr<double>(), test_loss.data_ptr<double>() + m)};
}

/// [m] float64 zeros on the clients' device.
torch::Tensor zero_sums(const HostedClients& clients) {
  return torch::zeros({static_cast<std::int64_t>(clients.size())},
                      torch::TensorOptions(clients.device()).dtype(torch::kFloat64));
}

/// A work item of the scoring: rows [first, last) of model j's rows.
struct ScoringItem {
  int j;
  std::int64_t first, last;
};

/// The items covering each model's rows, kChunksPerItem chunks of `rows_per_pass` each.
std::vector<ScoringItem> scoring_items(const std::vector<torch::Tensor>& rows_of_model,
                                       std::int64_t rows_per_pass) {
  std::vector<ScoringItem> items;
  const auto rows_per_item = rows_per_pass * kChunksPerItem;
  for (std::size_t j = 0; j < rows_of_model.size(); ++j) {
    for (std::int64_t first = 0; first < rows_of_model[j].size(0); first += rows_per_item) {
      items.push_back(
          {static_cast<int>(j), first, std::min(rows_of_model[j].size(0), first + rows_per_item)});
    }
  }
  return items;
}

}  // namespace

ClientEvaluation scores_by_assignment(const HostedClients& clients, ClientExecutor& executor,
                                      const std::vector<int>& assignment, ModelSet& models,
                                      const StackedSamples& samples) {
  std::vector<std::int64_t> local_model(
      assignment.begin() + clients.first_client(),
      assignment.begin() + clients.first_client() + clients.size());
  const auto model_of_sample = torch::tensor(local_model, torch::kLong)
                                   .to(clients.device())
                                   .index_select(0, samples.owner());
  std::vector<torch::Tensor> rows_of_model;
  for (int j = 0; j < models.size(); ++j) {
    rows_of_model.push_back(model_of_sample.eq(j).nonzero().flatten());
  }
  const auto rows_per_pass = local::eval_chunk(clients.device());
  const auto items = scoring_items(rows_of_model, rows_per_pass);
  const auto options = torch::TensorOptions(clients.device()).dtype(torch::kFloat64);
  auto losses = torch::zeros({model_of_sample.size(0)}, options);  // per test sample
  auto correct = torch::zeros({model_of_sample.size(0)}, options);
  std::vector<torch::Tensor> item_losses(items.size()), item_correct(items.size());
  const bool accuracy = model::has_accuracy(clients.objective());
  LoadedModels loaded(models);
  executor.for_each_client(
      models, items.size(), /*concurrent=*/true, [&](std::size_t n, model::Network& network) {
        const auto& item = items[n];
        auto& forward = loaded.holding(network, item.j);
        torch::InferenceMode inference;
        std::vector<torch::Tensor> chunk_losses, chunk_correct;
        for (auto start = item.first; start < item.last; start += rows_per_pass) {
          const auto chunk = rows_of_model[static_cast<std::size_t>(item.j)].narrow(
              0, start, std::min(rows_per_pass, item.last - start));
          const auto inputs = samples.inputs().index_select(0, chunk);
          const auto targets = samples.targets().index_select(0, chunk);
          const auto outputs = forward(inputs);
          chunk_losses.push_back(
              model::per_sample_loss(clients.objective(), outputs, inputs, targets)
                  .to(torch::kFloat64));
          if (accuracy) {
            chunk_correct.push_back(outputs.argmax(/*dim=*/1).eq(targets).to(torch::kFloat64));
          }
        }
        item_losses[n] = torch::cat(chunk_losses);
        item_correct[n] = accuracy ? torch::cat(chunk_correct) : torch::Tensor();
      });
  for (std::size_t n = 0; n < items.size(); ++n) {
    const auto rows = rows_of_model[static_cast<std::size_t>(items[n].j)].narrow(
        0, items[n].first, items[n].last - items[n].first);
    losses.index_copy_(0, rows, item_losses[n]);
    if (accuracy) {
      correct.index_copy_(0, rows, item_correct[n]);
    }
  }
  auto loss_sums = zero_sums(clients);
  auto correct_sums = zero_sums(clients);
  loss_sums.index_add_(0, samples.owner(), losses);  // each client's samples in order
  correct_sums.index_add_(0, samples.owner(), correct);
  return per_client_means(clients, samples, loss_sums, correct_sums,
                          torch::tensor(local_model, torch::kLong).lt(0).to(clients.device()));
}

ClientEvaluation scores_of_local_models(const HostedClients& clients, ModelSet& models) {
  const auto& test = clients.test();
  auto loss_sums = zero_sums(clients);
  auto correct_sums = zero_sums(clients);
  auto& model = models.working_model();
  for (int i = 0; i < clients.size(); ++i) {
    model::load_flat_state(model, clients.local_model(i));
    const auto rows = test.owner().eq(i).nonzero().flatten();
    local::add_scores(model, clients.objective(), test.inputs(), test.targets(), test.owner(), rows,
                      loss_sums, correct_sums);
  }
  return per_client_means(clients, test, loss_sums, correct_sums,
                          torch::zeros_like(loss_sums, torch::kBool));
}

}  // namespace cflrun::run::detail
