#include <cflrun/io/hdf5_dataset.hpp>

namespace cflrun::io {
namespace {

constexpr unsigned kGzipLevel = 1;  // Loss vectors compress well already at the fastest level.

Hdf5Handle make_simple_space(const std::vector<hsize_t>& shape,
                             const std::vector<hsize_t>& max_shape) {
  return make_handle(
      H5Screate_simple(static_cast<int>(shape.size()), shape.data(), max_shape.data()), H5Sclose,
      "cannot create an HDF5 dataspace");
}

Hdf5Handle make_row_creation_properties(const std::vector<hsize_t>& chunk, bool compress) {
  Hdf5Handle properties = make_handle(H5Pcreate(H5P_DATASET_CREATE), H5Pclose,
                                      "cannot create HDF5 dataset creation properties");
  check_hdf5(H5Pset_chunk(properties.get(), static_cast<int>(chunk.size()), chunk.data()),
             "cannot set the chunk shape of a dataset");
  if (compress && H5Zfilter_avail(H5Z_FILTER_DEFLATE) > 0) {
    check_hdf5(H5Pset_deflate(properties.get(), kGzipLevel), "cannot enable gzip for a dataset");
  }
  return properties;
}

}  // namespace

Hdf5Handle create_row_dataset(hid_t parent, const std::string& name, hid_t file_type,
                              const std::vector<hsize_t>& row_shape, bool compress) {
  std::vector<hsize_t> shape{0};
  std::vector<hsize_t> max_shape{H5S_UNLIMITED};
  std::vector<hsize_t> chunk{1};
  shape.insert(shape.end(), row_shape.begin(), row_shape.end());
  max_shape.insert(max_shape.end(), row_shape.begin(), row_shape.end());
  chunk.insert(chunk.end(), row_shape.begin(), row_shape.end());
  const Hdf5Handle space = make_simple_space(shape, max_shape);
  const Hdf5Handle properties = make_row_creation_properties(chunk, compress);
  return make_handle(H5Dcreate2(parent, name.c_str(), file_type, space.get(), H5P_DEFAULT,
                                properties.get(), H5P_DEFAULT),
                     H5Dclose, "cannot create dataset " + name + " in " + describe_object(parent));
}

void append_row(hid_t dataset, hid_t mem_type, const void* row) {
  const std::string what = "cannot append a row to " + describe_object(dataset);
  std::vector<hsize_t> shape = dataset_shape(dataset);
  std::vector<hsize_t> start(shape.size(), 0);
  start.front() = shape.front();
  shape.front() += 1;
  check_hdf5(H5Dset_extent(dataset, shape.data()), what);
  std::vector<hsize_t> count = shape;
  count.front() = 1;
  const Hdf5Handle file_space = make_handle(H5Dget_space(dataset), H5Sclose, what);
  check_hdf5(H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start.data(), nullptr,
                                 count.data(), nullptr),
             what);
  const Hdf5Handle memory_space = make_simple_space(count, count);
  check_hdf5(H5Dwrite(dataset, mem_type, memory_space.get(), file_space.get(), H5P_DEFAULT, row),
             what);
}

void write_dataset(hid_t parent, const std::string& name, hid_t file_type, hid_t mem_type,
                   const std::vector<hsize_t>& shape, const void* data) {
  const std::string what = "cannot write dataset " + name + " in " + describe_object(parent);
  const htri_t exists = H5Lexists(parent, name.c_str(), H5P_DEFAULT);
  check_hdf5(exists, what);
  Hdf5Handle dataset;
  if (exists > 0) {
    dataset = make_handle(H5Dopen2(parent, name.c_str(), H5P_DEFAULT), H5Dclose, what);
  } else {
    const Hdf5Handle space = make_simple_space(shape, shape);
    dataset = make_handle(H5Dcreate2(parent, name.c_str(), file_type, space.get(), H5P_DEFAULT,
                                     H5P_DEFAULT, H5P_DEFAULT),
                          H5Dclose, what);
  }
  if (dataset_shape(dataset.get()) != shape) {
    throw_hdf5_error(what + ": it exists with another shape");
  }
  check_hdf5(H5Dwrite(dataset.get(), mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data), what);
}

std::vector<hsize_t> dataset_shape(hid_t dataset) {
  const std::string what = "cannot get the shape of " + describe_object(dataset);
  const Hdf5Handle space = make_handle(H5Dget_space(dataset), H5Sclose, what);
  const int rank = H5Sget_simple_extent_ndims(space.get());
  check_hdf5(rank, what);
  std::vector<hsize_t> shape(static_cast<std::size_t>(rank));
  check_hdf5(H5Sget_simple_extent_dims(space.get(), shape.data(), nullptr), what);
  return shape;
}

void read_whole_dataset(hid_t dataset, hid_t mem_type, void* buffer) {
  check_hdf5(H5Dread(dataset, mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, buffer),
             "cannot read " + describe_object(dataset));
}

}  // namespace cflrun::io
