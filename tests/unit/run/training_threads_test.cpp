#include <cflrun/run/clients/training_threads.hpp>

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>

#include <ATen/Parallel.h>
#include <gtest/gtest.h>

namespace cflrun::run {
namespace {

std::shared_ptr<model::Network> small_model() {
  return model::make_network(model::Architecture::kMlp, model::NetworkShape{{3}, 2});
}

// Every index runs exactly once, on 3 threads, each with its own model (made once, kept for the
// next call), with LibTorch's intra-op thread count 1 meanwhile and restored afterwards.
TEST(TrainingThreads, RunsEveryIndexOnceOnItsThreadsOwnModels) {
  TrainingThreads threads(3);
  int made = 0;
  const auto factory = [&] {
    ++made;
    return small_model();
  };
  const int before = at::get_num_threads();
  for (int call = 0; call < 2; ++call) {
    std::mutex mutex;
    std::map<std::size_t, int> runs;
    std::map<std::thread::id, std::set<const model::Network*>> models_of_thread;
    std::set<int> intra_op_counts;
    threads.run(factory, 20, [&](std::size_t n, model::Network& model) {
      const std::lock_guard<std::mutex> lock(mutex);
      ++runs[n];
      models_of_thread[std::this_thread::get_id()].insert(&model);
      intra_op_counts.insert(at::get_num_threads());
    });
    EXPECT_EQ(runs.size(), 20U);
    for (const auto& [n, count] : runs) {
      EXPECT_EQ(count, 1) << "index " << n;
    }
    std::set<const model::Network*> all;
    for (const auto& [thread, models] : models_of_thread) {
      EXPECT_EQ(models.size(), 1U);  // one model per thread
      all.insert(models.begin(), models.end());
    }
    EXPECT_EQ(all.size(), models_of_thread.size());  // no model shared by two threads
    EXPECT_LE(models_of_thread.size(), 3U);
    EXPECT_EQ(intra_op_counts, std::set<int>{1});
  }
  EXPECT_EQ(made, 3);  // the models are kept across calls
  EXPECT_EQ(at::get_num_threads(), before);
}

// A failing client: the first failure reaches the caller after every thread has stopped, and the
// threads take no new index after it (each index takes 1 ms: all 1 000 would take 0.5 s).
TEST(TrainingThreads, RethrowsTheFirstFailureAndStopsTakingWork) {
  TrainingThreads threads(2);
  std::atomic<int> started{0};
  try {
    threads.run(small_model, 1000, [&](std::size_t n, model::Network&) {
      ++started;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      if (n == 3) {
        throw std::runtime_error("client 3 failed");
      }
    });
    FAIL() << "no failure reached the caller";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "client 3 failed");
  }
  EXPECT_GE(started.load(), 4);
  EXPECT_LT(started.load(), 500);  // measured 5-6
}

}  // namespace
}  // namespace cflrun::run
