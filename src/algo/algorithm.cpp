#include <cflrun/algo/algorithm.hpp>

#include <map>
#include <sstream>

#include <torch/types.h>

#include <cflrun/algo/client_statistic.hpp>
#include <cflrun/core/error.hpp>
#include <cflrun/core/rng.hpp>
#include <cflrun/model/model_registry.hpp>

namespace cflrun::algo {
namespace {

/// Renumbers groups so that the group holding the smallest client id gets 0, the next 1, ...
std::vector<int> renumber_by_smallest_client(const std::vector<int>& groups) {
  std::map<int, int> new_id;
  std::vector<int> renumbered(groups.size());
  for (std::size_t i = 0; i < groups.size(); ++i) {
    const auto found = new_id.emplace(groups[i], static_cast<int>(new_id.size())).first;
    renumbered[i] = found->second;
  }
  return renumbered;
}

}  // namespace

ClientSide Algorithm::client_side() const { return {}; }

std::vector<ClientQuery> Algorithm::set_up_queries(const std::vector<int>& /*initial*/) {
  return {};
}

void Algorithm::set_up(const std::vector<QueryAnswer>& /*answers*/) {}

std::vector<ClientQuery> Algorithm::queries(int /*round*/,
                                            const std::vector<int>& /*participants*/) {
  return {};
}

Aggregation Algorithm::aggregate(const RoundInput& input, const RoundPlan& plan,
                                 const std::vector<int>& trained,
                                 const torch::Tensor& /*updates*/) {
  std::vector<int> models;
  for (int client : trained) {
    models.push_back(plan.assignment.at(static_cast<std::size_t>(client)));
  }
  Aggregation aggregation;
  aggregation.weights = hard_plan(trained, models, num_models(), input.train_samples).weights;
  return aggregation;
}

void Algorithm::after_aggregation(int /*round*/, const std::vector<bool>& /*trained*/,
                                  torch::Tensor& /*models*/) {}

ExtraValues Algorithm::record(int /*round*/) const { return {}; }

AlgorithmState Algorithm::receive_reports(int /*round*/, const std::vector<int>& /*clients*/,
                                          const torch::Tensor& /*reports*/) {
  return {};
}

RoundTraffic Algorithm::traffic(const RoundFacts& facts) const { return round_traffic(facts); }

void Algorithm::restore(const AlgorithmState& state) {
  if (!state.empty()) {
    throw DataError(name() + " keeps no state across rounds, but the checkpoint holds " +
                    std::to_string(state.size()) +
                    " tensors for it; was it written by another algorithm?");
  }
}

namespace {

/// Throws the one message format of a refused run option.
void refuse_if(bool given, const std::string& option, const std::string& algorithm,
               const std::string& reason, const std::string& fix) {
  if (given && !reason.empty()) {
    throw ConfigError("--" + option + " does not apply to " + algorithm + " (" + reason + "); " +
                      fix);
  }
}

std::string number(double value) {
  std::ostringstream text;
  text << value;
  return text.str();
}

}  // namespace

void check_run_options(const std::string& algorithm, const Traits& traits,
                       const AlgorithmContext& context) {
  refuse_if(context.gradient_averaging, "aggregation gradient", algorithm,
            traits.no_gradient_averaging, "use --aggregation model");
  refuse_if(context.participation < 1.0, "participation " + number(context.participation),
            algorithm, traits.no_partial_participation, "use --participation 1");
  refuse_if(!context.absences.empty(), context.absences, algorithm, traits.no_partial_participation,
            "remove it");
  refuse_if(context.newcomers > 0, "newcomers " + std::to_string(context.newcomers), algorithm,
            traits.no_newcomers, "use --newcomers 0");
  refuse_if(context.cluster_layers > 0, "cluster-layers " + std::to_string(context.cluster_layers),
            algorithm,
            !traits.no_cluster_layers.empty() ? traits.no_cluster_layers
            : traits.clusters_clients
                ? ""
                : "weight sharing shares layers between the models of clusters, and it clusters "
                  "no clients",
            "use --cluster-layers 0");
  refuse_if(context.stable_rounds > 0, "stable-rounds " + std::to_string(context.stable_rounds),
            algorithm,
            traits.records_loss_vectors
                ? ""
                : "it clusters no loss vectors; the stability switch is clove's and ifca's",
            "remove --stable-rounds");
  refuse_if(context.models_given, "models " + std::to_string(context.num_models), algorithm,
            traits.no_model_count, "remove --models");
}

namespace {

void require_model_count(int num_clients, int num_models, const std::string& option) {
  if (num_models < 1 || num_models > num_clients) {
    throw ConfigError(option + " (K = " + std::to_string(num_models) +
                      " models) must be between 1 and the number of clients (" +
                      std::to_string(num_clients) + "); lower " + option + " or add clients");
  }
}

}  // namespace

void check_model_count(const AlgorithmContext& context) {
  require_model_count(context.num_clients, context.num_models,
                      context.models_given ? "--models" : "--clusters");
}

std::vector<int> random_first_assignment(int num_clients, int num_models, std::uint64_t seed) {
  require_model_count(num_clients, num_models, "--clusters");
  auto engine = core::make_engine(seed, core::Purpose::kFirstAssignment);
  std::vector<int> model(static_cast<std::size_t>(num_clients));
  std::vector<int> count(static_cast<std::size_t>(num_models), 0);
  for (auto& m : model) {
    m = static_cast<int>(core::uniform_index(engine, static_cast<std::uint64_t>(num_models)));
    ++count[static_cast<std::size_t>(m)];
  }
  for (int empty = 0; empty < num_models; ++empty) {
    while (count[static_cast<std::size_t>(empty)] == 0) {
      const auto client = core::uniform_index(engine, static_cast<std::uint64_t>(num_clients));
      int& from = model[client];
      if (count[static_cast<std::size_t>(from)] > 1) {
        --count[static_cast<std::size_t>(from)];
        from = empty;
        ++count[static_cast<std::size_t>(empty)];
      }
    }
  }
  return renumber_by_smallest_client(model);
}

void check_loss_vectors(const torch::Tensor& loss_vectors, int num_clients, int num_models) {
  if (!loss_vectors.defined() || loss_vectors.dim() != 2 || loss_vectors.size(0) != num_clients ||
      loss_vectors.size(1) != num_models || loss_vectors.scalar_type() != torch::kFloat64) {
    throw ShapeError("loss vectors: expected [" + std::to_string(num_clients) + ", " +
                     std::to_string(num_models) + "] float64, but got " +
                     (loss_vectors.defined()
                          ? c10::str(loss_vectors.sizes(), " ", loss_vectors.scalar_type())
                          : std::string("none")));
  }
  if (!torch::isfinite(loss_vectors).all().item<bool>()) {
    throw Error("loss vectors hold a non-finite loss: a model diverged; lower --lr");
  }
}

const QueryAnswer& answer_of(const RoundInput& input, QueryKind kind) {
  for (const auto& answer : input.answers) {
    if (answer.query.kind == kind) {
      return answer;
    }
  }
  throw ConfigError("round " + std::to_string(input.round + 1) +
                    ": the plan needs an answer to query " +
                    std::to_string(static_cast<int>(kind)) + " that was not asked");
}

RoundPlan hard_plan(const std::vector<int>& participants, const std::vector<int>& models,
                    int num_models, const std::vector<std::int64_t>& train_samples) {
  const auto m = train_samples.size();
  RoundPlan plan;
  plan.assignment.assign(m, kNotParticipating);
  plan.start.assign(m, kNoUpdate);
  plan.weights = torch::zeros({num_models, static_cast<std::int64_t>(m)}, torch::kFloat64);
  auto weights = plan.weights.accessor<double, 2>();
  for (std::size_t i = 0; i < participants.size(); ++i) {
    const auto client = static_cast<std::size_t>(participants[i]);
    plan.assignment[client] = plan.start[client] = models.at(i);
    weights[models[i]][participants[i]] = static_cast<double>(train_samples[client]);
  }
  return plan;
}

torch::Tensor state_tensor(const AlgorithmState& state, const std::string& algorithm,
                           const std::string& name, const std::vector<std::int64_t>& shape) {
  const auto found = state.find(name);
  if (found == state.end()) {
    throw DataError(algorithm + " state: the tensor '" + name +
                    "' is missing; the checkpoint is from another algorithm or version");
  }
  if (!shape.empty() && found->second.sizes() != torch::IntArrayRef(shape)) {
    throw DataError(algorithm + " state: '" + name + "' has shape " +
                    c10::str(found->second.sizes()) + ", expected " +
                    c10::str(torch::IntArrayRef(shape)) +
                    "; the checkpoint is from another configuration");
  }
  return found->second;
}

void AlgorithmContext::require_classifier_with_head(const std::string& algorithm) const {
  if (!classifier_with_head) {
    throw ConfigError(algorithm +
                      " needs a classifier with a body and a head trained on labels (--model " +
                      model::head_model_names() + ", without --unsupervised or --dataset linreg)");
  }
}

}  // namespace cflrun::algo
