#pragma once
/// @file
/// Where and with how many threads a rank runs LibTorch.

#include <string>

#include <torch/types.h>

namespace cflrun::run {

/// The device for `--device`: "cpu"; "cuda" = GPU (local_rank modulo GPUs on the node);
/// "auto" = cuda when LibTorch sees a GPU, else cpu.
/// @throws ConfigError for "cuda" when no GPU is visible (e.g. Debian's CPU-only libtorch), naming
///         the fix (--device cpu or auto), or for any other value.
torch::Device select_device(const std::string& choice, int local_rank);

/// Torch intra-op threads for this rank: `requested` if positive; else, when the launcher bound
/// the rank to a subset of the node's cores (mpirun binding, a SLURM cpuset), that subset's size;
/// else the node's cores divided by the ranks on the node (at least 1).
int threads_per_rank(int requested, int ranks_on_node);

/// Makes OpenBLAS single-threaded in this process (openblas_set_num_threads(1), looked up at run
/// time since LibTorch links the generic libblas.so.3). LibTorch already parallelises each
/// operator over `threads_per_rank` threads; OpenBLAS threads inside those regions oversubscribe
/// the cores (measured: the loss-vector phase of jobs/fmnist_label_skew1.cfg went from 1.7 s to
/// 1.2 s per round on 2 cores). No effect with another BLAS.
/// @return true if OpenBLAS was found and set.
bool use_single_threaded_blas();

}  // namespace cflrun::run
