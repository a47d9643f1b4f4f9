// Prints the mean seconds per round and per phase of a result file, skipping warm-up rounds, and
// the share of a round spent outside the workers' LibTorch forward/backward work.
// Usage: round_time_summary FILE [WARMUP_ROUNDS=1]
#include <cflrun/io/result_reader.hpp>

#include <cstdio>
#include <iostream>
#include <string>

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: round_time_summary FILE [WARMUP_ROUNDS]" << std::endl;
    return 2;
  }
  const cflrun::io::ResultReader reader(argv[1]);
  const std::size_t warmup = argc > 2 ? std::stoul(argv[2]) : 1;
  std::vector<std::size_t> shape;
  const auto seconds = reader.read_f64("/rounds/seconds", &shape);
  const auto compute = reader.read_f64("/rounds/worker_compute_seconds");
  const auto phases = reader.phase_names();
  const std::size_t rounds = shape.at(0);
  const std::size_t p = shape.at(1);
  if (rounds <= warmup) {
    std::cerr << "need more than " << warmup << " rounds" << std::endl;
    return 2;
  }
  std::vector<double> phase_mean(p, 0.0);
  double round_mean = 0.0;
  double compute_mean = 0.0;
  const double n = static_cast<double>(rounds - warmup);
  for (std::size_t t = warmup; t < rounds; ++t) {
    for (std::size_t j = 0; j < p; ++j) {
      phase_mean[j] += seconds[t * p + j] / n;
      round_mean += seconds[t * p + j] / n;
    }
    compute_mean += compute[t] / n;
  }
  std::printf("ranks %s  threads/rank %s  rounds %zu (first %zu skipped)\n",
              reader.config_value("ranks").c_str(), reader.config_value("threads_per_rank").c_str(),
              rounds, warmup);
  std::printf("  round          %8.3f s\n", round_mean);
  for (std::size_t j = 0; j < p; ++j) {
    std::printf("  %-14s %8.3f s  %5.1f%%\n", phases[j].c_str(), phase_mean[j],
                100.0 * phase_mean[j] / round_mean);
  }
  std::printf("  torch compute  %8.3f s (max over ranks)\n", compute_mean);
  std::printf("  outside torch  %8.3f s  %5.1f%%\n", round_mean - compute_mean,
              100.0 * (round_mean - compute_mean) / round_mean);
  return 0;
}
