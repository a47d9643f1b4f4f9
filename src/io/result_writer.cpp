#include <cflrun/io/result_writer.hpp>

#include <map>
#include <system_error>

#include <cflrun/core/error.hpp>
#include <cflrun/io/durable_rename.hpp>
#include <cflrun/io/hdf5_attribute.hpp>
#include <cflrun/io/hdf5_dataset.hpp>
#include <cflrun/io/hdf5_file.hpp>
#include <cflrun/io/hdf5_handle.hpp>
#include <cflrun/io/result_schema.hpp>

namespace cflrun::io {
namespace {

std::string joined(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& name : names) {
    text += (text.empty() ? "" : ", ") + name;
  }
  return text;
}

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

void check_size(const char* field, std::size_t found, std::size_t expected,
                const std::string& reason) {
  if (found != expected) {
    throw ShapeError("ResultWriter::append_round: RoundRecord::" + std::string(field) + " has " +
                     std::to_string(found) + " values but must have " + std::to_string(expected) +
                     " (" + reason + ")");
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

}  // namespace

struct ResultWriter::Impl {
  std::filesystem::path path;
  ResultLayout layout;
  Hdf5Handle file;  // Declared first so that it is closed after the datasets below.
  Hdf5Handle ari, accuracy, test_loss, train_loss, worker_compute_seconds, seconds, bytes_sent, bytes_received;
  Hdf5Handle assignment, loss_vectors, client_accuracy, client_test_loss;
  Hdf5Handle live_models, source_accuracy, source_loss;
  std::map<std::string, Hdf5Handle> extra;  // path -> dataset
  std::int64_t completed_rounds = 0;

  /// A per-round dataset of the layout: its handle member, path, file type and row shape.
  struct RowDataset {
    Hdf5Handle* handle;
    std::string path;
    hid_t type;
    std::vector<hsize_t> row_shape;
    bool compress;
  };
  /// Every per-round dataset the layout has (the one list creating and reopening share).
  std::vector<RowDataset> row_datasets();
  /// The root attributes, groups and per-round datasets of a new file.
  void create_structure();
  void create_datasets();
  /// Opens every dataset of an existing file and cuts it to `rows` rows (resume).
  void reopen_datasets(std::int64_t rows);
  void validate(const RoundRecord& record) const;
  void flush() const {
    check_hdf5(H5Fflush(file.get(), H5F_SCOPE_GLOBAL), "cannot flush " + path.string());
  }
  void set_status(const std::string& status) const {
    write_string_attribute(file.get(), schema::kStatus, status);
    flush();
  }
};

std::vector<ResultWriter::Impl::RowDataset> ResultWriter::Impl::row_datasets() {
  const auto clients = static_cast<hsize_t>(layout.num_clients);
  const auto models = static_cast<hsize_t>(layout.num_models);
  const auto phases = static_cast<hsize_t>(layout.phase_names.size());
  std::vector<RowDataset> all{
      {&ari, schema::kAri, H5T_IEEE_F64LE, {}, false},
      {&accuracy, schema::kAccuracy, H5T_IEEE_F64LE, {}, false},
      {&test_loss, schema::kTestLoss, H5T_IEEE_F64LE, {}, false},
      {&train_loss, schema::kTrainLoss, H5T_IEEE_F64LE, {}, false},
      {&worker_compute_seconds, schema::kWorkerComputeSeconds, H5T_IEEE_F64LE, {}, false},
      {&bytes_sent, schema::kBytesSent, H5T_STD_I64LE, {}, false},
      {&bytes_received, schema::kBytesReceived, H5T_STD_I64LE, {}, false},
      {&seconds, schema::kSeconds, H5T_IEEE_F64LE, {phases}, false},
      {&assignment, schema::kAssignment, H5T_STD_I32LE, {clients}, true},
      {&client_accuracy, schema::kClientAccuracy, H5T_IEEE_F32LE, {clients}, true},
      {&client_test_loss, schema::kClientTestLoss, H5T_IEEE_F32LE, {clients}, true},
      {&live_models, schema::kLiveModels, H5T_STD_I32LE, {}, false}};
  if (layout.has_loss_vectors) {
    all.push_back({&loss_vectors, schema::kLossVectors, H5T_IEEE_F32LE, {clients, models}, true});
  }
  if (layout.num_sources > 0) {
    const auto sources = static_cast<hsize_t>(layout.num_sources);
    all.push_back({&source_accuracy, schema::kSourceAccuracy, H5T_IEEE_F32LE, {models, sources}, true});
    all.push_back({&source_loss, schema::kSourceLoss, H5T_IEEE_F32LE, {models, sources}, true});
  }
  for (const auto& dataset : layout.extra_datasets) {
    all.push_back({&extra[dataset.path], dataset.path, H5T_IEEE_F32LE,
                   std::vector<hsize_t>(dataset.shape.begin(), dataset.shape.end()), true});
  }
  return all;
}

void ResultWriter::Impl::create_datasets() {
  const hid_t f = file.get();
  for (auto& dataset : row_datasets()) {
    create_parent_group(f, dataset.path);
    *dataset.handle = create_row_dataset(f, dataset.path, dataset.type, dataset.row_shape, dataset.compress);
  }
  write_string_array_attribute(seconds.get(), schema::kPhasesAttribute, layout.phase_names);
}

void ResultWriter::Impl::reopen_datasets(std::int64_t rows) {
  for (auto& dataset : row_datasets()) {
    *dataset.handle = make_handle(H5Dopen2(file.get(), dataset.path.c_str(), H5P_DEFAULT), H5Dclose,
                                  "cannot open " + dataset.path + " of " + path.string() +
                                      " to resume; the file was written by another configuration");
    auto shape = dataset_shape(dataset.handle->get());
    if (shape.empty() || shape.front() < static_cast<hsize_t>(rows)) {
      throw DataError(path.string() + ": " + dataset.path + " holds fewer than the checkpoint's " +
                      std::to_string(rows) + " rounds; the file does not belong to the checkpoint");
    }
    shape.front() = static_cast<hsize_t>(rows);  // rounds written after the checkpoint are redone
    check_hdf5(H5Dset_extent(dataset.handle->get(), shape.data()), "cannot shrink " + dataset.path);
  }
}

void ResultWriter::Impl::validate(const RoundRecord& record) const {
  const std::size_t clients = static_cast<std::size_t>(layout.num_clients);
  const std::string m = std::to_string(clients) + " clients";
  check_size("seconds", record.seconds.size(), layout.phase_names.size(),
             "one per timing phase: " + joined(layout.phase_names));
  check_size("assignment", record.assignment.size(), clients, m);
  check_size("client_accuracy", record.client_accuracy.size(), clients, m);
  check_size("client_test_loss", record.client_test_loss.size(), clients, m);
  const std::size_t loss_values =
      layout.has_loss_vectors ? clients * static_cast<std::size_t>(layout.num_models) : 0;
  check_size("loss_vectors", record.loss_vectors.size(), loss_values,
             layout.has_loss_vectors
                 ? m + " x " + std::to_string(layout.num_models) + " models, row-major"
                 : "this run's layout has no loss vectors");
  const std::size_t models = static_cast<std::size_t>(layout.num_models);
  check_size("extra", record.extra.size(), layout.extra_datasets.size(), "one per extra dataset of the layout");
  for (const auto& dataset : layout.extra_datasets) {
    const auto found = record.extra.find(dataset.path);
    std::size_t values = 1;
    for (auto extent : dataset.shape) {
      values *= static_cast<std::size_t>(extent);
    }
    check_size(dataset.path.c_str(), found == record.extra.end() ? 0 : found->second.size(), values,
               "the extra dataset's row");
  }
  const std::size_t per_source = models * static_cast<std::size_t>(layout.num_sources);
  const std::string sources = layout.num_sources > 0 ? "models x sources" : "this run has no mixture sources";
  check_size("source_accuracy", record.source_accuracy.size(), per_source, sources);
  check_size("source_loss", record.source_loss.size(), per_source, sources);
}

ResultWriter::ResultWriter(const std::filesystem::path& path, const ResultLayout& layout,
                           bool overwrite)
    : impl_(std::make_unique<Impl>()) {
  validate_layout(layout);
  prepare_output_path(path, overwrite);
  impl_->path = path;
  impl_->layout = layout;
  impl_->file = create_hdf5_file(path, overwrite);
  try {
    impl_->create_structure();
  } catch (...) {
    impl_.reset();  // a file that could not even be set up (e.g. a full disk) is removed
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
          : make_handle(H5Gcreate2(file, schema::kSummaryGroup, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose,
                        "cannot create group /summary in " + impl_->path.string());
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

void ResultWriter::write_mixture(const std::vector<double>& mixture) {
  const auto clients = static_cast<std::size_t>(impl_->layout.num_clients);
  const auto sources = static_cast<std::size_t>(impl_->layout.num_sources);
  if (sources == 0 || mixture.size() != clients * sources) {
    throw ShapeError("ResultWriter::write_mixture: got " + std::to_string(mixture.size()) + " shares for " +
                     std::to_string(clients) + " clients and " + std::to_string(sources) +
                     " sources; pass M x S shares of a mixture partition");
  }
  write_dataset(impl_->file.get(), schema::kMixture, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE,
                {static_cast<hsize_t>(clients), static_cast<hsize_t>(sources)}, mixture.data());
  impl_->flush();
}

void ResultWriter::append_round(const RoundRecord& record) {
  Impl& w = *impl_;
  w.validate(record);
  append_row(w.ari.get(), H5T_NATIVE_DOUBLE, &record.ari);
  append_row(w.accuracy.get(), H5T_NATIVE_DOUBLE, &record.accuracy);
  append_row(w.test_loss.get(), H5T_NATIVE_DOUBLE, &record.test_loss);
  append_row(w.train_loss.get(), H5T_NATIVE_DOUBLE, &record.train_loss);
  append_row(w.worker_compute_seconds.get(), H5T_NATIVE_DOUBLE, &record.worker_compute_seconds);
  append_row(w.bytes_sent.get(), H5T_NATIVE_INT64, &record.bytes_sent);
  append_row(w.bytes_received.get(), H5T_NATIVE_INT64, &record.bytes_received);
  append_row(w.seconds.get(), H5T_NATIVE_DOUBLE, record.seconds.data());
  append_row(w.assignment.get(), H5T_NATIVE_INT, record.assignment.data());
  append_row(w.client_accuracy.get(), H5T_NATIVE_FLOAT, record.client_accuracy.data());
  append_row(w.client_test_loss.get(), H5T_NATIVE_FLOAT, record.client_test_loss.data());
  if (w.layout.has_loss_vectors) {
    append_row(w.loss_vectors.get(), H5T_NATIVE_FLOAT, record.loss_vectors.data());
  }
  append_row(w.live_models.get(), H5T_NATIVE_INT, &record.live_models);
  for (const auto& [path, dataset] : w.extra) {
    append_row(dataset.get(), H5T_NATIVE_FLOAT, record.extra.at(path).data());
  }
  if (w.layout.num_sources > 0) {
    append_row(w.source_accuracy.get(), H5T_NATIVE_FLOAT, record.source_accuracy.data());
    append_row(w.source_loss.get(), H5T_NATIVE_FLOAT, record.source_loss.data());
  }
  // completed_rounds is written last, once every row of the round is on disk: a failed write (a
  // full disk) leaves the file claiming only the rounds before.
  w.flush();
  write_int64_attribute(w.file.get(), schema::kCompletedRounds, w.completed_rounds + 1);
  ++w.completed_rounds;
  w.flush();
}

ResultWriter ResultWriter::resume(const std::filesystem::path& path, const ResultLayout& layout, std::int64_t rounds) {
  validate_layout(layout);
  ResultWriter writer;
  writer.impl_ = std::make_unique<Impl>();
  Impl& w = *writer.impl_;
  w.path = path;
  w.layout = layout;
  w.file = open_hdf5_file_read_write(path);
  const hid_t f = w.file.get();
  if (read_int64_attribute(f, schema::kNumClients) != layout.num_clients ||
      read_int64_attribute(f, schema::kNumModels) != layout.num_models) {
    throw DataError(path.string() + " was written for another number of clients or models than this run; "
                    "start again with --overwrite");
  }
  w.reopen_datasets(rounds);
  write_int64_attribute(f, schema::kCompletedRounds, rounds);
  w.completed_rounds = rounds;
  w.set_status(schema::kStatusRunning);
  return writer;
}

std::int64_t ResultWriter::completed_rounds() const { return impl_->completed_rounds; }

void ResultWriter::complete_into(const std::filesystem::path& final_path) {
  impl_->set_status(schema::kStatusComplete);
  const auto written = impl_->path;
  impl_.reset();  // closes every dataset, then the file
  const auto error = durable_rename(written, final_path);
  if (error) {
    throw Hdf5Error("cannot rename " + written.string() + " to " + final_path.string() + ": " + error.message() +
                    "; the complete result is in " + written.string());
  }
}

void ResultWriter::mark_interrupted(const std::string& message) noexcept {
  set_status_best_effort(schema::kStatusInterruptedPrefix + message);
}

void ResultWriter::mark_complete() { impl_->set_status(schema::kStatusComplete); }

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
