// Set-up of an experiment on every rank: compute, data, PACFL signatures, models, result file.
#include "experiment_state.hpp"

namespace cflrun::run::detail {

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
  settings.fedsoft_interval = options_.fedsoft_interval;
  settings.fedsoft_selection = options_.fedsoft_selection;
  settings.fedsoft_mu = options_.fedsoft_mu;
  settings.fedsoft_smoother = options_.fedsoft_smoother;
  algorithm_ = algo::make_algorithm(settings);
  if (comm_.is_root() && data.num_sources() > 0) {
    holdouts_ = std::make_unique<SourceHoldouts>(data, objective_of(options_), device_);
    const auto shares = data.mixture.to(torch::kFloat64).contiguous();
    mixture_.assign(shares.data_ptr<double>(), shares.data_ptr<double>() + shares.numel());
  }
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
  if (soft()) {  // FedSoft: every client's local model starts from one client initial model
    clients_->init_local_models(models_->fresh_state(options_.seed, static_cast<std::uint64_t>(models_->size())),
                                options_.fedsoft_optimizer == "persistent");
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
  layout.num_sources = holdouts_ ? holdouts_->size() : 0;
  layout.has_importance = soft();
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
  if (!mixture_.empty()) {
    writer_->write_mixture(mixture_);
  }
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

}  // namespace cflrun::run::detail
