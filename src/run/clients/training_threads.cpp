#include <cflrun/run/clients/training_threads.hpp>

#include <atomic>
#include <exception>
#include <mutex>
#include <thread>

#include <ATen/Parallel.h>

namespace cflrun::run {
namespace {

/// LibTorch's intra-op thread count set to `threads` for the guard's life, then restored. A new
/// thread starts its OpenMP team at that count, and LibTorch 2.x's kernels size their partial sums
/// by the process-wide count (at::get_num_threads), not by the calling thread's team: a client's
/// results equal its --threads 1 results only while that count is 1.
class IntraOpThreads {
 public:
  explicit IntraOpThreads(int threads) : previous_(at::get_num_threads()) {
    at::set_num_threads(threads);
  }
  ~IntraOpThreads() { at::set_num_threads(previous_); }
  IntraOpThreads(const IntraOpThreads&) = delete;
  IntraOpThreads& operator=(const IntraOpThreads&) = delete;

 private:
  int previous_;
};

}  // namespace

void TrainingThreads::run(const ModelFactory& make_model, std::size_t count, const Work& work) {
  while (static_cast<int>(models_.size()) < threads_) {
    models_.push_back(make_model());
  }
  std::atomic<std::size_t> next{0};
  std::exception_ptr failure;
  std::mutex failure_mutex;
  const auto each = [&](model::Network* model) {
    try {
      for (std::size_t n = next++; n < count; n = next++) {
        work(n, *model);
      }
    } catch (...) {
      const std::lock_guard<std::mutex> lock(failure_mutex);
      failure = failure ? failure : std::current_exception();
      next = count;
    }
  };
  const IntraOpThreads one_thread_each(1);
  std::vector<std::thread> threads;
  for (int t = 0; t < threads_; ++t) {
    threads.emplace_back(each, models_[static_cast<std::size_t>(t)].get());
  }
  for (auto& thread : threads) {
    thread.join();
  }
  if (failure) {
    std::rethrow_exception(failure);
  }
}

}  // namespace cflrun::run
