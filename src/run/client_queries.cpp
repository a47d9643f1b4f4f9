// The clients' answers to the server's queries (algo::QueryKind): loss vectors, and the
// algorithm's own statistic (algo::ClientStatistic) with the services it is built from.
#include <cflrun/run/client_group.hpp>

#include <cflrun/local/scoring.hpp>
#include "stopwatch.hpp"

#include <torch/types.h>

#include <cflrun/algo/client_statistic.hpp>
#include <cflrun/core/error.hpp>
#include <cflrun/model/inference_forward.hpp>

namespace cflrun::run {
namespace {

std::vector<double> to_vector(const torch::Tensor& tensor) {
  const auto flat = tensor.to(torch::kCPU).to(torch::kFloat64).contiguous();
  return std::vector<double>(flat.data_ptr<double>(), flat.data_ptr<double>() + flat.numel());
}

}  // namespace

torch::Tensor ClientGroup::per_sample_training_losses(ModelSet& models, const torch::Tensor& rows) {
  auto losses = torch::empty({rows.size(0), models.size()},
                             torch::TensorOptions(device_).dtype(torch::kFloat64));
  const auto chunks = [&](const auto& fill_chunk) {
    const auto rows_per_pass = local::eval_chunk(device_);
    for (std::int64_t start = 0; start < rows.size(0); start += rows_per_pass) {
      const auto length = std::min(rows_per_pass, rows.size(0) - start);
      const auto chunk = rows.narrow(0, start, length);
      fill_chunk(train_.inputs().index_select(0, chunk), train_.targets().index_select(0, chunk),
                 losses.narrow(0, start, length));
    }
  };
  for (int j = 0; j < models.size(); ++j) {
    model::InferenceForward forward(models.load(j));
    torch::InferenceMode inference;
    chunks([&](const torch::Tensor& inputs, const torch::Tensor& targets, torch::Tensor out) {
      out.select(/*dim=*/1, j)
          .copy_(model::per_sample_loss(objective_, forward(inputs), inputs, targets));
    });
  }
  return losses;
}

std::vector<double> ClientGroup::loss_vectors(ModelSet& models, const std::vector<int>& clients) {
  Stopwatch watch(compute_seconds_);
  const auto hosted = hosted_among(clients);
  auto sums = torch::zeros({static_cast<std::int64_t>(size()), models.size()},
                           torch::TensorOptions(device_).dtype(torch::kFloat64));
  const auto rows = train_.rows(hosted);
  sums.index_add_(0, train_.owner().index_select(0, rows),
                  per_sample_training_losses(models, rows));
  const auto counts = torch::tensor(train_.counts(), torch::kFloat64).to(device_).unsqueeze(1);
  const auto index = torch::tensor(hosted, torch::kLong).to(device_);
  return to_vector((sums / counts).index_select(0, index));
}

torch::Tensor ClientGroup::per_sample_losses(ModelSet& models, const std::vector<int>& clients) {
  return per_sample_training_losses(models, train_.rows(hosted_among(clients))).to(torch::kCPU);
}

double ClientGroup::local_update(const algo::LocalClient& client, model::Network& model,
                                 const local::LocalUpdateSettings& settings,
                                 core::Purpose purpose) {
  return train_client(model, client.id - first_, client.round, client.seed, settings, purpose);
}

void ClientGroup::for_each_client(ModelSet& models, std::size_t count, bool concurrent,
                                  const std::function<void(std::size_t, model::Network&)>& work) {
  if (concurrent && trains_on_threads()) {
    on_threads(models, count, work);
    return;
  }
  for (std::size_t n = 0; n < count; ++n) {
    work(n, models.working_model());
  }
}

std::vector<double> ClientGroup::client_statistics(algo::ClientStatistic& statistic,
                                                   algo::ClientServices& services,
                                                   const torch::Tensor& server_states,
                                                   const std::vector<int>& clients, int round,
                                                   std::uint64_t seed) {
  Stopwatch watch(compute_seconds_);
  std::vector<algo::LocalClient> views;
  for (const auto i : hosted_among(clients)) {
    views.push_back(view(static_cast<int>(i), round, seed, server_states));
  }
  return statistic.compute(views, services);
}

}  // namespace cflrun::run
