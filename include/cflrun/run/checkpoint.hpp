#pragma once
/// @file
/// Checkpoints of a run: everything needed to continue it after a round (--resume), written
/// crash-consistently (a new file, flushed to disk, then renamed over the old one).

#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include <torch/types.h>

#include <cflrun/algo/algorithm.hpp>
#include <cflrun/io/tensor_store.hpp>

namespace cflrun::run {

/// A run's state after round `next_round` - 1 (0-based).
struct Checkpoint {
  std::int64_t next_round = 0;  ///< the round to run next (= rounds finished).
  std::vector<std::pair<std::string, std::string>>
      config;                      ///< the run's options (RunOptions::to_attributes).
  torch::Tensor models;            ///< [K, P] float32, the server models.
  algo::AlgorithmState algorithm;  ///< the algorithm's state (Algorithm::state), rank 0.
  algo::AlgorithmState server;     ///< what rank 0 keeps besides: the metric series, seen clients.
  /// One state per rank: its clients (ClientGroup::state), stability monitor and random generator.
  std::vector<algo::AlgorithmState> ranks;
  /// The result file's rounds so far (io::ResultWriter::kept_rows): --resume writes the partial
  /// file afresh from them, never trusting a file a kill may have left half written.
  io::NamedTensors rows;
  /// The builds that ran the rounds: (first round, 1-based, "version (git commit)"), in order; the
  /// result file records them as /config/build_history.
  std::vector<std::pair<std::string, std::string>> builds;
};

/// Writes `checkpoint` to `path` crash-consistently: to `path`.tmp, sealed with a whole-file
/// checksum and flushed to disk (io::write_tensor_groups), then renamed over `path`, so `path`
/// always holds a whole, verifiable checkpoint (the old or the new one).
/// @throws Hdf5Error if a file cannot be written or renamed (the old checkpoint stays).
void write_checkpoint(const std::filesystem::path& path, const Checkpoint& checkpoint);

/// Reads what write_checkpoint wrote, after verifying its checksum.
/// @throws DataError naming `path` if the file is missing, not a cflrun checkpoint, or any byte of
///         it differs from what was written (io::check_file_checksum).
Checkpoint read_checkpoint(const std::filesystem::path& path);

/// Named tensors as one vector of doubles (names, dtypes, shapes and values), to move a rank's
/// state over MPI; int64 values are exact up to 2^53. pack_state(unpack_state(v)) == v.
std::vector<double> pack_state(const algo::AlgorithmState& state);
/// The inverse of pack_state. @throws DataError if `packed` is not a packed state.
algo::AlgorithmState unpack_state(const std::vector<double>& packed);

/// Reads the packed state that starts at packed[at] and moves `at` past it, so that several packed
/// states following one another (every rank's, in a gather) are read in turn.
/// @throws DataError if it runs past the end of `packed`.
algo::AlgorithmState unpack_state(const std::vector<double>& packed, std::size_t& at);

}  // namespace cflrun::run
