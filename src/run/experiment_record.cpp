// What rank 0 records after a round (metrics, traffic, loss vectors, holdout scores), and the
// end of a run.
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
  // FedSoft: only the clients drawn this round trained; the others' training loss is NaN.
  std::vector<int> trained;
  std::copy_if(participants_.begin(), participants_.end(), std::back_inserter(trained),
               [&](int c) { return !soft() || !std::isnan(train_loss[static_cast<std::size_t>(c)]); });
  rec.train_loss = mean_over(train_loss, trained);
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
