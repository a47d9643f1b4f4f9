#include "round_fields.hpp"

#include <cflrun/io/result_schema.hpp>

namespace cflrun::io::detail {
namespace {

bool always(const ResultLayout& /*layout*/) { return true; }
bool with_loss_vectors(const ResultLayout& layout) { return layout.has_loss_vectors; }
bool with_sources(const ResultLayout& layout) { return layout.num_sources > 0; }
bool with_changing_population(const ResultLayout& layout) { return layout.changing_population; }
bool with_train_accuracy(const ResultLayout& layout) { return layout.has_train_accuracy; }

/// The declaration of one field whose elements are T's.
template <typename T>
RoundField field(const char* path, std::vector<Extent> row, bool compress,
                 bool (*present)(const ResultLayout&) = always) {
  return {path, c10::CppTypeToScalarType<T>::value, std::move(row), compress, present};
}

std::size_t extent_size(Extent extent, const ResultLayout& layout) {
  switch (extent) {
    case Extent::kPhases:
      return layout.phase_names.size();
    case Extent::kClients:
      return static_cast<std::size_t>(layout.num_clients);
    case Extent::kModels:
      return static_cast<std::size_t>(layout.num_models);
    case Extent::kSources:
      return static_cast<std::size_t>(layout.num_sources);
  }
  return 0;
}

std::string extent_words(Extent extent, const ResultLayout& layout) {
  static const char* const kWords[] = {" timing phases", " clients", " models", " sources"};
  return std::to_string(extent_size(extent, layout)) + kWords[static_cast<int>(extent)];
}

}  // namespace

const std::vector<RoundField>& round_fields() {
  using E = Extent;
  static const std::vector<RoundField> fields{
      field<double>(schema::kAri, {}, false),
      field<double>(schema::kAccuracy, {}, false),
      field<double>(schema::kAccuracyWeighted, {}, false),
      field<double>(schema::kAccuracyTrain, {}, false, with_train_accuracy),
      field<double>(schema::kTestLoss, {}, false),
      field<double>(schema::kTrainLoss, {}, false),
      field<double>(schema::kWorkerComputeSeconds, {}, false),
      field<std::int64_t>(schema::kBytesSent, {}, false),
      field<std::int64_t>(schema::kBytesReceived, {}, false),
      field<double>(schema::kSeconds, {E::kPhases}, false),
      field<int>(schema::kAssignment, {E::kClients}, true),
      field<float>(schema::kClientAccuracy, {E::kClients}, true),
      field<float>(schema::kClientTestLoss, {E::kClients}, true),
      field<int>(schema::kLiveModels, {}, false),
      field<float>(schema::kLossVectors, {E::kClients, E::kModels}, true, with_loss_vectors),
      field<float>(schema::kSourceAccuracy, {E::kModels, E::kSources}, true, with_sources),
      field<float>(schema::kSourceLoss, {E::kModels, E::kSources}, true, with_sources),
      field<int>(schema::kTrueCluster, {E::kClients}, true, with_changing_population),
      field<int>(schema::kAvailable, {E::kClients}, true, with_changing_population),
  };
  return fields;
}

std::vector<hsize_t> row_shape(const RoundField& field, const ResultLayout& layout) {
  std::vector<hsize_t> shape;
  for (const auto extent : field.row) {
    shape.push_back(static_cast<hsize_t>(extent_size(extent, layout)));
  }
  return shape;
}

std::size_t row_values(const RoundField& field, const ResultLayout& layout) {
  if (!field.present(layout)) {
    return 0;
  }
  std::size_t count = 1;
  for (const auto extent : field.row) {
    count *= extent_size(extent, layout);
  }
  return count;
}

std::string describe_row(const RoundField& field, const ResultLayout& layout) {
  if (!field.present(layout)) {
    return "this run's layout has none";
  }
  if (field.row.size() == 1 && field.row[0] == Extent::kPhases) {
    std::string names;
    for (const auto& name : layout.phase_names) {
      names += (names.empty() ? "" : ", ") + name;
    }
    return "one per timing phase: " + names;
  }
  std::string words;
  for (const auto extent : field.row) {
    words += (words.empty() ? "" : " x ") + extent_words(extent, layout);
  }
  return words.empty() ? "one value per round"
                       : words + (field.row.size() > 1 ? ", row-major" : "");
}

}  // namespace cflrun::io::detail
