#pragma once
/// @file
/// The files of one run beside its --out, and the lock that keeps two runs off them
/// (results/README.md, "Files of a run"): a run writes <out>.partial and checkpoints to
/// <out>.checkpoint, and renames <out>.partial to <out> only when it completes, so a complete
/// --out is never seen half written nor damaged by a later run.

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace cflrun::run {

/// Where a run with --out `out` keeps its files.
struct OutputPaths {
  std::filesystem::path out;         ///< the complete result, written by rename at completion.
  std::filesystem::path partial;     ///< <out>.partial: the result file while the run writes it.
  std::filesystem::path checkpoint;  ///< <out>.checkpoint: the state to --resume from.
  std::filesystem::path lock;        ///< <out>.lock: held (flock) while a run owns these files.
};

/// The paths of a run with --out `out`.
OutputPaths output_paths(const std::filesystem::path& out);

/// An exclusive lock (flock) on <out>.lock for the lifetime of the object, so that two runs never
/// write the same files (a resubmitted SLURM array task while the first still runs). The lock file
/// names its holder (host, pid, SLURM job, start time). The operating system releases the lock when
/// its process dies, so a killed run leaves no stale lock. A lock counts only once the locked file
/// is still the one at the path (the holder removes the file before it unlocks), so that a run
/// that opened the old file cannot hold a lock beside a run that locked the new one.
class RunLock {
 public:
  /// Takes the lock, creating the parent directory and the lock file if needed.
  /// @throws ConfigError naming the other run if another process holds the lock, or if the lock
  ///         file cannot be created (naming the directory).
  explicit RunLock(const std::filesystem::path& path);
  /// Releases the lock and removes the lock file.
  ~RunLock();
  RunLock(const RunLock&) = delete;
  RunLock& operator=(const RunLock&) = delete;

 private:
  /// Opens and locks path_; false (nothing held) if path_ no longer names the locked file.
  /// @throws ConfigError as the constructor.
  bool try_lock();

  std::filesystem::path path_;
  int fd_ = -1;
};

/// The options whose values differ between a run's requested /config and one recorded in a result
/// file or checkpoint, ignoring the options that do not change results, those of kind placement or
/// bookkeeping (--out, --threads, --resume, ...: cli::option_names), and build or machine facts
/// (which `requested` does not hold). A requested option missing from `recorded` is a difference
/// ("not recorded").
/// @return one line per difference: "--seed: 2 (recorded 1)".
std::vector<std::string> config_differences(
    const std::vector<std::pair<std::string, std::string>>& requested,
    const std::vector<std::pair<std::string, std::string>>& recorded);

/// Checks that `recorded` (a result file's or checkpoint's options) matches `requested` as
/// config_differences sees it.
/// @throws ConfigError "<subject> of other options:" followed by one line per difference and then
///         `fix`, e.g. subject "--resume: the checkpoint X is", fix "resume with the options ...".
void require_same_options(const std::vector<std::pair<std::string, std::string>>& requested,
                          const std::vector<std::pair<std::string, std::string>>& recorded,
                          const std::string& subject, const std::string& fix);

}  // namespace cflrun::run
