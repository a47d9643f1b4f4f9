// The clients' answers to the server's queries (algo::QueryKind): loss vectors, and the
// algorithm's own statistic (algo::ClientStatistic) with the services it is built from.
#include <cflrun/run/clients/client_group.hpp>

#include "../stopwatch.hpp"
#include "client_rule.hpp"
#include "loaded_models.hpp"
#include "stacked_scores.hpp"

#include <torch/types.h>

#include <cflrun/local/scoring.hpp>
#include <cflrun/model/flat_state.hpp>
#include <cflrun/model/inference_forward.hpp>

namespace cflrun::run {
namespace {

std::vector<double> to_vector(const torch::Tensor& tensor) {
  const auto flat = tensor.to(torch::kCPU).to(torch::kFloat64).contiguous();
  return std::vector<double>(flat.data_ptr<double>(), flat.data_ptr<double>() + flat.numel());
}

/// Every model's loss on each training sample of `rows`: [r, K] float64 on the clients' device,
/// eval_chunk rows per forward pass. The work items (model j, kChunksPerItem chunks) run on the
/// executor's threads where it has them (one LibTorch thread each: scoring one chunk on two
/// intra-op threads measured no faster than on one), in order on one model otherwise; each chunk
/// is scored alone, so the losses do not depend on how the items are spread.
torch::Tensor per_sample_training_losses(const HostedClients& clients, ClientExecutor& executor,
                                         ModelSet& models, const torch::Tensor& rows) {
  const auto& train = clients.train();
  auto losses = torch::empty({rows.size(0), models.size()},
                             torch::TensorOptions(clients.device()).dtype(torch::kFloat64));
  const auto rows_per_pass = local::eval_chunk(clients.device());
  const auto rows_per_item = rows_per_pass * detail::kChunksPerItem;
  const auto items_per_model = (rows.size(0) + rows_per_item - 1) / rows_per_item;
  detail::LoadedModels loaded(models);
  const auto score_item = [&](std::size_t n, model::Network& network) {
    const auto j = static_cast<int>(static_cast<std::int64_t>(n) / items_per_model);
    auto& forward = loaded.holding(network, j);
    torch::InferenceMode inference;
    const auto first = static_cast<std::int64_t>(n) % items_per_model * rows_per_item;
    const auto last = std::min(rows.size(0), first + rows_per_item);
    for (std::int64_t start = first; start < last; start += rows_per_pass) {
      const auto length = std::min(rows_per_pass, last - start);
      const auto chunk = rows.narrow(0, start, length);
      const auto inputs = train.inputs().index_select(0, chunk);
      losses.narrow(0, start, length)
          .select(/*dim=*/1, j)
          .copy_(model::per_sample_loss(clients.objective(), forward(inputs), inputs,
                                        train.targets().index_select(0, chunk)));
    }
  };
  executor.for_each_client(models, static_cast<std::size_t>(items_per_model * models.size()),
                           /*concurrent=*/true, score_item);
  return losses;
}

}  // namespace

std::vector<double> ClientGroup::loss_vectors(ModelSet& models, const std::vector<int>& clients) {
  Stopwatch watch(compute_seconds_);
  const auto hosted = clients_.hosted_among(clients);
  const auto& train = clients_.train();
  auto sums = torch::zeros({static_cast<std::int64_t>(size()), models.size()},
                           torch::TensorOptions(clients_.device()).dtype(torch::kFloat64));
  const auto rows = train.rows(hosted);
  sums.index_add_(0, train.owner().index_select(0, rows),
                  per_sample_training_losses(clients_, *executor_, models, rows));
  const auto counts =
      torch::tensor(train.counts(), torch::kFloat64).to(clients_.device()).unsqueeze(1);
  const auto index = torch::tensor(hosted, torch::kLong).to(clients_.device());
  return to_vector((sums / counts).index_select(0, index));
}

torch::Tensor ClientGroup::per_sample_losses(ModelSet& models, const std::vector<int>& clients) {
  const auto rows = clients_.train().rows(clients_.hosted_among(clients));
  return per_sample_training_losses(clients_, *executor_, models, rows).to(torch::kCPU);
}

double ClientGroup::local_update(const algo::LocalClient& client, model::Network& model,
                                 const local::LocalUpdateSettings& settings,
                                 core::Purpose purpose) {
  return detail::standard_update(clients_, client, model, settings, purpose);
}

torch::Tensor ClientGroup::local_updates_from(ModelSet& models,
                                              std::vector<algo::LocalClient>& clients,
                                              const torch::Tensor& start,
                                              const local::LocalUpdateSettings& settings,
                                              core::Purpose purpose) {
  return executor_->standard_updates(models, clients, start, settings, purpose);
}

torch::Tensor ClientGroup::training_features(ModelSet& models, const std::vector<int>& clients,
                                             const torch::Tensor& state) {
  const auto& train = clients_.train();
  const auto rows = train.rows(clients_.hosted_among(clients));
  auto& model = models.working_model();
  model::load_flat_state(model, state);
  model.eval();
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> chunks;
  const auto rows_per_pass = local::eval_chunk(clients_.device());
  for (std::int64_t start = 0; start < rows.size(0); start += rows_per_pass) {
    const auto chunk = rows.narrow(0, start, std::min(rows_per_pass, rows.size(0) - start));
    chunks.push_back(model.features(train.inputs().index_select(0, chunk)).to(torch::kFloat64));
  }
  model.train();
  return chunks.empty() ? torch::empty({0, 0}, torch::kFloat64) : torch::cat(chunks).cpu();
}

std::vector<double> ClientGroup::training_accuracies(ModelSet& models,
                                                     const std::vector<int>& assignment) {
  Stopwatch watch(compute_seconds_);
  return detail::scores_by_assignment(clients_, *executor_, assignment, models, clients_.train())
      .accuracy;
}

void ClientGroup::for_each_client(ModelSet& models, std::size_t count, bool concurrent,
                                  const ClientExecutor::Work& work) {
  executor_->for_each_client(models, count, concurrent, work);
}

std::vector<double> ClientGroup::client_statistics(algo::ClientStatistic& statistic,
                                                   algo::ClientServices& services,
                                                   const torch::Tensor& server_states,
                                                   const std::vector<int>& clients, int round,
                                                   std::uint64_t seed) {
  Stopwatch watch(compute_seconds_);
  std::vector<algo::LocalClient> views;
  for (const auto i : clients_.hosted_among(clients)) {
    views.push_back(clients_.view(static_cast<int>(i), round, seed, server_states));
  }
  return statistic.compute(views, services);
}

}  // namespace cflrun::run
