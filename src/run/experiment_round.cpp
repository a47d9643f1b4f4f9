// One federated round on every rank: the round protocol of algo/algorithm.hpp (queries, plan,
// local updates, aggregation, evaluation; CLoVE Alg. 1 lines 2-14 for CLoVE).
#include "experiment_state.hpp"
#include "weighted_sums.hpp"

namespace cflrun::run::detail {
namespace {

/// Throws ShapeError unless the algorithm's aggregation gives exactly one of the weights, shaped
/// [K, M] as share_aggregation broadcasts them, and the models (their [K, P] shape is
/// ModelSet::replace's check).
void check_aggregation(const algo::Aggregation& aggregation, const PlanShape& shape) {
  const auto& weights = aggregation.weights;
  const bool weights_only = weights.defined() && !aggregation.models.defined();
  const bool models_only = aggregation.models.defined() && !weights.defined();
  if ((weights_only && weights.sizes() == c10::IntArrayRef{shape.models, shape.clients}) ||
      models_only) {
    return;
  }
  throw ShapeError("the algorithm's aggregation must give either weights [K, M] = [" +
                   std::to_string(shape.models) + ", " + std::to_string(shape.clients) +
                   "] or models [K, P], but gave weights " +
                   (weights.defined() ? c10::str(weights.sizes()) : std::string("none")) +
                   (aggregation.models.defined() ? " and models" : " and no models") +
                   " (an internal error)");
}

}  // namespace

std::vector<int> Experiment::draw_round_participants(int round) const {
  auto participants = draw_participants(num_clients_, options_.participation, options_.seed, round);
  if (round + 1 < options_.join_round) {  // newcomers are absent before their join round
    participants.erase(std::remove_if(participants.begin(), participants.end(),
                                      [&](int c) { return is_newcomer(c); }),
                       participants.end());
  }
  return participants;
}

algo::RoundInput Experiment::round_input(int round, const std::vector<int>& participants) const {
  algo::RoundInput input;
  input.round = round;
  input.participants = participants;
  input.models = models_->states();
  input.client_initial_model = client_initial_model_;
  input.train_samples = train_samples_;
  return input;
}

void Experiment::plan_round(int round, RoundOutcome& outcome, Clock& start) {
  auto input = round_input(round, outcome.participants);
  outcome.queries =
      share_queries(comm_, comm_.is_root() ? algorithm_->queries(round, outcome.participants)
                                           : std::vector<algo::ClientQuery>{});
  outcome.answers = answer_queries(outcome.queries, round);
  outcome.phase_seconds[kQuery] = seconds_since(start);
  if (comm_.is_root()) {
    input.answers = outcome.answers;
    outcome.plan = algorithm_->plan(input);
  }
  share_plan(comm_, outcome.plan, plan_shape());
  if (outcome.plan.models.defined()) {  // e.g. FlexCFL's cold start sets the group models
    models_->states().copy_(outcome.plan.models);
  }
}

void Experiment::plan_stable_round(RoundOutcome& outcome, Clock& start) {
  // After the stability switch (ICML version): every client keeps training its last model;
  // a newcomer (partial participation) computes one loss vector and takes its arg-min model (the
  // official code uses the nearest k-means centroid of a test-set loss vector; no centroids exist
  // here once clustering has stopped).
  const auto& participants = outcome.participants;
  const auto last = stability_->last_models(participants);
  std::vector<int> newcomers;
  if (comm_.is_root()) {
    for (std::size_t i = 0; i < participants.size(); ++i) {
      if (last.at(i) < 0) {
        newcomers.push_back(participants[i]);
      }
    }
  }
  std::vector<algo::ClientQuery> queries;
  if (!newcomers.empty()) {
    queries.push_back({algo::QueryKind::kLossVectors, newcomers});
  }
  const auto shared = share_queries(comm_, queries);
  const auto answers = answer_queries(shared, 0);
  outcome.phase_seconds[kQuery] = seconds_since(start);
  outcome.newcomers = shared.empty() ? std::vector<int>{} : shared.front().clients;
  if (comm_.is_root()) {
    std::vector<int> models;
    for (std::size_t i = 0, n = 0; i < participants.size(); ++i) {
      models.push_back(
          last[i] >= 0
              ? last[i]
              : static_cast<int>(answers.front().values[n++].argmin().item<std::int64_t>()));
    }
    outcome.plan = algo::hard_plan(participants, models, num_models_, train_samples_);
  }
  share_plan(comm_, outcome.plan, plan_shape());
}

local::LocalUpdateSettings Experiment::local_update_settings() const {
  local::LocalUpdateSettings settings;
  settings.gradient_averaging = options_.aggregation == "gradient";
  settings.local_epochs = options_.local_epochs;
  settings.batch_size = options_.batch_size;
  settings.learning_rate = options_.lr;
  settings.solver = options_.optimizer == "sgd" ? local::Solver::kSgd : local::Solver::kAdam;
  settings.momentum = options_.momentum;
  settings.weight_decay = options_.weight_decay;
  settings.objective = objective_of(options_);
  // FedSoft's proximal term, or FedProx's (--prox-mu); 0 = none.
  settings.proximal.mu =
      algorithm_->traits().proximal_mu > 0.0 ? algorithm_->traits().proximal_mu : options_.prox_mu;
  return settings;
}

void Experiment::add_fedprox_anchors(algo::RoundPlan& plan) const {
  if (options_.prox_mu <= 0.0 || plan.proximal_weights.defined()) {
    return;
  }
  // FedProx (Li et al. 2020, Eq. 2): each client's update stays near the model it starts from.
  plan.proximal_weights =
      torch::zeros({static_cast<std::int64_t>(plan.start.size()), num_models_}, torch::kFloat64);
  for (std::size_t c = 0; c < plan.start.size(); ++c) {
    if (plan.start[c] >= 0) {
      plan.proximal_weights[static_cast<std::int64_t>(c)][plan.start[c]] = 1.0;
    }
  }
}

std::vector<double> Experiment::train(int round, RoundOutcome& outcome) {
  if (!outcome.plan.weights.defined()) {
    return train_then_aggregate(round, outcome);
  }
  WeightedSums sums(outcome.plan.weights, models_->state_size());
  const auto& heads = outcome.plan.head_weights;  // FedPAC: the heads' own weights
  const auto head =
      heads.defined() ? model::head_range(models_->working_model()) : model::FlatRange{};
  auto head_sums = heads.defined() ? WeightedSums(heads, head.size) : WeightedSums();
  clients_->local_updates(
      outcome.plan, *models_, round, options_.seed, local_update_settings(),
      [&](int client, const torch::Tensor& result) {
        sums.add(client, result);
        if (heads.defined()) {
          head_sums.add(client, result.narrow(0, head.offset, head.size));
        }
      },
      outcome.train_loss);
  deliver_reports(round, outcome);
  outcome.weighted_head_sums = comm_.reduce_sum(head_sums.values());
  // A rank without clients (the server) contributes zero sums.
  return comm_.reduce_sum(sums.values());
}

void Experiment::deliver_reports(int round, RoundOutcome& outcome) {
  if (procedure_->report_length() == 0) {
    return;
  }
  std::vector<int> clients;
  std::vector<double> reports;  // client-major
  for (const auto& [client, report] : clients_->take_reports()) {
    clients.push_back(client);
    reports.insert(reports.end(), report.begin(), report.end());
  }
  const auto table = gather_client_rows(comm_, clients, reports, procedure_->report_length());
  if (comm_.is_root()) {
    outcome.evaluation_payload = algorithm_->receive_reports(round, table.clients, table.rows);
  }
}

std::vector<double> Experiment::train_then_aggregate(int round, RoundOutcome& outcome) {
  auto& plan = outcome.plan;
  std::vector<int> trained;
  std::vector<torch::Tensor> results;  // float32: exact for states and gradients, half the memory
  clients_->local_updates(
      plan, *models_, round, options_.seed, local_update_settings(),
      [&](int client, const torch::Tensor& result) {
        trained.push_back(client);
        results.push_back(result.to(torch::kFloat32));
      },
      outcome.train_loss);
  deliver_reports(round, outcome);
  std::vector<double> updates;  // per trained client: its update (trained - start)
  for (std::size_t i = 0; i < trained.size(); ++i) {
    const int start = plan.start[static_cast<std::size_t>(trained[i])];
    const auto update =
        (results[i].to(torch::kFloat64) - models_->states()[start].to(torch::kFloat64))
            .contiguous();
    updates.insert(updates.end(), update.data_ptr<double>(),
                   update.data_ptr<double>() + update.numel());
  }
  const auto table = gather_client_rows(comm_, trained, updates, models_->state_size());
  algo::Aggregation aggregation;
  if (comm_.is_root()) {
    auto input = round_input(round, outcome.participants);
    input.answers = outcome.answers;
    aggregation = algorithm_->aggregate(input, plan, table.clients, table.rows);
    check_aggregation(aggregation, plan_shape());
    outcome.live_models = aggregation.live_models;
    outcome.aggregated_models = aggregation.models;
    outcome.clustering = aggregation.clustering;
  }
  share_aggregation(comm_, aggregation, plan_shape());
  plan.weights = aggregation.weights;
  if (!aggregation.assignment.empty()) {
    plan.assignment = aggregation.assignment;
  }
  if (!plan.weights.defined()) {  // update-form aggregation: rank 0 holds the new models
    return {};
  }
  WeightedSums sums(plan.weights, models_->state_size());
  for (std::size_t i = 0; i < trained.size(); ++i) {
    sums.add(trained[i], results[i].to(torch::kFloat64));
  }
  return comm_.reduce_sum(sums.values());
}

void Experiment::average(int round, const std::vector<double>& weighted_sums,
                         RoundOutcome& outcome) {
  if (comm_.is_root()) {
    if (outcome.aggregated_models.defined()) {  // update-form aggregation by the algorithm
      outcome.trained_models = models_->replace(outcome.aggregated_models);
    } else {
      average_weighted_sums(weighted_sums, outcome);
    }
    algorithm_->after_aggregation(round, outcome.trained_models, models_->states());
  }
  comm_.broadcast(models_->states().data_ptr<float>(), models_->states().numel());
}

void Experiment::average_weighted_sums(const std::vector<double>& weighted_sums,
                                       RoundOutcome& outcome) {
  const auto head = outcome.plan.head_weights.defined()
                        ? model::head_range(models_->working_model())
                        : model::FlatRange{};
  const auto previous_heads = models_->states().narrow(1, head.offset, head.size).clone();
  if (options_.aggregation == "gradient") {
    models_->gradient_step(weighted_sums, options_.lr);
  } else {
    models_->average(weighted_sums);
  }
  if (outcome.plan.head_weights.defined()) {
    models_->average_heads(outcome.weighted_head_sums, head, previous_heads);
  }
  const auto k = static_cast<std::size_t>(num_models_);
  const auto p = static_cast<std::size_t>(models_->state_size());
  outcome.trained_models.assign(k, false);
  for (std::size_t s = 0; s < k; ++s) {
    outcome.trained_models[s] = weighted_sums[k * p + s] > 0.0;
  }
}

std::vector<double> Experiment::evaluate(int round, const RoundOutcome& outcome) {
  std::vector<double> local;
  if (clients_->size() > 0) {
    const auto evaluation =
        clients_->evaluate(outcome.plan.assignment, algorithm_->traits().evaluates_local_models,
                           *models_, outcome.plan.payload, round, options_.seed);
    for (int i = 0; i < clients_->size(); ++i) {
      const auto at = static_cast<std::size_t>(i);
      local.insert(local.end(),
                   {evaluation.accuracy[at], evaluation.test_loss[at], outcome.train_loss[at]});
    }
  }
  local.push_back(clients_->take_compute_seconds());
  return comm_.gather(local);
}

void Experiment::run_round(int round) {
  inject_test_fault(comm_.rank(), round);
  auto start = std::chrono::steady_clock::now();
  RoundOutcome outcome;
  outcome.participants = draw_round_participants(round);
  auto& seconds = outcome.phase_seconds;
  if (stability_->check(round, outcome.participants)) {
    if (comm_.is_root() && round == stability_->switch_round() && !options_.quiet) {
      std::cout << "round " << round + 1
                << ": assignments stable; clustering stops, per-cluster model averaging from now on"
                << std::endl;
    }
    plan_stable_round(outcome, start);
  } else {
    plan_round(round, outcome, start);
  }
  seconds[kPlan] = seconds_since(start);
  add_fedprox_anchors(outcome.plan);
  stability_->record(outcome.plan.assignment);
  const auto weighted_sums = train(round, outcome);
  seconds[kLocalUpdate] = seconds_since(start);
  average(round, weighted_sums, outcome);
  seconds[kAggregate] = seconds_since(start);
  if (procedure_->report_length() > 0) {  // the clients are scored with what the reports
                                          // produced (FedProto's prototypes)
    auto payload = std::move(outcome.evaluation_payload);  // rank 0's; shared with the others
    share_named_tensors(comm_, payload);
    if (!payload.empty()) {
      outcome.plan.payload = std::move(payload);
    }
  }
  const auto evaluations = evaluate(round, outcome);
  seconds[kEvaluate] = seconds_since(start);
  if (comm_.is_root()) {
    recorder_.record(round, outcome, evaluations,
                     {*algorithm_, *models_, statistic_.get(), num_models_}, start);
  }
}

}  // namespace cflrun::run::detail
