#include <cflrun/run/experiment.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <exception>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <limits>
#include <memory>
#include <optional>

#include <torch/torch.h>

#include <cflrun/algo/algorithm.hpp>
#include <cflrun/cluster/adjusted_rand_index.hpp>
#include <cflrun/core/build_info.hpp>
#include <cflrun/io/result_reader.hpp>
#include <cflrun/io/result_writer.hpp>
#include <cflrun/report/run_summary.hpp>
#include <cflrun/run/client_data_setup.hpp>
#include <cflrun/run/client_group.hpp>
#include <cflrun/run/collective_step.hpp>
#include <cflrun/run/compute_setup.hpp>
#include <cflrun/run/participation.hpp>
#include <cflrun/run/progress.hpp>
#include <cflrun/run/rank_layout.hpp>
#include <cflrun/run/round_traffic.hpp>
#include <cflrun/run/stability.hpp>

namespace cflrun::run {
namespace {

constexpr std::size_t kPhases = std::size(kPhaseNames);
enum Phase : std::size_t { kLossVectors, kClustering, kLocalUpdate, kAggregation, kEvaluation, kIo };
/// Values each rank reports per hosted client after evaluation: accuracy, test loss, train loss.
constexpr std::size_t kClientFields = 3;

double seconds_since(std::chrono::steady_clock::time_point& start) {
  const auto now = std::chrono::steady_clock::now();
  const double seconds = std::chrono::duration<double>(now - start).count();
  start = now;
  return seconds;
}

/// Assignment of a client that does not take part in the round.
constexpr int kNotParticipating = -1;

/// Mean of values[i] over the clients i in `clients`; NaN for none.
double mean_over(const std::vector<double>& values, const std::vector<int>& clients) {
  double sum = 0.0;
  for (int c : clients) {
    sum += values[static_cast<std::size_t>(c)];
  }
  return clients.empty() ? std::numeric_limits<double>::quiet_NaN() : sum / static_cast<double>(clients.size());
}

/// Everything a run holds between rounds, on one rank.
class Experiment {
 public:
  Experiment(const cli::RunOptions& options, const comm::Communicator& comm) : options_(options), comm_(comm) {}

  void set_up();
  void run_round(int round);
  void finish();
  void fail(const std::string& message);

 private:
  void set_up_compute();
  void set_up_data();
  void cluster_signatures();
  void set_up_models();
  bool is_newcomer(int client) const;
  std::int64_t signature_bytes();
  void open_result_file();
  std::vector<double> gather_loss_vectors(int round);
  std::vector<int> decide_assignment(int round, const std::vector<double>& loss_vectors);
  std::vector<int> keep_last_models(std::vector<int>& newcomers);
  std::vector<int> assign(int round, std::chrono::steady_clock::time_point& start, std::vector<double>& loss_vectors,
                          std::vector<int>& newcomers);
  std::vector<double> train(int round, const std::vector<int>& assignment, std::vector<double>& train_loss);
  void average(const std::vector<double>& weighted_sums);
  std::vector<double> evaluate(const std::vector<int>& assignment, const std::vector<double>& train_loss);
  void record(const std::vector<int>& assignment, const std::vector<double>& loss_vectors,
              const std::vector<double>& evaluations, const std::vector<int>& newcomers, io::RoundRecord& rec);

  const cli::RunOptions& options_;
  const comm::Communicator& comm_;
  torch::Device device_{torch::kCPU};
  int threads_ = 1;
  std::unique_ptr<algo::Algorithm> algorithm_;
  model::Architecture architecture_ = model::Architecture::kCnn;
  model::NetworkShape network_shape_;
  std::int64_t signature_floats_ = 0;  // d x p floats of one PACFL signature (rank 0)
  std::vector<bool> seen_;             // rank 0: clients that took part before (signature already sent)
  std::unique_ptr<ModelSet> models_;
  std::unique_ptr<ClientGroup> clients_;
  std::unique_ptr<StabilityMonitor> stability_;
  std::unique_ptr<io::ResultWriter> writer_;
  std::vector<int> true_clusters_;
  std::vector<int> participants_;  // this round's participating clients, increasing ids
  std::vector<double> ari_series_, accuracy_series_, test_loss_series_;  // per round, rank 0
  bool has_loss_vectors_ = false;  // the file holds loss vectors (rounds without them store NaN)
  std::array<double, kPhases> phase_seconds_{};
  double total_seconds_ = 0.0;
};

void Experiment::set_up_compute() {
  threads_ = threads_per_rank(options_.threads, comm_.local_size());
  torch::set_num_threads(threads_);
  use_single_threaded_blas();
  device_ = select_device(options_.device, comm_.local_rank());
  if (comm_.is_root() && !options_.dry_run && !options_.overwrite && std::filesystem::exists(options_.out)) {
    throw ConfigError("--out " + options_.out + " already exists; pass --overwrite to replace it or choose another --out");
  }
}

void Experiment::set_up_data() {
  architecture_ = architecture_of(options_);  // an unknown --model fails before any data is read
  const auto data = load_client_data(options_);
  network_shape_ = network_shape_of(data);
  true_clusters_ = data.true_clusters;
  const int num_clients = data.num_clients();

  algo::AlgorithmSettings settings;
  settings.name = options_.algorithm;
  settings.num_clients = num_clients;
  settings.num_clusters = options_.effective_models();
  settings.random_first_assignment = options_.first_assignment == "random";
  settings.kmeans_restarts = options_.kmeans_restarts;
  settings.sqrt_loss_vectors = options_.loss_transform == "sqrt";
  settings.min_cost_matching = options_.matching == "hungarian";
  settings.agglomerative = options_.clustering == "agglomerative";
  settings.select_k = options_.select_k == "silhouette";
  settings.seed = options_.seed;
  settings.pacfl_vectors = options_.pacfl_vectors;
  settings.pacfl_sum_of_angles = options_.pacfl_proximity == "sum";
  settings.pacfl_beta = options_.pacfl_beta;
  settings.pacfl_clusters = options_.pacfl_clusters;
  algorithm_ = algo::make_algorithm(settings);
  const auto hosted = hosted_clients(comm_.rank(), comm_.size(), num_clients);
  clients_ = std::make_unique<ClientGroup>(data, hosted.first, hosted.end, objective_of(options_), device_);
  const int window = algorithm_->clusters_clients() ? options_.stable_rounds : 0;
  stability_ = std::make_unique<StabilityMonitor>(comm_, hosted.first, hosted.end, window, options_.stable_fraction);
}

bool Experiment::is_newcomer(int client) const {
  return client % options_.clients_per_cluster >= options_.clients_per_cluster - options_.newcomers;
}

void Experiment::cluster_signatures() {
  const int p = algorithm_->signature_vectors();
  if (p == 0) {
    return;
  }
  const auto gathered = comm_.gather(clients_->signatures(p));
  const auto m = static_cast<std::int64_t>(true_clusters_.size());
  std::vector<int> clusters(static_cast<std::size_t>(m), -1);
  std::exception_ptr failure;  // rank 0 must still reach the broadcast the others wait in
  if (comm_.is_root()) try {
    const auto d = static_cast<std::int64_t>(gathered.size()) / (m * p);
    const auto signatures = torch::tensor(gathered, torch::kFloat64).view({m, d, p});
    std::vector<int> initial;
    for (int c = 0; c < m; ++c) {
      if (!is_newcomer(c)) {
        initial.push_back(c);
      }
    }
    clusters = algorithm_->cluster_signatures(signatures, initial);
    signature_floats_ = d * p;
  } catch (...) {
    failure = std::current_exception();
  }
  comm_.broadcast(clusters.data(), m);
  if (failure) {
    std::rethrow_exception(failure);
  }
  algorithm_->adopt_clusters(clusters);
}

void Experiment::set_up_models() {
  const int per_round = participants_per_round(static_cast<int>(true_clusters_.size()), options_.participation);
  if (algorithm_->clusters_clients() && per_round < algorithm_->num_models()) {
    throw ConfigError("--participation " + std::to_string(options_.participation) + " gives " +
                      std::to_string(per_round) + " clients per round, fewer than the " +
                      std::to_string(algorithm_->num_models()) + " models to assign; raise --participation");
  }
  models_ = std::make_unique<ModelSet>(algorithm_->num_models(), architecture_, network_shape_, device_);
  if (options_.cluster_layers > 0) {
    if (!algorithm_->clusters_clients()) {
      throw ConfigError("--cluster-layers (weight sharing) needs a clustering algorithm (clove, ifca), not " +
                        options_.algorithm);
    }
    models_->share_all_but_last_layers(options_.cluster_layers);
  }
}

void Experiment::open_result_file() {
  if (!comm_.is_root()) {
    return;
  }
  io::ResultLayout layout;
  layout.num_clients = static_cast<int>(true_clusters_.size());
  layout.num_models = algorithm_->num_models();
  has_loss_vectors_ = algorithm_->needs_loss_vectors(1);
  layout.has_loss_vectors = has_loss_vectors_;
  layout.phase_names.assign(std::begin(kPhaseNames), std::end(kPhaseNames));
  layout.planned_rounds = options_.rounds;
  writer_ = std::make_unique<io::ResultWriter>(options_.out, layout, options_.overwrite);
  auto attributes = options_.to_attributes();
  attributes.emplace_back("version", core::version());
  attributes.emplace_back("git_commit", core::git_commit());
  attributes.emplace_back("torch_version", core::torch_version());
  attributes.emplace_back("blas", core::blas_library());
  attributes.emplace_back("ranks", std::to_string(comm_.size()));
  attributes.emplace_back("threads_per_rank", std::to_string(threads_));
  attributes.emplace_back("device", device_.str());
  attributes.emplace_back("clients", std::to_string(true_clusters_.size()));
  attributes.emplace_back("models", std::to_string(algorithm_->num_models()));
  writer_->write_config(attributes);
  writer_->write_true_clusters(true_clusters_);
}

void Experiment::set_up() {
  collective_step(comm_, [&] { set_up_compute(); });
  collective_step(comm_, [&] { set_up_data(); });
  collective_step(comm_, [&] { cluster_signatures(); });
  collective_step(comm_, [&] { set_up_models(); });
  if (!options_.dry_run) {
    collective_step(comm_, [&] { open_result_file(); });
  }
  if (comm_.is_root()) {
    models_->initialize(options_.seed, options_.init == "same" || algorithm_->same_initial_models());
    const auto blas = core::blas_library();
    std::cout << "cflrun " << core::version() << " (" << core::git_commit() << "), LibTorch "
              << core::torch_version() << ", BLAS " << blas << "\n"
              << options_.algorithm << " on " << options_.dataset << " "
              << (options_.dataset == "linreg" ? "(Delta " + std::to_string(options_.separation) + ")" : options_.partition)
              << ": "
              << true_clusters_.size() << " clients in " << options_.clusters << " clusters, "
              << algorithm_->num_models() << " models (" << options_.effective_model() << ", "
              << models_->state_size() << " floats each), " << comm_.size() << " rank(s) x " << threads_
              << " thread(s) on " << device_.str() << " -> " << (options_.dry_run ? "nothing (--dry-run)" : options_.out)
              << std::endl;
    if (core::blas_is_reference(blas)) {
      std::cout << "warning: LibTorch runs on the slow reference BLAS; apt-get install libopenblas0-pthread "
                   "(about 4x faster)" << std::endl;
    }
  }
  comm_.broadcast(models_->states().data_ptr<float>(), models_->states().numel());
}

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
    const auto evaluation = clients_->evaluate(assignment, *models_);
    for (int i = 0; i < clients_->size(); ++i) {
      const auto at = static_cast<std::size_t>(i);
      local.insert(local.end(), {evaluation.accuracy[at], evaluation.test_loss[at], train_loss[at]});
    }
  }
  local.push_back(clients_->take_compute_seconds());
  return comm_.gather(local);
}

void Experiment::record(const std::vector<int>& assignment, const std::vector<double>& loss_vectors,
                        const std::vector<double>& evaluations, const std::vector<int>& newcomers,
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
  rec.assignment = assignment;
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
  rec.client_accuracy.assign(accuracy.begin(), accuracy.end());
  rec.client_test_loss.assign(test_loss.begin(), test_loss.end());
}

void Experiment::run_round(int round) {
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

/// True if `path` is a result file whose run finished (status "complete"); false for a missing,
/// unreadable or unfinished file.
bool holds_complete_run(const std::string& path) {
  if (!std::filesystem::exists(path)) {
    return false;
  }
  try {
    return io::ResultReader(path).status() == "complete";
  } catch (const Error&) {
    return false;
  }
}

/// --skip-complete: rank 0 looks at --out and tells every rank whether the run is already done.
bool already_complete(const cli::RunOptions& options, const comm::Communicator& comm) {
  int complete = comm.is_root() && options.skip_complete && holds_complete_run(options.out) ? 1 : 0;
  comm.broadcast(&complete, 1);
  if (complete != 0 && comm.is_root()) {
    std::cout << "cflrun: " << options.out << " already complete; nothing to do (--skip-complete)" << std::endl;
  }
  return complete != 0;
}

}  // namespace

void run_experiment(const cli::RunOptions& options, const comm::Communicator& comm) {
  if (already_complete(options, comm)) {
    return;
  }
  Experiment experiment(options, comm);
  experiment.set_up();
  if (options.dry_run) {
    return;
  }
  try {
    for (int round = 0; round < options.rounds; ++round) {
      experiment.run_round(round);
    }
  } catch (const std::exception& e) {
    experiment.fail(e.what());
    throw;
  }
  experiment.finish();
}

}  // namespace cflrun::run
