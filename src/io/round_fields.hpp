#pragma once
// Private to src/io: the run-level per-round datasets of a result file, declared once. From this
// one list the writer creates each dataset (path, element type, row shape, compression), checks a
// RoundRecord's value counts and appends its row; the checkpoint's kept rows follow the same list.
// A new run-level dataset is a RoundRecord member (result_writer.hpp), one line in round_fields()
// (round_fields.cpp) and its fill (src/run/round_recorder.cpp); a reader names its path.
#include <cstddef>
#include <string>
#include <vector>

#include <hdf5.h>
#include <torch/types.h>

#include <cflrun/io/result_writer.hpp>

namespace cflrun::io::detail {

/// A size of the run that a row extent stands for.
enum class Extent { kPhases, kClients, kModels, kSources };

/// One round's values of a RoundRecord member: where they start and how many there are.
struct FieldValues {
  const void* data = nullptr;
  std::size_t count = 0;
};

/// One run-level per-round dataset.
struct RoundField {
  const char* path;                           ///< e.g. "/rounds/ari" (schema::kAri).
  const char* member;                         ///< the RoundRecord member, for messages.
  torch::ScalarType dtype;                    ///< element type, that of the member.
  std::vector<Extent> row;                    ///< shape of one round's row; {} = one value.
  bool compress;                              ///< deflate its chunks (rows of M values or more).
  bool (*present)(const ResultLayout&);       ///< whether a run of this layout has the dataset.
  FieldValues (*values)(const RoundRecord&);  ///< the member's values in a record.
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
