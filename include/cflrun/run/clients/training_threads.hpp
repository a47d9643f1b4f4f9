#pragma once
/// @file
/// The threads on which a rank trains its clients at once (--parallel-clients): each thread runs
/// one client's work at a time on its own copy of the model with LibTorch's intra-op thread count
/// at 1, so that what a client computes does not depend on the threads (docs/speed.md "Threads and
/// ranks").

#include <cstddef>
#include <functional>
#include <memory>
#include <vector>

#include <cflrun/model/network.hpp>

namespace cflrun::run {

/// A fixed number of training threads and one model per thread, kept across calls (rounds).
class TrainingThreads {
 public:
  /// Builds a model of the run's architecture (ModelSet::make_network).
  using ModelFactory = std::function<std::shared_ptr<model::Network>()>;
  /// One client's work: work(n, model), n its index in the call, `model` the thread's own model
  /// holding an arbitrary state on entry.
  using Work = std::function<void(std::size_t, model::Network&)>;

  /// @param threads  >= 1 threads; 1 means clients train one after another (no threads here).
  explicit TrainingThreads(int threads = 1) : threads_(threads) {}

  /// The number of threads.
  int count() const { return threads_; }

  /// Calls work(n, model) once for every n in [0, count) on count() threads at once, each taking
  /// the next n as it finishes one, each with its own model (made by `make_model` at the first
  /// call, kept for later ones), with LibTorch's intra-op thread count set to 1 meanwhile and
  /// restored afterwards (LibTorch 2.x sizes its kernels' partial sums by the process-wide count:
  /// a client's results equal its one-thread results only while it is 1).
  /// @throws what `work` throws: the first failure, after every thread has stopped (the others
  ///         take no new n once one has failed).
  void run(const ModelFactory& make_model, std::size_t count, const Work& work);

 private:
  int threads_;
  std::vector<std::shared_ptr<model::Network>> models_;  // [threads_] once run() was called
};

}  // namespace cflrun::run
