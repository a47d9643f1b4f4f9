#include <cflrun/run/compute_setup.hpp>

#include <algorithm>
#include <thread>

#include <dlfcn.h>
#include <sched.h>

#include <torch/cuda.h>

#include <cflrun/core/error.hpp>

namespace cflrun::run {

torch::Device select_device(const std::string& choice, int local_rank) {
  const bool has_gpu = torch::cuda::is_available();
  if (choice == "cpu" || (choice == "auto" && !has_gpu)) {
    return torch::Device(torch::kCPU);
  }
  if (choice != "cuda" && choice != "auto") {
    throw ConfigError("--device must be one of auto, cpu, cuda, but got '" + choice + "'");
  }
  if (!has_gpu) {
    throw ConfigError("--device cuda: LibTorch sees no CUDA GPU on this node (Debian's libtorch is "
                      "built without CUDA); use --device cpu or --device auto");
  }
  const auto gpus = static_cast<int>(torch::cuda::device_count());
  return torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(local_rank % gpus));
}

int threads_per_rank(int requested, int ranks_on_node) {
  if (requested > 0) {
    return requested;
  }
  const int node_cores = static_cast<int>(std::max(1U, std::thread::hardware_concurrency()));
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  const int usable = sched_getaffinity(0, sizeof(allowed), &allowed) == 0 ? CPU_COUNT(&allowed) : node_cores;
  if (usable < node_cores) {
    // The launcher (mpirun binding, SLURM cpuset) already gave this rank its share of the node.
    return std::max(1, usable);
  }
  return std::max(1, node_cores / std::max(1, ranks_on_node));
}

bool use_single_threaded_blas() {
  using SetThreads = void (*)(int);
  auto* set_threads = reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads"));
  if (set_threads == nullptr) {
    return false;
  }
  set_threads(1);
  return true;
}

}  // namespace cflrun::run
