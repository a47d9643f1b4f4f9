#pragma once
/// @file
/// Named tensors in an HDF5 file, group by group: how a run's state that persists across rounds
/// (models, each algorithm's algo::AlgorithmState, the clients' local models and optimizer moments)
/// is written and read back as a whole.

#include <filesystem>
#include <map>
#include <string>

#include <torch/types.h>

namespace cflrun::io {

/// Tensors by name, e.g. {"cluster": [M] int64, "proximity": [M, M] float64}.
using NamedTensors = std::map<std::string, torch::Tensor>;

/// Writes every tensor of `groups` as the dataset /<group>/<name> of a new HDF5 file at `path`
/// (replacing an existing file), in its own dtype and shape (rank >= 1). CPU and device tensors
/// alike. The closed file is sealed with a whole-file checksum (seal_file, file_checksum.hpp) and
/// flushed to disk.
/// @throws ShapeError for a dtype other than float32, float64, int64, int32 or bool.
/// @throws Hdf5Error if the file cannot be written.
void write_tensor_groups(const std::filesystem::path& path,
                         const std::map<std::string, NamedTensors>& groups);

/// Reads back what write_tensor_groups wrote: every dataset of every group, as CPU tensors of the
/// dtype and shape written (bool comes back as bool), after checking the file's checksum.
/// @throws DataError naming `path` if it is missing, not sealed, or any byte differs from what was
///         sealed (check_file_checksum); Hdf5Error if it cannot be read.
std::map<std::string, NamedTensors> read_tensor_groups(const std::filesystem::path& path);

}  // namespace cflrun::io
