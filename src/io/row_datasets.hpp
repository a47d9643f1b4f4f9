#pragma once
// Private to src/io: the per-round datasets of a result file while a ResultWriter holds it (their
// handles and a copy of every row appended), built from round_fields() and the algorithm's extras.
#include <filesystem>
#include <string>
#include <vector>

#include <torch/types.h>

#include <cflrun/io/hdf5_handle.hpp>
#include <cflrun/io/result_writer.hpp>
#include <cflrun/io/tensor_store.hpp>

namespace cflrun::io::detail {

/// One per-round dataset: where it is, its element type and row shape, its open handle, and a copy
/// of every row appended (what the checkpoint keeps and the completed file is verified against).
struct RowDataset {
  std::string path;
  torch::ScalarType dtype;
  std::vector<hsize_t> row_shape;
  bool compress;
  Hdf5Handle handle;
  std::vector<unsigned char> kept;

  /// Bytes of one row.
  std::size_t row_bytes() const;
};

/// Every per-round dataset of `layout`, in a fixed order: the run-level ones (round_fields), then
/// the algorithm's.
std::vector<RowDataset> row_datasets_of(const ResultLayout& layout);

/// The kept rows of `dataset` in `rows`, checked against its type and row shape.
/// @throws DataError naming `path` if missing or of another type or shape.
torch::Tensor checked_rows(const NamedTensors& rows, const RowDataset& dataset,
                           const std::filesystem::path& path);

/// The rows of a dataset as a [T, row_shape...] tensor.
torch::Tensor kept_tensor(const RowDataset& dataset);

}  // namespace cflrun::io::detail
