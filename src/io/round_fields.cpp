#include "round_fields.hpp"

#include <type_traits>

#include <cflrun/io/result_schema.hpp>

namespace cflrun::io::detail {
namespace {

template <typename T>
struct Element {
  using type = T;
};
template <typename T>
struct Element<std::vector<T>> {
  using type = T;
};

/// The values of RoundRecord member `Member`: one number, or a vector's elements.
template <auto Member>
FieldValues values_of(const RoundRecord& record) {
  const auto& value = record.*Member;
  if constexpr (std::is_arithmetic_v<std::decay_t<decltype(value)>>) {
    return {&value, 1};
  } else {
    return {value.data(), value.size()};
  }
}

bool always(const ResultLayout& /*layout*/) { return true; }
bool with_loss_vectors(const ResultLayout& layout) { return layout.has_loss_vectors; }
bool with_sources(const ResultLayout& layout) { return layout.num_sources > 0; }

/// The declaration of one field; its element type is the member's.
template <auto Member>
RoundField field(const char* path, const char* member, std::vector<Extent> row, bool compress,
                 bool (*present)(const ResultLayout&) = always) {
  using Value = std::decay_t<decltype(std::declval<const RoundRecord&>().*Member)>;
  return {path,
          member,
          c10::CppTypeToScalarType<typename Element<Value>::type>::value,
          std::move(row),
          compress,
          present,
          &values_of<Member>};
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
  using R = RoundRecord;
  static const std::vector<RoundField> fields{
      field<&R::ari>(schema::kAri, "ari", {}, false),
      field<&R::accuracy>(schema::kAccuracy, "accuracy", {}, false),
      field<&R::test_loss>(schema::kTestLoss, "test_loss", {}, false),
      field<&R::train_loss>(schema::kTrainLoss, "train_loss", {}, false),
      field<&R::worker_compute_seconds>(schema::kWorkerComputeSeconds, "worker_compute_seconds", {},
                                        false),
      field<&R::bytes_sent>(schema::kBytesSent, "bytes_sent", {}, false),
      field<&R::bytes_received>(schema::kBytesReceived, "bytes_received", {}, false),
      field<&R::seconds>(schema::kSeconds, "seconds", {E::kPhases}, false),
      field<&R::assignment>(schema::kAssignment, "assignment", {E::kClients}, true),
      field<&R::client_accuracy>(schema::kClientAccuracy, "client_accuracy", {E::kClients}, true),
      field<&R::client_test_loss>(schema::kClientTestLoss, "client_test_loss", {E::kClients}, true),
      field<&R::live_models>(schema::kLiveModels, "live_models", {}, false),
      field<&R::loss_vectors>(schema::kLossVectors, "loss_vectors", {E::kClients, E::kModels}, true,
                              with_loss_vectors),
      field<&R::source_accuracy>(schema::kSourceAccuracy, "source_accuracy",
                                 {E::kModels, E::kSources}, true, with_sources),
      field<&R::source_loss>(schema::kSourceLoss, "source_loss", {E::kModels, E::kSources}, true,
                             with_sources),
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
