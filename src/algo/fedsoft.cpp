#include <cflrun/algo/fedsoft.hpp>

#include <torch/types.h>

#include <cflrun/algo/client_statistic.hpp>
#include <cflrun/algo/soft_clustering.hpp>
#include <cflrun/core/error.hpp>
#include <cflrun/core/rng.hpp>

namespace cflrun::algo {
namespace {

constexpr const char* kImportanceDataset = "/clients/importance";

void require(bool ok, const std::string& message) {
  if (!ok) {
    throw ConfigError(message);
  }
}

/// FedSoft Alg. 1 lines 5-12, the client side: importance weights over the K centers from the
/// per-sample losses of the client's training set (eval mode), [K] per client.
class ImportanceWeights : public ClientStatistic {
 public:
  explicit ImportanceWeights(double smoother) : smoother_(smoother) {}
  std::int64_t length(int num_models, std::int64_t /*state_size*/) const override {
    return num_models;
  }
  StatisticInput input() const override { return StatisticInput::kAllModels; }

  std::vector<double> compute(std::vector<LocalClient>& clients,
                              ClientServices& services) override {
    const auto losses = services.per_sample_losses(clients);
    std::vector<double> rows;
    std::int64_t row = 0;
    for (const auto& client : clients) {
      const auto n = client.train_targets.size(0);
      const auto u = importance_weights(losses.narrow(0, row, n), smoother_).contiguous();
      rows.insert(rows.end(), u.data_ptr<double>(), u.data_ptr<double>() + u.numel());
      row += n;
    }
    return rows;
  }

 private:
  double smoother_;
};

}  // namespace

void FedSoftOptions::visit(core::OptionVisitor& v) {
  v.option(
      "fedsoft-interval", interval,
      "fedsoft: tau, clients re-estimate their importance weights every this many rounds (count)",
      core::Range::at_least(1));
  v.option("fedsoft-selection", selection,
           "fedsoft: clients drawn per cluster each round with probability by importance (count; 0 "
           "= every client trains and clusters average all local models weighted by Eq. 6)",
           core::Range::at_least(0));
  v.option(
      "fedsoft-mu", mu,
      "fedsoft: mu, weight of the proximal term (mu/2) sum_s u_s ||w - c_s||^2 of local updates",
      core::Range::at_least(0.0));
  v.option("fedsoft-smoother", smoother,
           "fedsoft: sigma, a cluster no sample prefers gets importance sigma instead of 0",
           core::Range::above(0.0));
  v.option("fedsoft-optimizer", optimizer,
           "fedsoft: fresh (a new Adam per local update, as every cflrun algorithm) | persistent "
           "(each client keeps its Adam state across rounds, as FedSoft's official code; its SGD "
           "momentum with --optimizer sgd)",
           kKeptOptimizerWords);
}

FedSoft::FedSoft(const FedSoftOptions& options, const AlgorithmContext& context)
    : options_(options), context_(context) {
  check_model_count(context);
  require(options.selection <= context.num_clients,
          "--fedsoft-selection must be between 0 (every client) and the " +
              std::to_string(context.num_clients) + " clients, but got " +
              std::to_string(options.selection) + "; lower it or add clients");
}

std::vector<ExtraDataset> FedSoft::extra_datasets() const {
  return {{kImportanceDataset, {context_.num_clients, context_.num_models}}};
}

std::vector<ClientQuery> FedSoft::queries(int round, const std::vector<int>& participants) {
  if (round % options_.interval != 0) {
    return {};
  }
  return {ClientQuery{QueryKind::kClientStatistics, participants}};
}

ClientSide FedSoft::client_side() const {
  return {nullptr, std::make_shared<ImportanceWeights>(options_.smoother)};
}

torch::Tensor FedSoft::contributions(int round, const torch::Tensor& importance) const {
  const auto counts = torch::tensor(context_.train_samples, torch::kInt64).to(torch::kFloat64);
  const auto weights = aggregation_weights(importance, counts);  // [K, M], Eq. 6
  if (options_.selection == 0) {
    return weights;
  }
  auto engine = core::make_engine(context_.seed, core::Purpose::kClientSelection, 0,
                                  static_cast<std::uint64_t>(round));
  const auto selected = select_clients(weights, options_.selection, engine);
  auto chosen = torch::zeros_like(weights);
  for (std::size_t s = 0; s < selected.size(); ++s) {
    for (int k : selected[s]) {
      chosen[static_cast<std::int64_t>(s)][k] = 1.0 / static_cast<double>(selected[s].size());
    }
  }
  return chosen;
}

RoundPlan FedSoft::plan(const RoundInput& input) {
  if (!input.answers.empty()) {
    const auto& u = answer_of(input, QueryKind::kClientStatistics).values;
    const auto m = static_cast<std::int64_t>(context_.num_clients);
    if (u.dim() != 2 || u.size(0) != m || u.size(1) != num_models()) {
      throw ShapeError("fedsoft: expected importance weights [" + std::to_string(m) + ", " +
                       std::to_string(num_models()) + "], but got " + c10::str(u.sizes()));
    }
    importance_ = u.to(torch::kFloat64).clone();
  }
  if (!importance_.defined()) {
    throw ConfigError("fedsoft: round " + std::to_string(input.round + 1) +
                      " has no importance weights yet");
  }
  RoundPlan plan;
  plan.weights = contributions(input.round, importance_).contiguous();
  plan.proximal_weights = importance_;
  const auto dominant = importance_.argmax(/*dim=*/1);
  const auto selected = plan.weights.gt(0.0).any(/*dim=*/0);
  plan.assignment.assign(static_cast<std::size_t>(context_.num_clients), kNotParticipating);
  plan.start.assign(static_cast<std::size_t>(context_.num_clients), kNoUpdate);
  for (int client : input.participants) {
    plan.assignment[static_cast<std::size_t>(client)] =
        static_cast<int>(dominant[client].item<std::int64_t>());
    plan.start[static_cast<std::size_t>(client)] =
        selected[client].item<bool>() ? kLocalModel : kNoUpdate;
  }
  return plan;
}

ExtraValues FedSoft::record(int /*round*/) const {
  const auto u = importance_.to(torch::kFloat32).contiguous();
  return {{kImportanceDataset,
           std::vector<float>(u.data_ptr<float>(), u.data_ptr<float>() + u.numel())}};
}

RoundTraffic FedSoft::traffic(const RoundFacts& facts) const {
  return soft_round_traffic(facts.received_all_models, facts.states, facts.num_models,
                            facts.state_size);
}

AlgorithmState FedSoft::state() const {
  return importance_.defined() ? AlgorithmState{{"importance", importance_}} : AlgorithmState{};
}

void FedSoft::restore(const AlgorithmState& state) {
  importance_ = state.empty() ? torch::Tensor()
                              : state_tensor(state, kName, "importance",
                                             {context_.num_clients, context_.num_models})
                                    .clone();
}

}  // namespace cflrun::algo
