#include <cflrun/algo/flexcfl.hpp>

#include <algorithm>
#include <limits>
#include <numeric>

#include <torch/types.h>

#include <cflrun/algo/client_statistic.hpp>
#include <cflrun/cluster/kmeans.hpp>
#include <cflrun/core/error.hpp>
#include <cflrun/core/rng.hpp>
#include <cflrun/model/flat_state.hpp>

namespace cflrun::algo {
namespace {

constexpr const char* kCosine = "/algorithm/flexcfl_cosine";
constexpr int kKMeansStarts = 10;      // scikit-learn KMeans(n_init=10) of the code's time
constexpr int kKMeansIterations = 20;  // the code's KMeans(max_iter=20)
constexpr double kNormGuard = 1e-12;

/// `count` distinct clients of `clients` drawn uniformly, increasing (the code's random.sample).
std::vector<int> sample_clients(std::vector<int> clients, int count, std::uint64_t seed) {
  auto engine = core::make_engine(seed, core::Purpose::kColdStart);
  core::shuffle_prefix(engine, clients, static_cast<std::size_t>(count));
  clients.resize(static_cast<std::size_t>(count));
  std::sort(clients.begin(), clients.end());
  return clients;
}

torch::Tensor rows_of(const std::vector<int>& wanted, const std::vector<int>& clients) {
  std::vector<std::int64_t> rows;
  for (int client : wanted) {
    rows.push_back(std::find(clients.begin(), clients.end(), client) - clients.begin());
  }
  return torch::tensor(rows, torch::kInt64);
}

/// FlexCFL's pre-training, the client side: `steps` mini-batch steps of the local solver from the
/// client initial model w0, mini-batches from the client's (seed, kWarmUp, id, round) stream
/// (reshuffled every epoch); the update w - w0, [P] per client.
class WarmUpUpdate : public ClientStatistic {
 public:
  explicit WarmUpUpdate(int steps) : steps_(steps) {}
  std::int64_t length(int /*num_models*/, std::int64_t state_size) const override {
    return state_size;
  }
  StatisticInput input() const override { return StatisticInput::kClientInitialModel; }

  std::vector<double> compute(std::vector<LocalClient>& clients,
                              ClientServices& services) override {
    auto warm_up = services.local_solver();
    warm_up.max_steps = steps_;
    warm_up.gradient_averaging = false;
    const auto& initial = services.client_initial_model();
    const auto updates = (services.local_updates(clients, initial, warm_up, core::Purpose::kWarmUp)
                              .to(torch::kFloat64) -
                          initial.to(torch::kFloat64))
                             .contiguous();
    return std::vector<double>(updates.data_ptr<double>(),
                               updates.data_ptr<double>() + updates.numel());
  }

 private:
  int steps_;
};

}  // namespace

void FlexCflOptions::visit(core::OptionVisitor& v) {
  v.option(
      "flexcfl-pretrain-steps", pretrain_steps,
      "flexcfl: mini-batch steps of a client's pre-training from the initial model (official: 50)",
      core::Range::at_least(1));
  v.option("flexcfl-cold-start-scale", cold_start_scale,
           "flexcfl: alpha, the cold start clusters min(alpha x K, M) clients drawn at random "
           "(official: 20)",
           core::Range::at_least(1));
  v.option("flexcfl-group-lr", group_lr,
           "flexcfl: eta of the inter-group aggregation, each trained group moving toward the "
           "others (0 = off, the official default)",
           core::Range::at_least(0.0));
}

FlexCfl::FlexCfl(const FlexCflOptions& options, const AlgorithmContext& context)
    : options_(options),
      context_(context),
      group_(static_cast<std::size_t>(context.num_clients), -1) {
  check_model_count(context);
}

std::vector<ExtraDataset> FlexCfl::extra_datasets() const {
  return {{kCosine, {context_.num_clients, context_.num_models}}};
}

std::vector<ClientQuery> FlexCfl::queries(int /*round*/, const std::vector<int>& participants) {
  std::vector<int> clients;
  if (!cold_started_) {
    const int present = static_cast<int>(participants.size());
    if (present < context_.num_models) {
      throw ConfigError("flexcfl: the cold start clusters the clients of round 1 into " +
                        std::to_string(context_.num_models) + " groups, but only " +
                        std::to_string(present) +
                        " take part; raise --participation or lower --clusters");
    }
    cold_start_sample_ = sample_clients(
        participants, std::min(options_.cold_start_scale * context_.num_models, present),
        context_.seed);
    clients = participants;  // the sample is clustered; the others join a group by direction
  } else {
    std::copy_if(participants.begin(), participants.end(), std::back_inserter(clients),
                 [&](int c) { return group_[static_cast<std::size_t>(c)] < 0; });
  }
  if (clients.empty()) {
    return {};
  }
  return {ClientQuery{QueryKind::kClientStatistics, clients}};
}

ClientSide FlexCfl::client_side() const {
  return {nullptr, std::make_shared<WarmUpUpdate>(options_.pretrain_steps)};
}

torch::Tensor FlexCfl::decomposed_cosine_similarity(const torch::Tensor& updates, int groups) {
  const auto svd = torch::linalg_svd(updates, /*full_matrices=*/false);
  const auto directions = std::get<2>(svd).narrow(0, 0, groups);  // [K, P], unit rows
  return updates.matmul(directions.t()) /
         (updates.norm(2, /*dim=*/1, /*keepdim=*/true) + kNormGuard);
}

void FlexCfl::cold_start(const RoundInput& input, const torch::Tensor& updates,
                         const std::vector<int>& clients, RoundPlan& plan) {
  const int k = context_.num_models;
  const auto sample_updates = updates.index_select(0, rows_of(cold_start_sample_, clients));
  const auto edc = decomposed_cosine_similarity(sample_updates, k);
  cluster::KMeansOptions kmeans;
  kmeans.restarts = kKMeansStarts;
  kmeans.max_iterations = kKMeansIterations;
  auto engine = core::make_engine(context_.seed, core::Purpose::kColdStart, 1);
  const auto labels = cluster::kmeans(edc, k, kmeans, engine).labels;
  directions_ = torch::zeros({k, updates.size(1)}, torch::kFloat64);
  auto models = input.client_initial_model.to(torch::kFloat64).unsqueeze(0).repeat({k, 1});
  for (int g = 0; g < k; ++g) {
    std::vector<std::int64_t> members;
    for (std::size_t i = 0; i < labels.size(); ++i) {
      if (labels[i] == g) {
        members.push_back(static_cast<std::int64_t>(i));
      }
    }
    if (!members.empty()) {  // an empty group keeps the initial model and no direction
      directions_[g].copy_(
          sample_updates.index_select(0, torch::tensor(members, torch::kInt64)).mean(/*dim=*/0));
      models[g] += directions_[g];  // the plain mean of the members' pre-trained models
    }
  }
  for (std::size_t i = 0; i < labels.size(); ++i) {
    const auto client = static_cast<std::size_t>(cold_start_sample_[i]);
    group_[client] = labels[i];
    std::copy(edc[static_cast<std::int64_t>(i)].data_ptr<double>(),
              edc[static_cast<std::int64_t>(i)].data_ptr<double>() + k,
              cosine_.begin() + static_cast<std::ptrdiff_t>(client * static_cast<std::size_t>(k)));
  }
  plan.models = models.to(torch::kFloat32);
  cold_started_ = true;
}

void FlexCfl::join_nearest_groups(const torch::Tensor& updates, const std::vector<int>& clients) {
  const auto k = static_cast<std::size_t>(context_.num_models);
  const auto unit = updates / (updates.norm(2, /*dim=*/1, /*keepdim=*/true) + kNormGuard);
  const auto cosine =
      unit.matmul((directions_ / (directions_.norm(2, 1, true) + kNormGuard)).t()).contiguous();
  for (std::size_t i = 0; i < clients.size(); ++i) {
    const auto client = static_cast<std::size_t>(clients[i]);
    if (group_[client] >= 0) {
      continue;  // grouped at this round's cold start
    }
    // Least cosine dissimilarity (1 - cos) / 2 = largest cosine; ties to the lowest group.
    group_[client] =
        static_cast<int>(cosine[static_cast<std::int64_t>(i)].argmax().item<std::int64_t>());
    std::copy(cosine.data_ptr<double>() + i * k, cosine.data_ptr<double>() + (i + 1) * k,
              cosine_.begin() + static_cast<std::ptrdiff_t>(client * k));
  }
}

RoundPlan FlexCfl::plan(const RoundInput& input) {
  cosine_.assign(static_cast<std::size_t>(context_.num_clients * context_.num_models),
                 std::numeric_limits<float>::quiet_NaN());
  RoundPlan plan;
  if (!input.answers.empty()) {
    const auto& answer = answer_of(input, QueryKind::kClientStatistics);
    const auto& clients = answer.query.clients;
    if (answer.values.dim() != 2 ||
        answer.values.size(0) != static_cast<std::int64_t>(clients.size())) {
      throw ShapeError("flexcfl: expected one pre-training update per client, [" +
                       std::to_string(clients.size()) + ", P], but got " +
                       c10::str(answer.values.sizes()));
    }
    if (!cold_started_) {
      cold_start(input, answer.values, clients, plan);
    }
    join_nearest_groups(answer.values, clients);
  }
  std::vector<int> groups;
  for (int client : input.participants) {
    groups.push_back(group_[static_cast<std::size_t>(client)]);
  }
  auto hard = hard_plan(input.participants, groups, context_.num_models, context_.train_samples);
  hard.models = plan.models;
  return hard;
}

void FlexCfl::after_aggregation(int /*round*/, const std::vector<bool>& trained,
                                torch::Tensor& models) {
  if (options_.group_lr <= 0.0) {
    return;
  }
  const auto before = models.to(torch::kFloat64);  // simultaneous: every group moves from these
  for (std::size_t g = 0; g < trained.size(); ++g) {
    if (!trained[g]) {
      continue;
    }
    auto moved = before[static_cast<std::int64_t>(g)].clone();
    double weight = 1.0;
    for (std::size_t j = 0; j < trained.size(); ++j) {
      if (j != g && trained[j]) {
        const double pull =
            options_.group_lr / before[static_cast<std::int64_t>(j)].norm().item<double>();
        moved += pull * before[static_cast<std::int64_t>(j)];
        weight += pull;
      }
    }
    models[static_cast<std::int64_t>(g)].copy_((moved / weight).to(torch::kFloat32));
  }
}

ExtraValues FlexCfl::record(int /*round*/) const {
  auto cosine = cosine_;
  cosine.resize(static_cast<std::size_t>(context_.num_clients * context_.num_models),
                std::numeric_limits<float>::quiet_NaN());
  return {{kCosine, cosine}};
}

AlgorithmState FlexCfl::state() const {
  AlgorithmState state{
      {"group",
       torch::tensor(std::vector<std::int64_t>(group_.begin(), group_.end()), torch::kInt64)},
      {"cold_started",
       torch::tensor({static_cast<std::int64_t>(cold_started_ ? 1 : 0)}, torch::kInt64)}};
  if (directions_.defined()) {
    state.emplace("directions", directions_);
  }
  return state;
}

void FlexCfl::restore(const AlgorithmState& state) {
  const auto group = state_tensor(state, kName, "group", {context_.num_clients}).contiguous();
  group_.assign(group.data_ptr<std::int64_t>(), group.data_ptr<std::int64_t>() + group.numel());
  cold_started_ = state_tensor(state, kName, "cold_started", {1}).item<std::int64_t>() != 0;
  directions_ = cold_started_ ? state_tensor(state, kName, "directions").to(torch::kFloat64).clone()
                              : torch::Tensor();
}

}  // namespace cflrun::algo
