#pragma once
/// @file
/// The manifest of a sweep: a plain-text file with one line per run, each line the cflrun
/// arguments of that run. A SLURM job array runs line i (0-based: the first line is index 0) as
/// array task i = $SLURM_ARRAY_TASK_ID (jobs/slurm/sweep.sbatch).

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include <cflrun/sweep/sweep_grid.hpp>

namespace cflrun::sweep {

/// The SLURM batch script that runs one manifest line per array task.
inline constexpr const char* kSweepScript = "jobs/slurm/sweep.sbatch";

/// SLURM's default MaxArraySize: array indices must be below it unless the cluster raises it.
inline constexpr std::size_t kSlurmDefaultMaxArraySize = 1001;

/// What a manifest is built from.
struct SweepSpec {
  std::string config_file;            ///< `--config` of every run; "" for none.
  std::vector<GridAxis> axes;         ///< the `--set` axes, in command-line order.
  std::vector<std::string> flags;     ///< value-less cflrun switches added to every run
                                      ///< (e.g. "quiet", "skip-complete"), without "--".
  std::filesystem::path results_dir;  ///< directory of the runs' result files.
};

/// The manifest lines, one per grid point in expand_grid order:
/// `--config F --opt1 v1 ... --optN vN --out RESULTS_DIR/<run_name>.h5 [--flag ...]`.
/// Paths are written as given: relative ones are relative to the directory the array runs in.
/// @throws ConfigError if there is no `seed` axis (every line must name its seed), an axis names
///         `out` or `config` (set by --results-dir and --config), a switch (overwrite, quiet,
///         skip-complete: use `flags`) or help/version, a flag is not one of those switches, a
///         flag or path is not a safe word, or two runs get the same name.
std::vector<std::string> manifest_lines(const SweepSpec& spec);

/// Writes `lines`, each ending in '\n', to `path`, creating its parent directories.
/// @throws ConfigError if `path` exists and `force` is false (the file is not touched), or if it
///         cannot be written.
void write_manifest(const std::filesystem::path& path, const std::vector<std::string>& lines,
                    bool force);

/// The suggested submission: `sbatch --array=0-(N-1)[%P] jobs/slurm/sweep.sbatch MANIFEST`.
/// @param lines         N >= 1, the manifest's line count.
/// @param max_parallel  P, array tasks running at once; 0 = no limit (no "%P").
std::string sbatch_command(const std::filesystem::path& manifest, std::size_t lines,
                           int max_parallel);

}  // namespace cflrun::sweep
