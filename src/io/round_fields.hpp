#pragma once
// Private to src/io: the run-level per-round datasets of a result file, declared once. From this
// one list the writer creates each dataset (path, element type, row shape, compression), checks a
// RoundRecord's rows and appends them; the checkpoint's kept rows follow the same list. A new
// run-level dataset is one line in round_fields() (round_fields.cpp, with its path in
// result_schema.hpp) and its fill, RoundRecord::set (src/run/round_recorder.cpp).
#include <cstddef>
#include <string>
#include <vector>

#include <hdf5.h>
#include <torch/types.h>

#include <cflrun/io/result_writer.hpp>

namespace cflrun::io::detail {

/// A size of the run that a row extent stands for.
enum class Extent { kPhases, kClients, kModels, kSources };

/// One run-level per-round dataset.
struct RoundField {
  const char* path;                      ///< e.g. "/rounds/ari" (schema::kAri).
  torch::ScalarType dtype;               ///< element type of the dataset and of RoundRecord rows.
  std::vector<Extent> row;               ///< shape of one round's row; {} = one value.
  bool compress;                         ///< deflate its chunks (rows of M values or more).
  bool (*present)(const ResultLayout&);  ///< whether a run of this layout has the dataset.
};

/// Every run-level per-round dataset, in the order they are created and appended.
const std::vector<RoundField>& round_fields();

/// The row shape of `field` in a run of `layout`, e.g. {M, K} for /clients/loss_vectors.
std::vector<hsize_t> row_shape(const RoundField& field, const ResultLayout& layout);

/// The number of values `field` holds per round in a run of `layout` (0 where not present).
std::size_t row_values(const RoundField& field, const ResultLayout& layout);

/// The row in words for an error message, e.g. "10 clients x 5 models, row-major", or
/// "one per timing phase: query, plan, ...", or "this run's layout has none".
std::string describe_row(const RoundField& field, const ResultLayout& layout);

}  // namespace cflrun::io::detail
