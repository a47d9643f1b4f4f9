#include <cflrun/algo/fesem.hpp>

#include <limits>

#include <torch/types.h>

#include <cflrun/algo/client_statistic.hpp>
#include <cflrun/core/error.hpp>
#include <cflrun/core/rng.hpp>

namespace cflrun::algo {
namespace {

constexpr const char* kDistance = "/algorithm/fesem_distance";
constexpr std::uint64_t kFirstMemberStream = 1;  // FedSoft's selection uses stream 0

/// FeSEM's E-step distances, the client side: ||w_i - theta_j||_2 between the client's local
/// model and every center, over the whole flat state, [K] per client.
class ModelDistances : public ClientStatistic {
 public:
  std::int64_t length(int num_models, std::int64_t /*state_size*/) const override {
    return num_models;
  }
  StatisticInput input() const override { return StatisticInput::kAllModels; }

  std::vector<double> compute(std::vector<LocalClient>& clients,
                              ClientServices& /*services*/) override {
    std::vector<double> rows;
    for (const auto& client : clients) {
      if (client.local_model == nullptr) {
        throw ConfigError("fesem: client " + std::to_string(client.id) + " keeps no local model");
      }
      const auto centers = client.server_models->to(torch::kFloat64);
      const auto row = (centers - client.local_model->to(torch::kFloat64))
                           .pow(2)
                           .sum(/*dim=*/1)
                           .sqrt()
                           .contiguous();
      rows.insert(rows.end(), row.data_ptr<double>(), row.data_ptr<double>() + row.numel());
    }
    return rows;
  }
};

}  // namespace

void FeSemOptions::visit(core::OptionVisitor& v) {
  v.option("fesem-aggregation", aggregation,
           "fesem: mean (each center = mean of its members' trained models, the paper) | "
           "first_member (one random member's each round, as the official code's Group.train)",
           kCenterAggregationWords);
}

FeSem::FeSem(const FeSemOptions& options, const AlgorithmContext& context)
    : options_(options),
      context_(context),
      distances_(static_cast<std::size_t>(context.num_clients * context.num_models),
                 std::numeric_limits<float>::quiet_NaN()) {
  check_model_count(context);
}

std::vector<ExtraDataset> FeSem::extra_datasets() const {
  return {{kDistance, {context_.num_clients, context_.num_models}}};
}

ClientSide FeSem::client_side() const { return {nullptr, std::make_shared<ModelDistances>()}; }

std::vector<ClientQuery> FeSem::queries(int /*round*/, const std::vector<int>& participants) {
  return {ClientQuery{QueryKind::kClientStatistics, participants}};
}

RoundPlan FeSem::plan(const RoundInput& input) {
  const auto& distances = answer_of(input, QueryKind::kClientStatistics).values;
  const auto m = static_cast<std::int64_t>(input.participants.size());
  const auto k = static_cast<std::int64_t>(context_.num_models);
  if (distances.dim() != 2 || distances.size(0) != m || distances.size(1) != k) {
    throw ShapeError("fesem: expected distances [" + std::to_string(m) + ", " + std::to_string(k) +
                     "], but got " + c10::str(distances.sizes()));
  }
  distances_.assign(distances_.size(), std::numeric_limits<float>::quiet_NaN());
  const auto nearest =
      distances.argmin(/*dim=*/1).contiguous();  // E-step, ties to the lowest center
  std::vector<int> centers(nearest.data_ptr<std::int64_t>(), nearest.data_ptr<std::int64_t>() + m);
  auto plan = hard_plan(input.participants, centers, context_.num_models, context_.train_samples);
  plan.weights =
      plan.weights.gt(0.0).to(torch::kFloat64);  // the M-step's plain mean of the members
  if (options_.aggregation == CenterAggregation::kFirstMember) {
    keep_first_members(input.round, plan.weights);
  }
  for (std::int64_t i = 0; i < m; ++i) {
    const int client = input.participants[static_cast<std::size_t>(i)];
    for (std::int64_t g = 0; g < k; ++g) {
      distances_[static_cast<std::size_t>(client * k + g)] =
          static_cast<float>(distances[i][g].item<double>());
    }
  }
  return plan;
}

void FeSem::keep_first_members(int round, torch::Tensor& weights) const {
  // The official Group.train counts the first member in the round's (random) selection order.
  auto engine = core::make_engine(context_.seed, core::Purpose::kClientSelection,
                                  kFirstMemberStream, static_cast<std::uint64_t>(round));
  for (std::int64_t g = 0; g < weights.size(0); ++g) {
    const auto members = weights[g].nonzero().flatten();
    weights[g].zero_();
    if (members.numel() > 0) {
      const auto pick = core::uniform_index(engine, static_cast<std::uint64_t>(members.numel()));
      weights[g][members[static_cast<std::int64_t>(pick)].item<std::int64_t>()] = 1.0;
    }
  }
}

ExtraValues FeSem::record(int /*round*/) const { return {{kDistance, distances_}}; }

}  // namespace cflrun::algo
