#pragma once
/// @file
/// Comparing a result file's per-round datasets with the rows a run kept in memory (the rows a
/// checkpoint carries, ResultWriter::kept_rows): how a completed file is verified on disk before
/// it is published, and how --resume tells whether an interrupted run's partial file is intact.

#include <filesystem>
#include <string>

#include <cflrun/io/tensor_store.hpp>

namespace cflrun::io {

/// The first difference between the file at `path` and `rows` (dataset path, e.g.
/// "/rounds/ari" -> [T, row...] tensor): a dataset of `rows` missing from the file, of another
/// type or row shape, with fewer than T rows (or, if `whole`, not exactly T), or whose first T rows
/// differ in any bit (NaN equals NaN of the same bits); an unreadable file or dataset.
/// @return "" if there is none; else one line naming the file and the dataset. Never throws.
std::string row_difference(const std::filesystem::path& path, const NamedTensors& rows,
                           bool whole) noexcept;

}  // namespace cflrun::io
