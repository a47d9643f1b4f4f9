#pragma once
/// @file
/// Where and with how many threads a rank runs LibTorch.

#include <cstdint>
#include <string>

#include <torch/types.h>

#include <cflrun/cli/run_choices.hpp>

namespace cflrun::run {

/// The device for `--device`: cpu; cuda = GPU (local_rank modulo GPUs on the node); auto = cuda
/// when LibTorch sees a GPU, else cpu.
/// @throws ConfigError for cuda when no GPU is visible (or cflrun is the CPU variant), naming the
///         fix (--device cpu or auto).
torch::Device select_device(cli::DeviceChoice choice, int local_rank);

/// Sets the arithmetic of `--precision` for this process (its GPU work runs on the calling thread):
/// fp32 turns TF32 off in cuBLAS and cuDNN; tf32 turns it on in both (float32 tensors, TF32
/// tensor-core products, NVIDIA A100 whitepaper); bf16 enables LibTorch's CUDA autocast to
/// bfloat16 on this thread (matrix products and convolutions in bf16, losses and reductions in
/// float32; Micikevicius et al., "Mixed Precision Training", ICLR 2018).
/// @throws ConfigError for tf32 or bf16 on a CPU device, naming --device cuda as the fix (on this
///         platform's CPUs bf16 measured slower than float32: docs/speed.md).
void set_up_precision(cli::Precision precision, torch::Device device);

/// Clients trained at once as one client-batched model for `--client-batch requested`
/// (ExecutionSettings::client_batch): `requested` if positive; for 0 (auto) kGpuClientBatch on a
/// GPU (one client at a time there is bound by kernel launches) and 1 on a CPU.
int client_batch_for(int requested, torch::Device device);

/// --client-batch auto on a GPU: clients per client-batched local update.
inline constexpr int kGpuClientBatch = 1024;
/// --client-batch auto: the most bytes the stacked states of one client-batched update may take
/// (ExecutionSettings::client_batch_bytes; 2 GiB: 1 024 of the CNN's, 32 of the CIFAR CNN's).
inline constexpr std::int64_t kGpuClientBatchBytes = std::int64_t{2} << 30;

/// Torch intra-op threads for this rank: `requested` if positive; else, when the launcher bound
/// the rank to a subset of the node's cores (mpirun binding, a SLURM cpuset), that subset's size;
/// else the node's cores divided by the ranks on the node (at least 1).
int threads_per_rank(int requested, int ranks_on_node);

}  // namespace cflrun::run
