#include <cflrun/run/compute_setup.hpp>

#include <algorithm>
#include <thread>

#include <sched.h>

#include <ATen/Context.h>
#include <ATen/autocast_mode.h>
#include <torch/cuda.h>

#include <cflrun/core/build_info.hpp>
#include <cflrun/core/error.hpp>

namespace cflrun::run {

torch::Device select_device(cli::DeviceChoice choice, int local_rank) {
  const bool has_gpu = torch::cuda::is_available();
  if (choice == cli::DeviceChoice::kCpu || (choice == cli::DeviceChoice::kAuto && !has_gpu)) {
    return torch::Device(torch::kCPU);
  }
  if (!has_gpu && core::cuda_variant()) {
    throw ConfigError(
        "--device cuda: LibTorch sees no CUDA GPU on this node; use --device cpu or --device auto");
  }
  if (!has_gpu) {
    throw ConfigError(
        "--device cuda: this cflrun is the CPU variant (LibTorch's CUDA libraries are not linked); "
        "use the CUDA variant (rebuild with -DCFLRUN_CUDA=ON, or build/cuda/cflrun) for GPUs, or "
        "--device cpu or --device auto");
  }
  const auto gpus = static_cast<int>(torch::cuda::device_count());
  return torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(local_rank % gpus));
}

void set_up_precision(cli::Precision precision, torch::Device device) {
  if (precision != cli::Precision::kFp32 && !device.is_cuda()) {
    throw ConfigError("--precision " + core::word_of(precision, cli::kPrecisionWords) +
                      " applies to GPUs, but this rank computes on the CPU; use "
                      "--precision fp32, or --device cuda on a GPU node");
  }
  if (!device.is_cuda()) {
    return;
  }
  const bool tf32 = precision == cli::Precision::kTf32;
  at::globalContext().setAllowTF32CuBLAS(tf32);
  at::globalContext().setAllowTF32CuDNN(tf32);
  if (precision == cli::Precision::kBf16) {
    at::autocast::set_autocast_dtype(at::kCUDA, at::kBFloat16);
    at::autocast::set_autocast_enabled(at::kCUDA, true);
  }
}

int client_batch_for(int requested, torch::Device device) {
  if (requested > 0) {
    return requested;
  }
  return device.is_cuda() ? kGpuClientBatch : 1;
}

int threads_per_rank(int requested, int ranks_on_node) {
  if (requested > 0) {
    return requested;
  }
  const int node_cores = static_cast<int>(std::max(1U, std::thread::hardware_concurrency()));
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  const int usable =
      sched_getaffinity(0, sizeof(allowed), &allowed) == 0 ? CPU_COUNT(&allowed) : node_cores;
  if (usable < node_cores) {
    // The launcher (mpirun binding, SLURM cpuset) already gave this rank its share of the node.
    return std::max(1, usable);
  }
  return std::max(1, node_cores / std::max(1, ranks_on_node));
}

}  // namespace cflrun::run
