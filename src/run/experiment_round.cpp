// One federated round on every rank (CLoVE Alg. 1 lines 2-14), its record, and the end of a run.
#include "experiment_state.hpp"

#include <iterator>

namespace cflrun::run::detail {
namespace {

/// Mean of values[i] over the clients i in `clients`; NaN for none.
double mean_over(const std::vector<double>& values, const std::vector<int>& clients) {
  double sum = 0.0;
  for (int c : clients) {
    sum += values[static_cast<std::size_t>(c)];
  }
  return clients.empty() ? std::numeric_limits<double>::quiet_NaN() : sum / static_cast<double>(clients.size());
}

}  // namespace

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

std::int64_t Experiment::signature_bytes() {
  constexpr std::int64_t kFloatBytes = 4;
  seen_.resize(true_clusters_.size(), false);
  std::int64_t first_time = 0;
  for (int c : participants_) {
    first_time += seen_[static_cast<std::size_t>(c)] ? 0 : 1;
    seen_[static_cast<std::size_t>(c)] = true;
  }
  return first_time * signature_floats_ * kFloatBytes;  // PACFL: a signature with a client's first update
}

std::vector<double> Experiment::train(int round, const std::vector<int>& assignment, std::vector<double>& train_loss) {
  LocalUpdateSettings settings;
  settings.gradient_averaging = options_.aggregation == "gradient";
  settings.local_epochs = options_.local_epochs;
  settings.batch_size = options_.batch_size;
  settings.learning_rate = options_.lr;
  settings.objective = objective_of(options_);
  std::vector<double> sums;
  if (clients_->size() > 0) {
    sums = clients_->local_updates(assignment, *models_, round, options_.seed, settings, train_loss);
  } else {
    sums.assign(static_cast<std::size_t>(models_->size() * (models_->state_size() + 1)), 0.0);
  }
  return comm_.reduce_sum(sums);
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

void Experiment::record_clients(const std::vector<int>& assignment, const std::vector<double>& evaluations,
                                io::RoundRecord& rec) {
  const auto m = assignment.size();
  std::vector<double> accuracy(m);
  std::vector<double> test_loss(m);
  std::vector<double> train_loss(m);
  std::size_t at = 0;
  rec.worker_compute_seconds = 0.0;
  for (int rank = 0; rank < comm_.size(); ++rank) {
    const auto hosted = hosted_clients(rank, comm_.size(), static_cast<int>(m));
    for (int c = hosted.first; c < hosted.end; ++c) {
      const auto client = static_cast<std::size_t>(c);
      accuracy[client] = evaluations[at++];
      test_loss[client] = evaluations[at++];
      train_loss[client] = evaluations[at++];
    }
    rec.worker_compute_seconds = std::max(rec.worker_compute_seconds, evaluations[at++]);
  }
  std::vector<int> truth;
  std::vector<int> chosen;
  for (int c : participants_) {
    truth.push_back(true_clusters_[static_cast<std::size_t>(c)]);
    chosen.push_back(assignment[static_cast<std::size_t>(c)]);
  }
  rec.ari = algorithm_->clusters_clients() ? cluster::adjusted_rand_index(truth, chosen)
                                           : std::numeric_limits<double>::quiet_NaN();
  rec.accuracy = mean_over(accuracy, participants_);
  rec.test_loss = mean_over(test_loss, participants_);
  rec.train_loss = mean_over(train_loss, participants_);
  if (soft()) {  // only the clients that trained this round have a training loss
    std::vector<int> trained;
    std::copy_if(participants_.begin(), participants_.end(), std::back_inserter(trained),
                 [&](int c) { return !std::isnan(train_loss[static_cast<std::size_t>(c)]); });
    rec.train_loss = mean_over(train_loss, trained);
  }
  rec.assignment = assignment;
  rec.client_accuracy.assign(accuracy.begin(), accuracy.end());
  rec.client_test_loss.assign(test_loss.begin(), test_loss.end());
}

void Experiment::record(const std::vector<int>& assignment, const std::vector<double>& loss_vectors,
                        const std::vector<double>& evaluations, const std::vector<int>& newcomers,
                        io::RoundRecord& rec) {
  record_clients(assignment, evaluations, rec);
  const auto m = assignment.size();
  const bool sent_loss_vectors = !loss_vectors.empty();
  const int with_all_models = sent_loss_vectors ? static_cast<int>(participants_.size()) : static_cast<int>(newcomers.size());
  const auto to_all = round_traffic(with_all_models, models_->size(), models_->state_size(), models_->size(),
                                    models_->shared_size());
  const auto to_one = round_traffic(static_cast<int>(participants_.size()) - with_all_models, 1,
                                    models_->state_size(), 0, models_->shared_size());
  rec.bytes_sent = to_all.sent + to_one.sent;
  rec.bytes_received = to_all.received + to_one.received + signature_bytes();
  if (has_loss_vectors_) {
    const auto k = static_cast<std::size_t>(models_->size());
    rec.loss_vectors.assign(m * k, std::numeric_limits<float>::quiet_NaN());
    for (std::size_t i = 0; i < participants_.size() && !loss_vectors.empty(); ++i) {
      const auto row = static_cast<std::size_t>(participants_[i]) * k;
      std::copy(loss_vectors.begin() + static_cast<std::ptrdiff_t>(i * k),
                loss_vectors.begin() + static_cast<std::ptrdiff_t>((i + 1) * k),
                rec.loss_vectors.begin() + static_cast<std::ptrdiff_t>(row));
    }
  }
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

void Experiment::publish(int round, io::RoundRecord& rec, std::chrono::steady_clock::time_point& start) {
  if (holdouts_) {  // mixture partitions: every model on every source's holdout set
    auto scores = holdouts_->evaluate(*models_);
    rec.source_accuracy = std::move(scores.accuracy);
    rec.source_loss = std::move(scores.loss);
  }
  phase_seconds_[kIo] = seconds_since(start);
  rec.seconds.assign(phase_seconds_.begin(), phase_seconds_.end());
  writer_->append_round(rec);
  ari_series_.push_back(rec.ari);
  accuracy_series_.push_back(rec.accuracy);
  test_loss_series_.push_back(rec.test_loss);
  // The write and flush themselves (milliseconds) are outside the recorded phases; they count in
  // the printed round time and the ETA.
  double round_seconds = seconds_since(start);
  for (double seconds : phase_seconds_) {
    round_seconds += seconds;
  }
  total_seconds_ += round_seconds;
  if (!options_.quiet) {
    std::cout << progress_line(round + 1, options_.rounds, rec.ari, rec.accuracy, rec.test_loss, round_seconds,
                               total_seconds_ / (round + 1))
              << std::endl;
  }
}

void Experiment::finish() {
  if (!writer_) {
    return;
  }
  const auto metrics = report::compute_run_metrics(ari_series_, accuracy_series_, test_loss_series_,
                                                   /*unsupervised=*/objective_of(options_) != model::Objective::kClassification);
  const auto value = [](const std::optional<double>& v) { return v.value_or(std::numeric_limits<double>::quiet_NaN()); };
  writer_->write_summary({{"final_accuracy", value(metrics.accuracy_percent) / 100.0},
                          {"final_test_loss", test_loss_series_.back()},
                          {"final_ari", value(metrics.ari)},
                          {"ari_round10_percent", value(metrics.ari_round10_percent)},
                          {"first_round_ari_0_9", value(metrics.first_round_ari_0_9)},
                          {"stability_switch_round", stability_->switched() ? stability_->switch_round() + 1.0
                                                                            : std::numeric_limits<double>::quiet_NaN()}});
  writer_->mark_complete();
}

void Experiment::fail(const std::string& message) {
  if (writer_) {
    writer_->mark_failed(message);
  }
}

}  // namespace cflrun::run::detail
