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

std::vector<int> RoundDriver::draw_round_participants(int round) const {
  auto participants =
      draw_participants(run_.num_clients, run_.options.participation, run_.options.seed, round);
  if (round + 1 < run_.options.join_round) {  // newcomers are absent before their join round
    participants.erase(std::remove_if(participants.begin(), participants.end(),
                                      [&](int c) { return run_.is_newcomer(c); }),
                       participants.end());
  }
  return run_.population ? run_.population->present(participants, round) : participants;
}

algo::RoundInput RoundDriver::round_input(int round, const std::vector<int>& participants) const {
  algo::RoundInput input;
  input.round = round;
  input.participants = participants;
  input.models = run_.models->states();
  input.client_initial_model = run_.client_initial_model;
  input.train_samples = run_.train_samples;
  return input;
}

void RoundDriver::plan_round(int round, RoundOutcome& outcome, Clock& start) {
  auto input = round_input(round, outcome.participants);
  outcome.queries = share_queries(
      run_.comm, run_.comm.is_root() ? run_.algorithm->queries(round, outcome.participants)
                                     : std::vector<algo::ClientQuery>{});
  outcome.answers = QueryExchange(run_).answer_queries(outcome.queries, round);
  outcome.phase_seconds[kQuery] = seconds_since(start);
  if (run_.comm.is_root()) {
    input.answers = outcome.answers;
    outcome.plan = run_.algorithm->plan(input);
  }
  share_plan(run_.comm, outcome.plan, run_.plan_shape());
  if (outcome.plan.models.defined()) {  // e.g. FlexCFL's cold start sets the group models
    run_.models->states().copy_(outcome.plan.models);
  }
}

void RoundDriver::plan_stable_round(RoundOutcome& outcome, Clock& start) {
  // After the stability switch (ICML version): every client keeps training its last model;
  // a newcomer (partial participation) computes one loss vector and takes its arg-min model (the
  // official code uses the nearest k-means centroid of a test-set loss vector; no centroids exist
  // here once clustering has stopped).
  const auto& participants = outcome.participants;
  const auto last = run_.stability->last_models(participants);
  std::vector<int> newcomers;
  if (run_.comm.is_root()) {
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
  const auto shared = share_queries(run_.comm, queries);
  const auto answers = QueryExchange(run_).answer_queries(shared, 0);
  outcome.phase_seconds[kQuery] = seconds_since(start);
  outcome.newcomers = shared.empty() ? std::vector<int>{} : shared.front().clients;
  if (run_.comm.is_root()) {
    std::vector<int> models;
    for (std::size_t i = 0, n = 0; i < participants.size(); ++i) {
      models.push_back(
          last[i] >= 0
              ? last[i]
              : static_cast<int>(answers.front().values[n++].argmin().item<std::int64_t>()));
    }
    outcome.plan = algo::hard_plan(participants, models, run_.num_models, run_.train_samples);
  }
  share_plan(run_.comm, outcome.plan, run_.plan_shape());
}

local::LocalUpdateSettings RunState::local_update_settings() const {
  local::LocalUpdateSettings settings;
  settings.gradient_averaging = options.aggregation == cli::Averaging::kGradient;
  settings.local_epochs = options.local_epochs;
  settings.batch_size = options.batch_size;
  settings.learning_rate = options.lr;
  settings.solver = options.optimizer;
  settings.momentum = options.momentum;
  settings.weight_decay = options.weight_decay;
  settings.objective = objective_of(options);
  // FedSoft's proximal term, or FedProx's (--prox-mu); 0 = none.
  settings.proximal.mu =
      algorithm->traits().proximal_mu > 0.0 ? algorithm->traits().proximal_mu : options.prox_mu;
  return settings;
}

void RoundDriver::add_fedprox_anchors(algo::RoundPlan& plan) const {
  if (run_.options.prox_mu <= 0.0 || plan.proximal_weights.defined()) {
    return;
  }
  // FedProx (Li et al. 2020, Eq. 2): each client's update stays near the model it starts from.
  plan.proximal_weights = torch::zeros(
      {static_cast<std::int64_t>(plan.start.size()), run_.num_models}, torch::kFloat64);
  for (std::size_t c = 0; c < plan.start.size(); ++c) {
    if (plan.start[c] >= 0) {
      plan.proximal_weights[static_cast<std::int64_t>(c)][plan.start[c]] = 1.0;
    }
  }
}

std::vector<double> RoundDriver::train(int round, RoundOutcome& outcome) {
  if (!outcome.plan.weights.defined()) {
    return train_then_aggregate(round, outcome);
  }
  WeightedSums sums(outcome.plan.weights, run_.models->state_size());
  const auto& heads = outcome.plan.head_weights;  // FedPAC: the heads' own weights
  const auto head =
      heads.defined() ? model::head_range(run_.models->working_model()) : model::FlatRange{};
  auto head_sums = heads.defined() ? WeightedSums(heads, head.size) : WeightedSums();
  run_.clients->local_updates(
      outcome.plan, *run_.models, round, run_.options.seed, run_.local_update_settings(),
      [&](int client, const torch::Tensor& result) {
        sums.add(client, result);
        if (heads.defined()) {
          head_sums.add(client, result.narrow(0, head.offset, head.size));
        }
      },
      outcome.train_loss);
  deliver_reports(round, outcome);
  outcome.weighted_head_sums = run_.comm.reduce_sum(head_sums.values());
  // A rank without clients (the server) contributes zero sums.
  return run_.comm.reduce_sum(sums.values());
}

void RoundDriver::deliver_reports(int round, RoundOutcome& outcome) {
  if (run_.procedure->report_length() == 0) {
    return;
  }
  std::vector<int> clients;
  std::vector<double> reports;  // client-major
  for (const auto& [client, report] : run_.clients->take_reports()) {
    clients.push_back(client);
    reports.insert(reports.end(), report.begin(), report.end());
  }
  const auto table =
      gather_client_rows(run_.comm, clients, reports, run_.procedure->report_length());
  if (run_.comm.is_root()) {
    outcome.evaluation_payload = run_.algorithm->receive_reports(round, table.clients, table.rows);
  }
}

std::vector<double> RoundDriver::train_then_aggregate(int round, RoundOutcome& outcome) {
  auto& plan = outcome.plan;
  std::vector<int> trained;
  std::vector<torch::Tensor> results;  // float32: exact for states and gradients, half the memory
  run_.clients->local_updates(
      plan, *run_.models, round, run_.options.seed, run_.local_update_settings(),
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
        (results[i].to(torch::kFloat64) - run_.models->states()[start].to(torch::kFloat64))
            .contiguous();
    updates.insert(updates.end(), update.data_ptr<double>(),
                   update.data_ptr<double>() + update.numel());
  }
  const auto table = gather_client_rows(run_.comm, trained, updates, run_.models->state_size());
  algo::Aggregation aggregation;
  if (run_.comm.is_root()) {
    auto input = round_input(round, outcome.participants);
    input.answers = outcome.answers;
    aggregation = run_.algorithm->aggregate(input, plan, table.clients, table.rows);
    check_aggregation(aggregation, run_.plan_shape());
    outcome.live_models = aggregation.live_models;
    outcome.aggregated_models = aggregation.models;
    outcome.clustering = aggregation.clustering;
  }
  share_aggregation(run_.comm, aggregation, run_.plan_shape());
  plan.weights = aggregation.weights;
  if (!aggregation.assignment.empty()) {
    plan.assignment = aggregation.assignment;
  }
  if (!plan.weights.defined()) {  // update-form aggregation: rank 0 holds the new models
    return {};
  }
  WeightedSums sums(plan.weights, run_.models->state_size());
  for (std::size_t i = 0; i < trained.size(); ++i) {
    sums.add(trained[i], results[i].to(torch::kFloat64));
  }
  return run_.comm.reduce_sum(sums.values());
}

void RoundDriver::average(int round, const std::vector<double>& weighted_sums,
                          RoundOutcome& outcome) {
  if (run_.comm.is_root()) {
    if (outcome.aggregated_models.defined()) {  // update-form aggregation by the algorithm
      outcome.trained_models = run_.models->replace(outcome.aggregated_models);
    } else {
      average_weighted_sums(weighted_sums, outcome);
    }
    run_.algorithm->after_aggregation(round, outcome.trained_models, run_.models->states());
  }
  run_.comm.broadcast(run_.models->states().data_ptr<float>(), run_.models->states().numel());
}

void RoundDriver::average_weighted_sums(const std::vector<double>& weighted_sums,
                                        RoundOutcome& outcome) {
  const auto head = outcome.plan.head_weights.defined()
                        ? model::head_range(run_.models->working_model())
                        : model::FlatRange{};
  const auto previous_heads = run_.models->states().narrow(1, head.offset, head.size).clone();
  if (run_.options.aggregation == cli::Averaging::kGradient) {
    run_.models->gradient_step(weighted_sums, run_.options.lr);
  } else {
    run_.models->average(weighted_sums);
  }
  if (outcome.plan.head_weights.defined()) {
    run_.models->average_heads(outcome.weighted_head_sums, head, previous_heads);
  }
  const auto k = static_cast<std::size_t>(run_.num_models);
  const auto p = static_cast<std::size_t>(run_.models->state_size());
  outcome.trained_models.assign(k, false);
  for (std::size_t s = 0; s < k; ++s) {
    outcome.trained_models[s] = weighted_sums[k * p + s] > 0.0;
  }
}

std::vector<double> RoundDriver::evaluate(int round, const RoundOutcome& outcome) {
  std::vector<double> local;
  if (run_.clients->size() > 0) {
    const auto evaluation = run_.clients->evaluate(
        outcome.plan.assignment, run_.algorithm->traits().evaluates_local_models, *run_.models,
        outcome.plan.payload, round, run_.options.seed);
    const auto& test_samples = run_.clients->hosted().test().counts();
    for (int i = 0; i < run_.clients->size(); ++i) {
      const auto at = static_cast<std::size_t>(i);
      local.insert(local.end(), {evaluation.accuracy[at], evaluation.test_loss[at],
                                 outcome.train_loss[at], static_cast<double>(test_samples[at])});
      if (run_.options.train_accuracy) {
        local.push_back(outcome.train_accuracy[at]);
      }
    }
  }
  local.push_back(run_.clients->take_compute_seconds());
  return run_.comm.gather(local);
}

void RoundDriver::run_round(int round) {
  inject_test_fault(run_.comm.rank(), round);
  hold_for_test(run_.comm.rank(), round);
  auto start = std::chrono::steady_clock::now();
  if (run_.population) {  // the hosted clients whose cluster changes this round take new data
    run_.population->move_hosted_clients(round, run_.clients->hosted());
  }
  RoundOutcome outcome;
  outcome.round = round;
  outcome.participants = draw_round_participants(round);
  if (outcome.participants.empty()) {  // the schedule has someone present: the draw missed them
    throw ConfigError("round " + std::to_string(round + 1) +
                      ": none of the clients drawn by --participation is present; raise "
                      "--participation");
  }
  auto& seconds = outcome.phase_seconds;
  if (run_.stability->check(round, outcome.participants)) {
    if (run_.comm.is_root() && round == run_.stability->switch_round() && !run_.options.quiet) {
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
  run_.stability->record(outcome.plan.assignment);
  if (run_.options.train_accuracy) {  // the models the round starts from, on the training samples
    outcome.train_accuracy =
        run_.clients->training_accuracies(*run_.models, outcome.plan.assignment);
  }
  const auto weighted_sums = train(round, outcome);
  seconds[kLocalUpdate] = seconds_since(start);
  average(round, weighted_sums, outcome);
  seconds[kAggregate] = seconds_since(start);
  if (run_.procedure->report_length() > 0) {  // the clients are scored with what the reports
                                              // produced (FedProto's prototypes)
    auto payload = std::move(outcome.evaluation_payload);  // rank 0's; shared with the others
    share_named_tensors(run_.comm, payload);
    if (!payload.empty()) {
      outcome.plan.payload = std::move(payload);
    }
  }
  const auto evaluations = evaluate(round, outcome);
  seconds[kEvaluate] = seconds_since(start);
  if (run_.comm.is_root()) {
    run_.recorder.record(round, outcome, evaluations,
                         {*run_.algorithm, *run_.models, run_.statistic.get(), run_.num_models},
                         start);
  }
}

}  // namespace cflrun::run::detail
