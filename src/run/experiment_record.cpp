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
  return clients.empty() ? std::numeric_limits<double>::quiet_NaN()
                         : sum / static_cast<double>(clients.size());
}

}  // namespace

void Experiment::record_clients(const std::vector<int>& assignment, const std::vector<int>& start,
                                const std::vector<double>& evaluations, io::RoundRecord& rec) {
  const auto m = assignment.size();
  std::vector<double> accuracy(m);
  std::vector<double> test_loss(m);
  std::vector<double> train_loss(m);
  std::size_t at = 0;
  rec.worker_compute_seconds = 0.0;
  for (int rank = 0; rank < comm_.size(); ++rank) {
    const auto hosted = hosted_by(rank);
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
  rec.ari = algorithm_->traits().clusters_clients ? cluster::adjusted_rand_index(truth, chosen)
                                                  : std::numeric_limits<double>::quiet_NaN();
  rec.accuracy = mean_over(accuracy, participants_);
  rec.test_loss = mean_over(test_loss, participants_);
  // Only the clients that trained this round have a training loss (FedSoft draws some of them).
  std::vector<int> trained;
  std::copy_if(participants_.begin(), participants_.end(), std::back_inserter(trained),
               [&](int c) { return start[static_cast<std::size_t>(c)] != algo::kNoUpdate; });
  rec.train_loss = mean_over(train_loss, trained);
  rec.assignment = assignment;
  rec.client_accuracy.assign(accuracy.begin(), accuracy.end());
  rec.client_test_loss.assign(test_loss.begin(), test_loss.end());
}

algo::RoundFacts Experiment::round_facts(const RoundOutcome& outcome) const {
  algo::RoundFacts facts;
  facts.num_models = num_models_;
  facts.state_size = models_->state_size();
  facts.shared_size = models_->shared_size();
  std::vector<bool> all_models(true_clusters_.size(), false);
  const auto count_answers = [&](const algo::ClientQuery& query) {
    const bool own =
        query.kind == algo::QueryKind::kClientStatistics;  // else loss vectors, on all K models
    const auto input = own ? statistic_->input() : algo::StatisticInput::kAllModels;
    const auto floats = answer_length(query.kind);
    for (int client : query.clients) {
      all_models[static_cast<std::size_t>(client)] =
          all_models[static_cast<std::size_t>(client)] || input == algo::StatisticInput::kAllModels;
      facts.received_initial_model += input == algo::StatisticInput::kClientInitialModel ? 1 : 0;
      facts.answer_floats += floats;
    }
  };
  std::for_each(outcome.queries.begin(), outcome.queries.end(), count_answers);
  if (!outcome.newcomers.empty()) {  // after the stability switch: newcomers' loss vectors
    count_answers({algo::QueryKind::kLossVectors, outcome.newcomers});
  }
  for (std::size_t c = 0; c < all_models.size(); ++c) {
    const int start = outcome.plan.start[c];
    facts.received_all_models += all_models[c] ? 1 : 0;
    facts.received_one_model += start >= 0 && !all_models[c] ? 1 : 0;
    facts.assignments += start >= 0 ? 1 : 0;
    facts.states += start != algo::kNoUpdate ? 1 : 0;
  }
  return facts;
}

void Experiment::record_loss_vectors(const RoundOutcome& outcome, io::RoundRecord& rec) const {
  if (!algorithm_->traits().records_loss_vectors) {
    return;
  }
  const auto k = static_cast<std::size_t>(num_models_);
  rec.loss_vectors.assign(true_clusters_.size() * k, std::numeric_limits<float>::quiet_NaN());
  for (const auto& answer : outcome.answers) {
    if (answer.query.kind != algo::QueryKind::kLossVectors) {
      continue;
    }
    const auto values = answer.values.to(torch::kFloat32).contiguous();
    for (std::size_t i = 0; i < answer.query.clients.size(); ++i) {
      std::copy(
          values.data_ptr<float>() + i * k, values.data_ptr<float>() + (i + 1) * k,
          rec.loss_vectors.begin() +
              static_cast<std::ptrdiff_t>(static_cast<std::size_t>(answer.query.clients[i]) * k));
    }
  }
}

void Experiment::record(int round, const RoundOutcome& outcome,
                        const std::vector<double>& evaluations, io::RoundRecord& rec) {
  record_clients(outcome.plan.assignment, outcome.plan.start, evaluations, rec);
  const auto traffic = algorithm_->traffic(round_facts(outcome));
  rec.bytes_sent = traffic.sent;
  rec.bytes_received = traffic.received;
  record_loss_vectors(outcome, rec);
  for (auto& [path, values] : algorithm_->record(round)) {
    rec.extra.emplace(path, std::move(values));
  }
  rec.live_models = algorithm_->live_models();
}

void Experiment::publish(int round, io::RoundRecord& rec,
                         std::chrono::steady_clock::time_point& start) {
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
    std::cout << progress_line(round + 1, options_.rounds, rec.ari, rec.accuracy, rec.test_loss,
                               round_seconds, total_seconds_ / (round + 1))
              << std::endl;
  }
}

void Experiment::finish() {
  if (!writer_) {
    return;
  }
  const auto metrics = report::compute_run_metrics(
      ari_series_, accuracy_series_, test_loss_series_,
      /*unsupervised=*/objective_of(options_) != model::Objective::kClassification);
  const auto value = [](const std::optional<double>& v) {
    return v.value_or(std::numeric_limits<double>::quiet_NaN());
  };
  // The last round's accuracy itself: accuracy_percent / 100 need not give back the same double.
  const double final_accuracy =
      metrics.accuracy_percent ? accuracy_series_.back() : std::numeric_limits<double>::quiet_NaN();
  writer_->write_summary({{"final_accuracy", final_accuracy},
                          {"final_test_loss", test_loss_series_.back()},
                          {"final_ari", value(metrics.ari)},
                          {"ari_round10_percent", value(metrics.ari_round10_percent)},
                          {"first_round_ari_0_9", value(metrics.first_round_ari_0_9)},
                          {"stability_switch_round",
                           stability_->switched() ? stability_->switch_round() + 1.0
                                                  : std::numeric_limits<double>::quiet_NaN()}});
  writer_->complete_into(paths_.out);  // <out>.partial becomes <out> in one rename
  writer_.reset();
  std::error_code error;
  std::filesystem::remove(paths_.checkpoint, error);
  std::filesystem::remove(paths_.checkpoint.string() + ".tmp", error);  // a kill's leftover, if any
}

void Experiment::fail(const std::string& message) {
  if (!writer_ ||
      !writer_->is_open()) {  // closed by a complete_into that failed: its error names the file
    return;
  }
  writer_->mark_failed(message);
  if (writer_->completed_rounds() == 0) {  // nothing worth keeping: no file that could mislead
    writer_.reset();
    std::error_code ignored;
    std::filesystem::remove(paths_.partial, ignored);
  }
}

}  // namespace cflrun::run::detail
