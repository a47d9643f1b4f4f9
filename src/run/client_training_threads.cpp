// The clients' local updates on several threads at once (ClientGroup::set_training_threads): each
// client trains on one thread with one LibTorch intra-op thread, its own copy of the model and its
// own (seed, purpose, client, round) stream, so what it computes does not depend on the threads.
#include <cflrun/run/client_group.hpp>

#include <atomic>
#include <exception>
#include <mutex>
#include <thread>

#include <ATen/Parallel.h>
#include <torch/nn/modules/dropout.h>
#include <torch/types.h>

#include <cflrun/model/flat_state.hpp>

namespace cflrun::run {
namespace {

bool has_dropout(model::Network& network) {
  for (const auto& module : network.modules(/*include_self=*/false)) {
    if (module->as<torch::nn::Dropout>() != nullptr) {
      return true;
    }
  }
  return false;
}

/// LibTorch's intra-op thread count set to `threads` for the guard's life, then restored. A new
/// thread starts its OpenMP team at that count, and LibTorch 2.x's kernels size their partial sums
/// by the process-wide count (at::get_num_threads), not by the calling thread's team: a client's
/// results equal its --threads 1 results only while that count is 1.
class IntraOpThreads {
 public:
  explicit IntraOpThreads(int threads) : previous_(at::get_num_threads()) { at::set_num_threads(threads); }
  ~IntraOpThreads() { at::set_num_threads(previous_); }
  IntraOpThreads(const IntraOpThreads&) = delete;
  IntraOpThreads& operator=(const IntraOpThreads&) = delete;

 private:
  int previous_;
};

}  // namespace

bool ClientGroup::trains_on_threads(ModelSet& models) const {
  return training_threads_ > 1 && !procedure_ && !keep_optimizers_ && device_.is_cpu() &&
         !has_dropout(models.working_model());
}

void ClientGroup::train_on_threads(const std::vector<TrainingStart>& starts, const algo::RoundPlan& plan,
                                   ModelSet& models, int round, std::uint64_t seed,
                                   const local::LocalUpdateSettings& settings, const TrainedClient& receive,
                                   std::vector<double>& train_loss) {
  while (static_cast<int>(thread_models_.size()) < training_threads_) {
    thread_models_.push_back(models.make_network());
  }
  std::vector<torch::Tensor> results(starts.size());
  std::atomic<std::size_t> next{0};
  std::exception_ptr failure;
  std::mutex failure_mutex;
  const auto work = [&](model::Network* network) {
    try {
      auto local = settings;
      for (std::size_t n = next++; n < starts.size(); n = next++) {
        const auto [i, start] = starts[n];
        model::load_flat_state(*network, start == algo::kLocalModel ? local_states_[i] : models.states()[start]);
        if (plan.proximal_weights.defined()) {
          local.proximal.importance = plan.proximal_weights[first_ + i];
        }
        train_loss[static_cast<std::size_t>(i)] = train_client(*network, i, round, seed, local);
        results[n] = settings.gradient_averaging ? model::flatten_gradients(*network) : model::flatten_state(*network);
      }
    } catch (...) {
      const std::lock_guard<std::mutex> lock(failure_mutex);
      failure = failure ? failure : std::current_exception();
      next = starts.size();
    }
  };
  const IntraOpThreads one_thread_each(1);
  std::vector<std::thread> threads;
  for (int t = 0; t < training_threads_; ++t) {
    threads.emplace_back(work, thread_models_[static_cast<std::size_t>(t)].get());
  }
  for (auto& thread : threads) {
    thread.join();
  }
  if (failure) {
    std::rethrow_exception(failure);
  }
  for (std::size_t n = 0; n < starts.size(); ++n) {
    deliver(starts[n].i, results[n], settings.gradient_averaging, receive);
  }
}

}  // namespace cflrun::run
