#pragma once
/// @file
/// Publishing a finished file under its final name so that a crash never leaves it half written.

#include <filesystem>
#include <system_error>

namespace cflrun::io {

/// Flushes the closed file `from` to the disk (fsync), then renames it to `to` in one step,
/// replacing a file there: readers of `to` see the old file or the whole new one, never a part.
/// Used for completed result files and checkpoints (results/README.md, "Files of a run").
/// @return the rename's error (empty on success); `from` is left in place on failure.
std::error_code durable_rename(const std::filesystem::path& from,
                               const std::filesystem::path& to) noexcept;

}  // namespace cflrun::io
