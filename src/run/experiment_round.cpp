// One federated round of a hard-clustering algorithm on every rank (CLoVE Alg. 1 lines 2-14).
#include "experiment_state.hpp"

namespace cflrun::run::detail {

std::vector<double> Experiment::gather_loss_vectors(int round) {
  if (!algorithm_->needs_loss_vectors(round)) {
    return {};
  }
  const auto local = clients_->size() > 0 ? clients_->loss_vectors(*models_, participants_) : std::vector<double>{};
  return comm_.gather(local);
}

std::vector<int> Experiment::decide_assignment(int round, const std::vector<double>& loss_vectors) {
  std::vector<int> assignment(true_clusters_.size(), kNotParticipating);
  if (comm_.is_root()) {
    torch::Tensor matrix;
    if (!loss_vectors.empty()) {
      matrix = torch::from_blob(const_cast<double*>(loss_vectors.data()),
                                {static_cast<std::int64_t>(participants_.size()), models_->size()}, torch::kFloat64);
    }
    const auto chosen = algorithm_->assign(round, participants_, matrix);
    for (std::size_t i = 0; i < participants_.size(); ++i) {
      assignment[static_cast<std::size_t>(participants_[i])] = chosen.at(i);
    }
  }
  comm_.broadcast(assignment.data(), static_cast<std::int64_t>(assignment.size()));
  return assignment;
}

std::vector<int> Experiment::keep_last_models(std::vector<int>& newcomers) {
  const auto last = stability_->last_models(participants_);
  if (comm_.is_root()) {
    for (std::size_t i = 0; i < participants_.size(); ++i) {
      if (last.at(i) < 0) {
        newcomers.push_back(participants_[i]);
      }
    }
  }
  int count = static_cast<int>(newcomers.size());
  comm_.broadcast(&count, 1);
  newcomers.resize(static_cast<std::size_t>(count));
  comm_.broadcast(newcomers.data(), count);
  // A newcomer (partial participation) computes one loss vector and takes its arg-min model (the
  // official code uses the nearest k-means centroid of a test-set loss vector; no centroids exist
  // here once clustering has stopped).
  const auto local = count > 0 && clients_->size() > 0 ? clients_->loss_vectors(*models_, newcomers)
                                                        : std::vector<double>{};
  const auto losses = count > 0 ? comm_.gather(local) : std::vector<double>{};
  std::vector<int> assignment(true_clusters_.size(), kNotParticipating);
  if (comm_.is_root()) {
    const auto k = static_cast<std::size_t>(models_->size());
    for (std::size_t i = 0, n = 0; i < participants_.size(); ++i) {
      auto& model = assignment[static_cast<std::size_t>(participants_[i])];
      model = last[i] >= 0 ? last[i]
                           : static_cast<int>(std::min_element(losses.begin() + static_cast<std::ptrdiff_t>(n * k),
                                                               losses.begin() + static_cast<std::ptrdiff_t>((n + 1) * k)) -
                                              (losses.begin() + static_cast<std::ptrdiff_t>(n * k)));
      n += last[i] >= 0 ? 0 : 1;
    }
  }
  comm_.broadcast(assignment.data(), static_cast<std::int64_t>(assignment.size()));
  return assignment;
}

std::vector<int> Experiment::assign(int round, std::chrono::steady_clock::time_point& start,
                                    std::vector<double>& loss_vectors, std::vector<int>& newcomers) {
  if (stability_->check(round, participants_)) {
    if (comm_.is_root() && round == stability_->switch_round() && !options_.quiet) {
      std::cout << "round " << round + 1 << ": assignments stable; clustering stops, per-cluster FedAvg from now on"
                << std::endl;
    }
    auto assignment = keep_last_models(newcomers);
    phase_seconds_[kLossVectors] = seconds_since(start);
    return assignment;
  }
  loss_vectors = gather_loss_vectors(round);
  phase_seconds_[kLossVectors] = seconds_since(start);
  return decide_assignment(round, loss_vectors);
}

LocalUpdateSettings Experiment::local_update_settings() const {
  LocalUpdateSettings settings;
  settings.gradient_averaging = options_.aggregation == "gradient";
  settings.local_epochs = options_.local_epochs;
  settings.batch_size = options_.batch_size;
  settings.learning_rate = options_.lr;
  settings.objective = objective_of(options_);
  settings.proximal.mu = algorithm_->proximal_weight();  // FedSoft's proximal term; 0 = none
  return settings;
}

std::vector<double> Experiment::train(int round, const std::vector<int>& assignment, std::vector<double>& train_loss) {
  // A rank without clients (the server) contributes zero sums.
  return comm_.reduce_sum(
      clients_->local_updates(assignment, *models_, round, options_.seed, local_update_settings(), train_loss));
}

void Experiment::average(const std::vector<double>& weighted_sums) {
  if (comm_.is_root()) {
    if (options_.aggregation == "gradient") {
      models_->gradient_step(weighted_sums, options_.lr);
    } else {
      models_->average(weighted_sums);
    }
  }
  comm_.broadcast(models_->states().data_ptr<float>(), models_->states().numel());
}

std::vector<double> Experiment::evaluate(const std::vector<int>& assignment, const std::vector<double>& train_loss) {
  std::vector<double> local;
  if (clients_->size() > 0) {
    // FedSoft scores each client's personalised local model, the others its assigned model.
    const auto evaluation = soft() ? clients_->evaluate_local_models(*models_) : clients_->evaluate(assignment, *models_);
    for (int i = 0; i < clients_->size(); ++i) {
      const auto at = static_cast<std::size_t>(i);
      local.insert(local.end(), {evaluation.accuracy[at], evaluation.test_loss[at], train_loss[at]});
    }
  }
  local.push_back(clients_->take_compute_seconds());
  return comm_.gather(local);
}

void Experiment::run_round(int round) {
  if (soft()) {
    run_soft_round(round);
  } else {
    run_hard_round(round);
  }
}

void Experiment::run_hard_round(int round) {
  auto start = std::chrono::steady_clock::now();
  participants_ = draw_participants(static_cast<int>(true_clusters_.size()), options_.participation, options_.seed, round);
  if (round + 1 < options_.join_round) {  // newcomers are absent before their join round
    participants_.erase(std::remove_if(participants_.begin(), participants_.end(),
                                       [&](int c) { return is_newcomer(c); }),
                        participants_.end());
  }
  std::vector<double> loss_vectors;
  std::vector<int> newcomers;
  const auto assignment = assign(round, start, loss_vectors, newcomers);
  phase_seconds_[kClustering] = seconds_since(start);
  stability_->record(assignment);
  std::vector<double> train_loss;
  const auto weighted_sums = train(round, assignment, train_loss);
  phase_seconds_[kLocalUpdate] = seconds_since(start);
  average(weighted_sums);
  phase_seconds_[kAggregation] = seconds_since(start);
  const auto evaluations = evaluate(assignment, train_loss);
  phase_seconds_[kEvaluation] = seconds_since(start);
  if (!comm_.is_root()) {
    return;
  }
  io::RoundRecord rec;
  record(assignment, loss_vectors, evaluations, newcomers, rec);
  publish(round, rec, start);
}

}  // namespace cflrun::run::detail
