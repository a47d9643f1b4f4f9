#include <cflrun/io/result_reader.hpp>

#include <functional>
#include <numeric>

#include <cflrun/core/error.hpp>
#include <cflrun/io/hdf5_attribute.hpp>
#include <cflrun/io/hdf5_dataset.hpp>
#include <cflrun/io/hdf5_file.hpp>
#include <cflrun/io/hdf5_handle.hpp>
#include <cflrun/io/result_schema.hpp>

namespace cflrun::io {

struct ResultReader::Impl {
  std::filesystem::path path;
  Hdf5Handle file;

  bool link_exists(const std::string& name) const;
  Hdf5Handle open_group(const char* name) const;
  Hdf5Handle open_dataset(const std::string& name) const;

  /// Reads a whole dataset converted to `mem_type`, whose elements are T.
  template <typename T>
  std::vector<T> read(const std::string& name, hid_t mem_type,
                      std::vector<std::size_t>* shape) const {
    const Hdf5Handle dataset = open_dataset(name);
    const std::vector<hsize_t> extents = dataset_shape(dataset.get());
    const hsize_t count =
        std::accumulate(extents.begin(), extents.end(), hsize_t{1}, std::multiplies<hsize_t>());
    std::vector<T> values(static_cast<std::size_t>(count));
    if (count > 0) {
      read_whole_dataset(dataset.get(), mem_type, values.data());
    }
    if (shape != nullptr) {
      shape->assign(extents.begin(), extents.end());
    }
    return values;
  }
};

/// True if every component of `name` ("/rounds/ari") exists as a link. H5Lexists fails rather
/// than returning false when an intermediate group is missing, so check one level at a time.
bool ResultReader::Impl::link_exists(const std::string& name) const {
  std::string prefix;
  std::size_t start = name.find_first_not_of('/');
  while (start != std::string::npos) {
    const std::size_t end = name.find('/', start);
    prefix += '/';  // appended piecewise: GCC 12 warns falsely on "/" + std::string in C++20
    prefix += name.substr(start, end - start);
    if (H5Lexists(file.get(), prefix.c_str(), H5P_DEFAULT) <= 0) {
      H5Eclear2(H5E_DEFAULT);
      return false;
    }
    start = name.find_first_not_of('/', end);
  }
  return !prefix.empty();
}

Hdf5Handle ResultReader::Impl::open_group(const char* name) const {
  if (!link_exists(name)) {
    throw DataError("result file " + path.string() + " has no group " + name +
                    "; is it a result file written by cflrun?");
  }
  return make_handle(H5Gopen2(file.get(), name, H5P_DEFAULT), H5Gclose,
                     "cannot open group " + std::string(name) + " in " + path.string());
}

Hdf5Handle ResultReader::Impl::open_dataset(const std::string& name) const {
  if (!link_exists(name)) {
    throw DataError(
        "result file " + path.string() + " has no dataset " + name +
        " (/clients/loss_vectors exists only for algorithms that compute loss vectors)");
  }
  return make_handle(H5Dopen2(file.get(), name.c_str(), H5P_DEFAULT), H5Dclose,
                     "cannot open dataset " + name + " in " + path.string());
}

ResultReader::ResultReader(const std::filesystem::path& path) : impl_(std::make_unique<Impl>()) {
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error)) {
    throw DataError("result file " + path.string() +
                    " does not exist or is not a regular file; check the path given to --out");
  }
  silence_hdf5_error_printing();
  if (H5Fis_hdf5(path.c_str()) <= 0) {
    H5Eclear2(H5E_DEFAULT);
    throw DataError("result file " + path.string() +
                    " is not an HDF5 file; pass a .h5 file written by cflrun --out");
  }
  impl_->path = path;
  impl_->file = open_hdf5_file_read_only(path);
}

ResultReader::~ResultReader() = default;
ResultReader::ResultReader(ResultReader&&) noexcept = default;
ResultReader& ResultReader::operator=(ResultReader&&) noexcept = default;

std::vector<std::pair<std::string, std::string>> ResultReader::config() const {
  const Hdf5Handle group = impl_->open_group(schema::kConfigGroup);
  std::vector<std::pair<std::string, std::string>> entries;
  for (std::string& name : attribute_names(group.get())) {
    std::string value = read_string_attribute(group.get(), name);
    entries.emplace_back(std::move(name), std::move(value));
  }
  return entries;
}

std::string ResultReader::config_value(const std::string& name) const {
  const Hdf5Handle group = impl_->open_group(schema::kConfigGroup);
  if (!has_attribute(group.get(), name)) {
    std::string present;
    for (const std::string& other : attribute_names(group.get())) {
      present += (present.empty() ? "" : ", ") + other;
    }
    throw DataError("result file " + impl_->path.string() + " has no config entry '" + name +
                    "'; present: " + (present.empty() ? "none" : present));
  }
  return read_string_attribute(group.get(), name);
}

std::int64_t ResultReader::completed_rounds() const {
  return read_int64_attribute(impl_->file.get(), schema::kCompletedRounds);
}

double ResultReader::read_f64_attribute(const std::string& group, const std::string& name) const {
  if (H5Lexists(impl_->file.get(), group.c_str(), H5P_DEFAULT) <= 0) {
    throw DataError(impl_->path.string() + " has no group " + group + " (was the run completed?)");
  }
  const Hdf5Handle handle =
      make_handle(H5Gopen2(impl_->file.get(), group.c_str(), H5P_DEFAULT), H5Gclose,
                  "cannot open " + group + " in " + impl_->path.string());
  return read_double_attribute(handle.get(), name);
}

std::int64_t ResultReader::planned_rounds() const {
  return read_int64_attribute(impl_->file.get(), schema::kPlannedRounds);
}

std::string ResultReader::status() const {
  return read_string_attribute(impl_->file.get(), schema::kStatus);
}

std::vector<std::string> ResultReader::phase_names() const {
  const Hdf5Handle dataset = impl_->open_dataset(schema::kSeconds);
  return read_string_array_attribute(dataset.get(), schema::kPhasesAttribute);
}

bool ResultReader::has_dataset(const std::string& path) const {
  if (!impl_->link_exists(path)) {
    return false;
  }
  const hid_t object = H5Oopen(impl_->file.get(), path.c_str(), H5P_DEFAULT);
  if (object < 0) {
    H5Eclear2(H5E_DEFAULT);
    return false;  // e.g. a dangling soft link
  }
  const Hdf5Handle handle(object, H5Oclose);
  return H5Iget_type(object) == H5I_DATASET;
}

std::vector<double> ResultReader::read_f64(const std::string& dataset,
                                           std::vector<std::size_t>* shape) const {
  return impl_->read<double>(dataset, H5T_NATIVE_DOUBLE, shape);
}

std::vector<float> ResultReader::read_f32(const std::string& dataset,
                                          std::vector<std::size_t>* shape) const {
  return impl_->read<float>(dataset, H5T_NATIVE_FLOAT, shape);
}

std::vector<int> ResultReader::read_i32(const std::string& dataset,
                                        std::vector<std::size_t>* shape) const {
  return impl_->read<int>(dataset, H5T_NATIVE_INT, shape);
}

}  // namespace cflrun::io
