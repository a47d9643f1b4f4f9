// Rank 0's record of a run: what it records after a round (metrics, traffic, loss vectors, holdout
// scores), the result file it writes them to, and the end of that file.
#include "round_recorder.hpp"

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <iterator>
#include <limits>
#include <optional>

#include <cflrun/cluster/adjusted_rand_index.hpp>
#include <cflrun/io/result_schema.hpp>
#include <cflrun/report/run_summary.hpp>
#include <cflrun/run/client_data_setup.hpp>
#include <cflrun/run/progress.hpp>
#include <cflrun/run/rank_layout.hpp>

namespace cflrun::run::detail {

namespace schema = io::schema;
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

/// The clients' correct test samples over their test samples, accuracy[i] x samples[i] summed
/// over the clients i in `clients` with test samples; NaN for none.
double weighted_mean_over(const std::vector<double>& values, const std::vector<double>& weights,
                          const std::vector<int>& clients) {
  double sum = 0.0;
  double total = 0.0;
  for (int c : clients) {
    const auto client = static_cast<std::size_t>(c);
    if (weights[client] > 0.0) {
      sum += values[client] * weights[client];
      total += weights[client];
    }
  }
  return total > 0.0 ? sum / total : std::numeric_limits<double>::quiet_NaN();
}

torch::Tensor series(const std::vector<double>& values) {
  return torch::tensor(values, torch::kFloat64);
}

std::vector<double> values_of(const algo::AlgorithmState& state, const std::string& name) {
  const auto tensor = algo::state_tensor(state, "checkpoint", name).contiguous();
  return std::vector<double>(tensor.data_ptr<double>(), tensor.data_ptr<double>() + tensor.numel());
}

}  // namespace

void RoundRecorder::set_up(const data::ClientData& data, torch::Device device) {
  true_clusters_ = data.true_clusters;
  if (comm_.is_root() && data.num_sources() > 0) {
    holdouts_ = std::make_unique<SourceHoldouts>(data, objective_of(options_), device);
    const auto shares = data.mixture.to(torch::kFloat64).contiguous();
    mixture_.assign(shares.data_ptr<double>(), shares.data_ptr<double>() + shares.numel());
  }
}

void RoundRecorder::record_clients(const RoundOutcome& outcome,
                                   const std::vector<double>& evaluations,
                                   const algo::Algorithm& algorithm, io::RoundRecord& rec) const {
  const auto& assignment = outcome.plan.assignment;
  const auto& participants = outcome.participants;
  const auto m = assignment.size();
  std::vector<double> accuracy(m);
  std::vector<double> test_loss(m);
  std::vector<double> train_loss(m);
  std::vector<double> test_samples(m);
  std::vector<double> train_accuracy(m);
  std::size_t at = 0;
  double worker_compute_seconds = 0.0;
  for (int rank = 0; rank < comm_.size(); ++rank) {
    const auto hosted =
        hosted_clients(rank, comm_.size(), num_clients(), options_.server_hosts_clients);
    for (int c = hosted.first; c < hosted.end; ++c) {
      const auto client = static_cast<std::size_t>(c);
      accuracy[client] = evaluations[at++];
      test_loss[client] = evaluations[at++];
      train_loss[client] = evaluations[at++];
      test_samples[client] = evaluations[at++];
      if (options_.train_accuracy) {
        train_accuracy[client] = evaluations[at++];
      }
    }
    worker_compute_seconds = std::max(worker_compute_seconds, evaluations[at++]);
  }
  rec.set(schema::kWorkerComputeSeconds, worker_compute_seconds);
  // The clustering scored: the assignment, or the algorithm's own (CFL's notebook lists), whose
  // unlisted clients the ARI leaves out (the CLoVE notebook's projection of the ground truth).
  const auto& clustering = outcome.clustering.empty() ? assignment : outcome.clustering;
  const auto& true_clusters =
      population_ != nullptr ? population_->truth(outcome.round) : true_clusters_;
  if (population_ != nullptr) {
    rec.set(schema::kTrueCluster, true_clusters);
    rec.set(schema::kAvailable, population_->available(outcome.round));
  }
  std::vector<int> truth;
  std::vector<int> chosen;
  for (int c : participants) {
    if (clustering[static_cast<std::size_t>(c)] != algo::kNotParticipating) {
      truth.push_back(true_clusters[static_cast<std::size_t>(c)]);
      chosen.push_back(clustering[static_cast<std::size_t>(c)]);
    }
  }
  rec.set(schema::kAri, algorithm.traits().clusters_clients && !truth.empty()
                            ? cluster::adjusted_rand_index(truth, chosen)
                            : std::numeric_limits<double>::quiet_NaN());
  rec.set(schema::kAccuracy, mean_over(accuracy, participants));
  rec.set(schema::kAccuracyWeighted, weighted_mean_over(accuracy, test_samples, participants));
  rec.set(schema::kTestLoss, mean_over(test_loss, participants));
  if (options_.train_accuracy) {
    rec.set(schema::kAccuracyTrain, mean_over(train_accuracy, participants));
  }
  // Only the clients that trained this round have a training loss (FedSoft draws some of them).
  std::vector<int> trained;
  std::copy_if(participants.begin(), participants.end(), std::back_inserter(trained), [&](int c) {
    return outcome.plan.start[static_cast<std::size_t>(c)] != algo::kNoUpdate;
  });
  rec.set(schema::kTrainLoss, mean_over(train_loss, trained));
  rec.set(schema::kAssignment, assignment);
  rec.set(schema::kClientAccuracy, std::vector<float>(accuracy.begin(), accuracy.end()));
  rec.set(schema::kClientTestLoss, std::vector<float>(test_loss.begin(), test_loss.end()));
}

algo::RoundFacts RoundRecorder::round_facts(const RoundOutcome& outcome,
                                            const RecordSources& sources) const {
  algo::RoundFacts facts;
  facts.num_models = sources.num_models;
  facts.state_size = sources.models.state_size();
  facts.shared_size = sources.models.shared_size();
  std::vector<bool> all_models(true_clusters_.size(), false);
  const auto count_answers = [&](const algo::ClientQuery& query) {
    const bool own =
        query.kind == algo::QueryKind::kClientStatistics;  // else loss vectors, on all K models
    const auto input = own ? sources.statistic->input() : algo::StatisticInput::kAllModels;
    const auto floats = answer_length(query.kind, sources.num_models, sources.statistic,
                                      sources.models.state_size());
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

void RoundRecorder::record_loss_vectors(const RoundOutcome& outcome, const RecordSources& sources,
                                        io::RoundRecord& rec) const {
  if (!sources.algorithm.traits().records_loss_vectors) {
    return;
  }
  const auto k = static_cast<std::size_t>(sources.num_models);
  std::vector<float> loss_vectors(true_clusters_.size() * k,
                                  std::numeric_limits<float>::quiet_NaN());
  for (const auto& answer : outcome.answers) {
    if (answer.query.kind != algo::QueryKind::kLossVectors) {
      continue;
    }
    const auto values = answer.values.to(torch::kFloat32).contiguous();
    for (std::size_t i = 0; i < answer.query.clients.size(); ++i) {
      std::copy(values.data_ptr<float>() + i * k, values.data_ptr<float>() + (i + 1) * k,
                loss_vectors.begin() + static_cast<std::ptrdiff_t>(
                                           static_cast<std::size_t>(answer.query.clients[i]) * k));
    }
  }
  rec.set(schema::kLossVectors, loss_vectors);
}

void RoundRecorder::record(int round, RoundOutcome& outcome, const std::vector<double>& evaluations,
                           const RecordSources& sources, Clock& start) {
  io::RoundRecord rec;
  record_clients(outcome, evaluations, sources.algorithm, rec);
  const auto traffic = sources.algorithm.traffic(round_facts(outcome, sources));
  rec.set(schema::kBytesSent, traffic.sent);
  rec.set(schema::kBytesReceived, traffic.received);
  record_loss_vectors(outcome, sources, rec);
  for (const auto& [path, values] : sources.algorithm.record(round)) {
    rec.set(path, values);
  }
  rec.set(schema::kLiveModels, outcome.live_models > 0 ? outcome.live_models : sources.num_models);
  publish(round, outcome, sources.models, rec, start);
}

void RoundRecorder::publish(int round, RoundOutcome& outcome, ModelSet& models,
                            io::RoundRecord& rec, Clock& start) {
  if (holdouts_) {  // mixture partitions: every model on every source's holdout set
    const auto scores = holdouts_->evaluate(models);
    rec.set(schema::kSourceAccuracy, scores.accuracy);
    rec.set(schema::kSourceLoss, scores.loss);
  }
  auto& phase_seconds = outcome.phase_seconds;
  phase_seconds[kIo] = seconds_since(start);
  rec.set(schema::kSeconds, std::vector<double>(phase_seconds.begin(), phase_seconds.end()));
  writer_->append_round(rec);
  ari_series_.push_back(rec.number(schema::kAri));
  accuracy_series_.push_back(rec.number(schema::kAccuracy));
  accuracy_weighted_series_.push_back(rec.number(schema::kAccuracyWeighted));
  test_loss_series_.push_back(rec.number(schema::kTestLoss));
  // The write and flush themselves (milliseconds) are outside the recorded phases; they count in
  // the printed round time and the ETA.
  double round_seconds = seconds_since(start);
  for (double seconds : phase_seconds) {
    round_seconds += seconds;
  }
  total_seconds_ += round_seconds;
  if (!options_.quiet) {
    std::cout << progress_line(round + 1, options_.rounds, ari_series_.back(),
                               accuracy_series_.back(), test_loss_series_.back(), round_seconds,
                               total_seconds_ / (round + 1))
              << std::endl;
  }
}

algo::AlgorithmState RoundRecorder::state() const {
  return {{"ari", series(ari_series_)},
          {"accuracy", series(accuracy_series_)},
          {"accuracy_weighted", series(accuracy_weighted_series_)},
          {"test_loss", series(test_loss_series_)},
          {"total_seconds", series({total_seconds_})}};
}

void RoundRecorder::restore(const algo::AlgorithmState& state) {
  ari_series_ = values_of(state, "ari");
  accuracy_series_ = values_of(state, "accuracy");
  accuracy_weighted_series_ = values_of(state, "accuracy_weighted");
  test_loss_series_ = values_of(state, "test_loss");
  total_seconds_ = values_of(state, "total_seconds").at(0);
}

}  // namespace cflrun::run::detail
