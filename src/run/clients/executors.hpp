#pragma once
// Private to src/run/clients: the three ClientExecutors (client_executor.hpp).

#include <memory>
#include <string>
#include <vector>

#include <cflrun/model/client_batched.hpp>
#include <cflrun/run/clients/client_executor.hpp>
#include <cflrun/run/clients/training_threads.hpp>

namespace cflrun::run::detail {

/// [p, P] float32: the rows stacked ([0, P] for none, P the floats of `like`).
torch::Tensor stacked_rows(const std::vector<torch::Tensor>& rows, const torch::Tensor& like);

/// work(n, working model) for n < count, one after another.
void one_after_another(ModelSet& models, std::size_t count, const ClientExecutor::Work& work);

/// One client after another on the run's working model, with the rank's intra-op threads.
class SerialExecutor : public ClientExecutor {
 public:
  SerialExecutor(HostedClients& clients, algo::ClientProcedure& procedure)
      : clients_(clients), procedure_(procedure) {}
  std::string describe() const override { return "one at a time"; }
  std::vector<TrainedClient> train(const TrainingRound& round,
                                   const std::vector<ClientStart>& starts) override;
  std::vector<algo::ClientScore> evaluate(const ScoringRound& round,
                                          const std::vector<ClientStart>& scored) override;
  torch::Tensor standard_updates(ModelSet& models, std::vector<algo::LocalClient>& clients,
                                 const torch::Tensor& start,
                                 const local::LocalUpdateSettings& settings,
                                 core::Purpose purpose) override;
  void for_each_client(ModelSet& models, std::size_t count, bool concurrent,
                       const Work& work) override;

 private:
  HostedClients& clients_;
  algo::ClientProcedure& procedure_;
};

/// Each client on one of `threads` training threads with its own model and one intra-op thread
/// (TrainingThreads), so that what it computes equals one client after another bit for bit.
class ThreadedExecutor : public ClientExecutor {
 public:
  ThreadedExecutor(HostedClients& clients, algo::ClientProcedure& procedure, int threads)
      : clients_(clients), procedure_(procedure), threads_(threads) {}
  std::string describe() const override;
  std::vector<TrainedClient> train(const TrainingRound& round,
                                   const std::vector<ClientStart>& starts) override;
  std::vector<algo::ClientScore> evaluate(const ScoringRound& round,
                                          const std::vector<ClientStart>& scored) override;
  torch::Tensor standard_updates(ModelSet& models, std::vector<algo::LocalClient>& clients,
                                 const torch::Tensor& start,
                                 const local::LocalUpdateSettings& settings,
                                 core::Purpose purpose) override;
  void for_each_client(ModelSet& models, std::size_t count, bool concurrent,
                       const Work& work) override;

 private:
  /// The views of `starts`' clients, made on this thread (HostedClients::view is not safe on
  /// several).
  std::vector<algo::LocalClient> views(const std::vector<ClientStart>& starts, int round,
                                       std::uint64_t seed, const torch::Tensor& server_states);

  HostedClients& clients_;
  algo::ClientProcedure& procedure_;
  TrainingThreads threads_;
};

/// Up to `capacity` clients at once as one model::ClientBatchedNetwork, through the procedure's
/// client-batched forms (train_batched, report_batched, evaluate_batched), in decreasing order of
/// their training samples so that the clients still training at every step are a prefix.
class BatchedExecutor : public ClientExecutor {
 public:
  /// @param capacity     the most clients at once (--client-batch).
  /// @param state_bytes  > 0: fewer where their stacked states would take more (16 bytes a float).
  BatchedExecutor(HostedClients& clients, algo::ClientProcedure& procedure, int capacity,
                  std::int64_t state_bytes)
      : clients_(clients), procedure_(procedure), capacity_(capacity), state_bytes_(state_bytes) {}
  std::string describe() const override;
  std::vector<TrainedClient> train(const TrainingRound& round,
                                   const std::vector<ClientStart>& starts) override;
  std::vector<algo::ClientScore> evaluate(const ScoringRound& round,
                                          const std::vector<ClientStart>& scored) override;
  torch::Tensor standard_updates(ModelSet& models, std::vector<algo::LocalClient>& clients,
                                 const torch::Tensor& start,
                                 const local::LocalUpdateSettings& settings,
                                 core::Purpose purpose) override;
  void for_each_client(ModelSet& models, std::size_t count, bool concurrent,
                       const Work& work) override;

 private:
  /// The batched network, made (or grown) to hold min(capacity, clients, the byte budget) clients.
  model::ClientBatchedNetwork& network(ModelSet& models, std::size_t clients);
  /// Chunks of at most network capacity of the positions of `starts`, most training samples first;
  /// for a local update under `training` whose clients have step limits (stragglers' partial
  /// work), most local steps first, then most samples.
  std::vector<std::vector<std::size_t>> chunks(
      const std::vector<ClientStart>& starts, std::int64_t capacity,
      const local::LocalUpdateSettings* training = nullptr) const;
  /// work(chunk, batch, network) for chunks of `starts` (positions into it), each chunk's start
  /// states loaded into the network (client c = chunk[c]) and its clients' views in `batch`.
  using ChunkWork = std::function<void(const std::vector<std::size_t>&, algo::ClientBatch&,
                                       model::ClientBatchedNetwork&)>;
  void each_chunk(ModelSet& models, int round, std::uint64_t seed,
                  const std::vector<ClientStart>& starts, const ChunkWork& work,
                  const local::LocalUpdateSettings* training = nullptr);
  /// The round's per-client parts of a client-batched update: proximal importance weights, kept
  /// optimizer states (each client's update counted).
  void begin_updates(const TrainingRound& round, algo::ClientBatch& batch);
  /// Keeps the clients' optimizer states after the update.
  void end_updates(const TrainingRound& round, const algo::ClientBatch& batch);
  /// The batch of the clients `views` (which must outlive it).
  algo::ClientBatch batch(std::vector<algo::LocalClient>& views) const;

  HostedClients& clients_;
  algo::ClientProcedure& procedure_;
  int capacity_;
  std::int64_t state_bytes_;
  std::unique_ptr<model::ClientBatchedNetwork> network_;
};

}  // namespace cflrun::run::detail
