#include <cflrun/io/result_writer.hpp>

#include <algorithm>
#include <cstring>
#include <map>
#include <system_error>

#include <c10/util/accumulate.h>

#include <cflrun/core/error.hpp>
#include <cflrun/io/durable_rename.hpp>
#include <cflrun/io/file_checksum.hpp>
#include <cflrun/io/hdf5_attribute.hpp>
#include <cflrun/io/hdf5_dataset.hpp>
#include <cflrun/io/hdf5_file.hpp>
#include <cflrun/io/hdf5_handle.hpp>
#include <cflrun/io/hdf5_tensor.hpp>
#include <cflrun/io/result_rows.hpp>
#include <cflrun/io/result_schema.hpp>

#include "round_fields.hpp"
#include "row_datasets.hpp"

namespace cflrun::io {
namespace {

void validate_layout(const ResultLayout& layout) {
  if (layout.num_clients < 1 || layout.num_models < 1 || layout.phase_names.empty() ||
      layout.planned_rounds < 0 || layout.num_sources < 0) {
    throw ShapeError(
        "result file layout needs at least 1 client, 1 model, 1 timing phase and "
        ">= 0 planned rounds, but got " +
        std::to_string(layout.num_clients) + " clients, " + std::to_string(layout.num_models) +
        " models, " + std::to_string(layout.phase_names.size()) + " phases and " +
        std::to_string(layout.planned_rounds) + " planned rounds");
  }
}

/// Refuses to replace an existing file unless asked to, and creates the parent directories.
void prepare_output_path(const std::filesystem::path& path, bool overwrite) {
  std::error_code error;
  if (!overwrite && std::filesystem::exists(path, error)) {
    throw ConfigError("--out " + path.string() +
                      " already exists; pass --overwrite to replace it or choose another --out");
  }
  const std::filesystem::path parent = path.parent_path();
  if (!parent.empty() && !std::filesystem::create_directories(parent, error) && error) {
    throw ConfigError("cannot create directory " + parent.string() + " for --out " + path.string() +
                      ": " + error.message() + "; choose another --out");
  }
}

/// Checks that `record` holds `path`'s row: `dtype` elements, `count` of them (`shape` says which).
void check_row(const RoundRecord& record, const std::string& path, torch::ScalarType dtype,
               std::size_t count, const std::string& shape) {
  const auto* row = record.find(path);
  const std::string where = "ResultWriter::append_round: the round's " + path;
  if (row == nullptr) {
    throw ShapeError(where + " is missing (" + shape + ")");
  }
  if (row->scalar_type() != dtype) {
    throw ShapeError(where + " holds " + c10::toString(row->scalar_type()) +
                     " values but must hold " + c10::toString(dtype));
  }
  if (static_cast<std::size_t>(row->numel()) != count) {
    throw ShapeError(where + " has " + std::to_string(row->numel()) + " values but must have " +
                     std::to_string(count) + " (" + shape + ")");
  }
}

void create_group(hid_t file, const char* name) {
  make_handle(H5Gcreate2(file, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose,
              "cannot create group " + std::string(name) + " in " + describe_object(file));
}

/// Creates the group holding `path` (one level below the root) unless it exists.
void create_parent_group(hid_t file, const std::string& path) {
  const auto parent = path.substr(0, path.find_last_of('/'));
  if (!parent.empty() && H5Lexists(file, parent.c_str(), H5P_DEFAULT) <= 0) {
    create_group(file, parent.c_str());
  }
}

/// Sets the status of a closed result file, ignoring failures.
void mark_file_failed(const std::filesystem::path& path, const std::string& message) noexcept {
  try {
    const Hdf5Handle file = open_hdf5_file_read_write(path);
    write_string_attribute(file.get(), schema::kStatus, schema::kStatusFailedPrefix + message);
  } catch (...) {
    // Best effort: the caller reports the problem itself.
  }
}

}  // namespace

struct ResultWriter::Impl {
  std::filesystem::path path;
  ResultLayout layout;
  Hdf5Handle file;  // Declared first so that it is closed after the datasets below.
  std::vector<detail::RowDataset> rows;
  std::int64_t completed_rounds = 0;

  /// The root attributes, groups and per-round datasets of a new file.
  void create_structure();
  void create_datasets();
  void validate(const RoundRecord& record) const;
  /// Appends one row to every dataset (values in `rows` order), then completed_rounds.
  /// @throws Hdf5Error saying how many finished rounds the file keeps.
  void append(const std::vector<const void*>& values);
  NamedTensors kept_rows() const;
  /// What a round can add to the file: every row uncompressed (a chunk each), room for the chunk
  /// index entries and object headers HDF5 rewrites, and a margin (bytes). A round of 200 clients
  /// added 4.7 KB; this reserves 28 KB.
  std::uint64_t round_growth_bound() const {
    constexpr std::uint64_t kMetadataBytesPerDataset = 1024;
    constexpr std::uint64_t kMarginBytes = 16384;
    std::uint64_t bytes = kMarginBytes;
    for (const auto& dataset : rows) {
      bytes += dataset.row_bytes() + kMetadataBytesPerDataset;
    }
    return bytes;
  }
  void flush() const {
    check_hdf5(H5Fflush(file.get(), H5F_SCOPE_GLOBAL), "cannot flush " + path.string());
  }
  void set_status(const std::string& status) const {
    write_string_attribute(file.get(), schema::kStatus, status);
    flush();
  }
};

void ResultWriter::Impl::create_datasets() {
  const hid_t f = file.get();
  rows = detail::row_datasets_of(layout);
  for (auto& dataset : rows) {
    create_parent_group(f, dataset.path);
    dataset.handle = create_row_dataset(f, dataset.path, hdf5_types_of(dataset.dtype).file,
                                        dataset.row_shape, dataset.compress);
    if (dataset.path == schema::kSeconds) {
      write_string_array_attribute(dataset.handle.get(), schema::kPhasesAttribute,
                                   layout.phase_names);
    }
  }
}

void ResultWriter::Impl::append(const std::vector<const void*>& values) {
  // A full disk is met here, before any dataset grows, rather than half way through the round.
  reserve_file_space(file.get(), path, round_growth_bound());
  try {
    for (std::size_t i = 0; i < rows.size(); ++i) {
      append_row(rows[i].handle.get(), hdf5_types_of(rows[i].dtype).memory, values[i]);
    }
    // completed_rounds is written last, once every row of the round is on disk: a failed write
    // (the reservation fell short) leaves the file claiming only the rounds before. The rows of
    // the failed round are not cut off again: on a full disk that damaged a finished round's rows
    // (measured with tests/faults/disk_full.sh), so readers take completed_rounds rows.
    flush();
    write_int64_attribute(file.get(), schema::kCompletedRounds, completed_rounds + 1);
    flush();
  } catch (const Hdf5Error& e) {
    throw Hdf5Error(std::string(e.what()) + "; " + path.string() + " keeps its " +
                    std::to_string(completed_rounds) +
                    " finished round(s) (completed_rounds; a row after them is not valid)");
  }
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto* bytes = static_cast<const unsigned char*>(values[i]);
    rows[i].kept.insert(rows[i].kept.end(), bytes, bytes + rows[i].row_bytes());
  }
  ++completed_rounds;
}

NamedTensors ResultWriter::Impl::kept_rows() const {
  NamedTensors kept;
  for (const auto& dataset : rows) {
    kept.emplace(dataset.path, detail::kept_tensor(dataset));
  }
  return kept;
}

void ResultWriter::Impl::validate(const RoundRecord& record) const {
  for (const auto& field : detail::round_fields()) {
    if (field.present(layout)) {
      check_row(record, field.path, field.dtype, detail::row_values(field, layout),
                detail::describe_row(field, layout));
    }
  }
  for (const auto& dataset : layout.extra_datasets) {
    check_row(record, dataset.path, torch::kFloat32,
              static_cast<std::size_t>(c10::multiply_integers(dataset.shape)),
              "the algorithm's extra dataset, rows " + c10::str(dataset.shape));
  }
  for (const auto& [path, row] : record.rows()) {
    if (std::none_of(rows.begin(), rows.end(), [&](const auto& d) { return d.path == path; })) {
      throw ShapeError("ResultWriter::append_round: the round sets " + path +
                       ", which this run's layout has no dataset for");
    }
  }
}

ResultWriter::ResultWriter(const std::filesystem::path& path, const ResultLayout& layout,
                           bool overwrite)
    : impl_(std::make_unique<Impl>()) {
  validate_layout(layout);
  prepare_output_path(path, overwrite);
  impl_->path = path;
  impl_->layout = layout;
  try {
    impl_->file = create_hdf5_file(path, overwrite, kChecksumBlockBytes);
    impl_->create_structure();
  } catch (...) {
    impl_.reset();  // a file that could not even be set up (e.g. a full disk, even 0 bytes) is
                    // removed
    std::error_code ignored;
    std::filesystem::remove(path, ignored);
    throw;
  }
}

void ResultWriter::Impl::create_structure() {
  const hid_t f = file.get();
  write_int64_attribute(f, schema::kSchemaVersionAttribute, schema::kSchemaVersion);
  write_int64_attribute(f, schema::kNumClients, layout.num_clients);
  write_int64_attribute(f, schema::kNumModels, layout.num_models);
  write_int64_attribute(f, schema::kPlannedRounds, layout.planned_rounds);
  write_int64_attribute(f, schema::kCompletedRounds, 0);
  write_string_attribute(f, schema::kStatus, schema::kStatusRunning);
  for (const char* group : {schema::kConfigGroup, schema::kRoundsGroup, schema::kClientsGroup}) {
    create_group(f, group);
  }
  create_datasets();
  flush();
}

ResultWriter::ResultWriter() = default;
ResultWriter::~ResultWriter() = default;
ResultWriter::ResultWriter(ResultWriter&&) noexcept = default;
ResultWriter& ResultWriter::operator=(ResultWriter&&) noexcept = default;

void ResultWriter::write_config(
    const std::vector<std::pair<std::string, std::string>>& attributes) {
  const Hdf5Handle group =
      make_handle(H5Gopen2(impl_->file.get(), schema::kConfigGroup, H5P_DEFAULT), H5Gclose,
                  "cannot open group /config in " + impl_->path.string());
  for (const auto& [name, value] : attributes) {
    write_string_attribute(group.get(), name, value);
  }
  impl_->flush();
}

void ResultWriter::write_summary(const std::vector<std::pair<std::string, double>>& figures) {
  const hid_t file = impl_->file.get();
  const Hdf5Handle group =
      H5Lexists(file, schema::kSummaryGroup, H5P_DEFAULT) > 0
          ? make_handle(H5Gopen2(file, schema::kSummaryGroup, H5P_DEFAULT), H5Gclose,
                        "cannot open group /summary in " + impl_->path.string())
          : make_handle(
                H5Gcreate2(file, schema::kSummaryGroup, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                H5Gclose, "cannot create group /summary in " + impl_->path.string());
  for (const auto& [name, value] : figures) {
    write_double_attribute(group.get(), name, value);
  }
  impl_->flush();
}

void ResultWriter::write_true_clusters(const std::vector<int>& true_cluster) {
  const auto clients = static_cast<std::size_t>(impl_->layout.num_clients);
  if (true_cluster.size() != clients) {
    throw ShapeError("ResultWriter::write_true_clusters: got " +
                     std::to_string(true_cluster.size()) + " cluster ids but the run has " +
                     std::to_string(clients) + " clients; pass one per client");
  }
  write_dataset(impl_->file.get(), schema::kTrueCluster, H5T_STD_I32LE, H5T_NATIVE_INT,
                {static_cast<hsize_t>(clients)}, true_cluster.data());
  impl_->flush();
}

void ResultWriter::write_change_rounds(const std::vector<int>& rounds) {
  if (!impl_->layout.changing_population) {
    throw ShapeError(
        "ResultWriter::write_change_rounds: the layout is not a changing population's; set "
        "ResultLayout::changing_population");
  }
  const hid_t file = impl_->file.get();
  if (H5Lexists(file, schema::kPopulationGroup, H5P_DEFAULT) <= 0) {
    make_handle(H5Gcreate2(file, schema::kPopulationGroup, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                H5Gclose, "cannot create group /population in " + impl_->path.string());
  }
  write_dataset(file, schema::kChangeRounds, H5T_STD_I32LE, H5T_NATIVE_INT,
                {static_cast<hsize_t>(rounds.size())}, rounds.data());
  impl_->flush();
}

void ResultWriter::write_mixture(const std::vector<double>& mixture) {
  const auto clients = static_cast<std::size_t>(impl_->layout.num_clients);
  const auto sources = static_cast<std::size_t>(impl_->layout.num_sources);
  if (sources == 0 || mixture.size() != clients * sources) {
    throw ShapeError("ResultWriter::write_mixture: got " + std::to_string(mixture.size()) +
                     " shares for " + std::to_string(clients) + " clients and " +
                     std::to_string(sources) +
                     " sources; pass M x S shares of a mixture partition");
  }
  write_dataset(impl_->file.get(), schema::kMixture, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE,
                {static_cast<hsize_t>(clients), static_cast<hsize_t>(sources)}, mixture.data());
  impl_->flush();
}

void ResultWriter::append_round(const RoundRecord& record) {
  Impl& w = *impl_;
  w.validate(record);
  std::vector<const void*> ordered;
  for (const auto& dataset : w.rows) {
    ordered.push_back(record.find(dataset.path)->data_ptr());
  }
  w.append(ordered);
}

void ResultWriter::append_rows(const NamedTensors& rows) {
  Impl& w = *impl_;
  std::vector<torch::Tensor> tensors;
  for (const auto& dataset : w.rows) {
    tensors.push_back(detail::checked_rows(rows, dataset, w.path));
  }
  const auto count = tensors.empty() ? 0 : tensors.front().size(0);
  for (const auto& tensor : tensors) {
    if (tensor.size(0) != count) {
      throw DataError("the kept rounds for " + w.path.string() +
                      " differ in length between datasets (" + std::to_string(count) + " and " +
                      std::to_string(tensor.size(0)) + "); they are damaged");
    }
  }
  for (std::int64_t t = 0; t < count; ++t) {
    std::vector<const void*> values;
    for (const auto& tensor : tensors) {
      values.push_back(static_cast<const unsigned char*>(tensor.data_ptr()) +
                       t * tensor.stride(0) * tensor.element_size());
    }
    w.append(values);
  }
}

NamedTensors ResultWriter::kept_rows() const { return impl_->kept_rows(); }

std::int64_t ResultWriter::completed_rounds() const { return impl_->completed_rounds; }

void ResultWriter::complete_into(const std::filesystem::path& final_path) {
  impl_->set_status(schema::kStatusComplete);
  const auto written = impl_->path;
  const auto kept = impl_->kept_rows();
  impl_.reset();  // closes every dataset, then the file
  // Verified on disk before it is published: every round read back equals what was appended, and
  // the sealed bytes read back equal their checksum.
  const auto difference = row_difference(written, kept, /*whole=*/true);
  if (!difference.empty()) {
    mark_file_failed(written, "verification failed: " + difference);
    throw Hdf5Error("the result file read back differs from the rounds written (" + difference +
                    "); it stays as " + written.string() +
                    "; continue with --resume (from the checkpoint) or run "
                    "again with --overwrite");
  }
  seal_file(written);
  const auto check = check_file_checksum(written);
  if (check.state != ChecksumState::kVerified) {
    throw Hdf5Error(check.problem + " after sealing; it stays as " + written.string() +
                    "; run again with --overwrite");
  }
  const auto error = durable_rename(written, final_path);
  if (error) {
    throw Hdf5Error("cannot rename " + written.string() + " to " + final_path.string() + ": " +
                    error.message() + "; the complete result is in " + written.string());
  }
}

void ResultWriter::mark_interrupted(const std::string& message) noexcept {
  set_status_best_effort(schema::kStatusInterruptedPrefix + message);
}

void ResultWriter::mark_failed(const std::string& message) noexcept {
  set_status_best_effort(schema::kStatusFailedPrefix + message);
}

void ResultWriter::set_status_best_effort(const std::string& status) noexcept {
  try {
    if (impl_) {
      impl_->set_status(status);
    }
  } catch (...) {
    // Best effort: the caller is already reporting the real error or the interruption.
  }
}

}  // namespace cflrun::io
