#include "stacked_scores.hpp"

#include <limits>

#include <cflrun/local/scoring.hpp>
#include <cflrun/model/flat_state.hpp>

namespace cflrun::run::detail {
namespace {

/// Per-client means of the sums (NaN where `absent` or, for accuracy, without labels).
ClientEvaluation per_client_means(const HostedClients& clients, const torch::Tensor& loss_sums,
                                  const torch::Tensor& correct_sums, const torch::Tensor& absent) {
  const auto counts = torch::tensor(clients.test().counts(), torch::kFloat64).to(clients.device());
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

}  // namespace

ClientEvaluation scores_by_assignment(const HostedClients& clients,
                                      const std::vector<int>& assignment, ModelSet& models) {
  const auto& test = clients.test();
  auto loss_sums = zero_sums(clients);
  auto correct_sums = zero_sums(clients);
  std::vector<std::int64_t> local_model(
      assignment.begin() + clients.first_client(),
      assignment.begin() + clients.first_client() + clients.size());
  const auto model_of_sample =
      torch::tensor(local_model, torch::kLong).to(clients.device()).index_select(0, test.owner());
  for (int j = 0; j < models.size(); ++j) {
    const auto rows = model_of_sample.eq(j).nonzero().flatten();
    if (rows.numel() > 0) {
      local::add_scores(models.load(j), clients.objective(), test.inputs(), test.targets(),
                        test.owner(), rows, loss_sums, correct_sums);
    }
  }
  return per_client_means(clients, loss_sums, correct_sums,
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
  return per_client_means(clients, loss_sums, correct_sums,
                          torch::zeros_like(loss_sums, torch::kBool));
}

}  // namespace cflrun::run::detail
