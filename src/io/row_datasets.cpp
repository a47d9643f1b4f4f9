#include "row_datasets.hpp"

#include <cstring>

#include <cflrun/core/error.hpp>

#include "round_fields.hpp"

namespace cflrun::io::detail {

std::size_t RowDataset::row_bytes() const {
  std::size_t bytes = torch::elementSize(dtype);
  for (const auto extent : row_shape) {
    bytes *= static_cast<std::size_t>(extent);
  }
  return bytes;
}

std::vector<RowDataset> row_datasets_of(const ResultLayout& layout) {
  std::vector<RowDataset> all;
  for (const auto& field : round_fields()) {
    if (field.present(layout)) {
      all.push_back({field.path, field.dtype, row_shape(field, layout), field.compress, {}, {}});
    }
  }
  for (const auto& dataset : layout.extra_datasets) {
    all.push_back({dataset.path,
                   torch::kFloat32,
                   std::vector<hsize_t>(dataset.shape.begin(), dataset.shape.end()),
                   true,
                   {},
                   {}});
  }
  return all;
}

torch::Tensor checked_rows(const NamedTensors& rows, const RowDataset& dataset,
                           const std::filesystem::path& path) {
  const auto found = rows.find(dataset.path);
  std::vector<std::int64_t> row(dataset.row_shape.begin(), dataset.row_shape.end());
  if (found == rows.end() || found->second.scalar_type() != dataset.dtype ||
      found->second.dim() != 1 + static_cast<std::int64_t>(row.size()) ||
      found->second.sizes().slice(1) != c10::IntArrayRef(row)) {
    throw DataError("the kept rounds for " + path.string() + " lack " + dataset.path + " of " +
                    c10::toString(dataset.dtype) + " rows " + c10::str(row) +
                    "; they were written by another configuration");
  }
  return found->second.contiguous();
}

torch::Tensor kept_tensor(const RowDataset& dataset) {
  std::vector<std::int64_t> shape{
      static_cast<std::int64_t>(dataset.kept.size() / dataset.row_bytes())};
  shape.insert(shape.end(), dataset.row_shape.begin(), dataset.row_shape.end());
  auto tensor = torch::empty(shape, dataset.dtype);
  std::memcpy(tensor.data_ptr(), dataset.kept.data(), dataset.kept.size());
  return tensor;
}

}  // namespace cflrun::io::detail
