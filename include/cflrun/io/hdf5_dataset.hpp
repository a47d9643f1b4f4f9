#pragma once
/// @file
/// Creating, extending and reading HDF5 datasets, in particular datasets that grow by one row
/// per round. Includes <hdf5.h>: for the io area and its tests only (see hdf5_handle.hpp).

#include <string>
#include <vector>

#include <cflrun/io/hdf5_handle.hpp>

namespace cflrun::io {

/// Creates an empty dataset of shape [0, row_shape...] whose first dimension is unlimited, stored
/// in chunks of one row, so that `append_row` can grow it one round at a time.
/// @param parent     file or group that will hold the dataset.
/// @param name       dataset name relative to `parent` (no intermediate groups are created).
/// @param file_type  element type in the file, e.g. H5T_IEEE_F64LE.
/// @param row_shape  shape of one row; empty for a [T] dataset. Every extent must be >= 1.
/// @param compress   gzip (deflate level 1) each chunk, if the HDF5 build provides deflate.
/// @throws Hdf5Error if HDF5 cannot create the dataset (e.g. the name exists).
Hdf5Handle create_row_dataset(hid_t parent, const std::string& name, hid_t file_type,
                              const std::vector<hsize_t>& row_shape, bool compress);

/// Extends a dataset made by `create_row_dataset` by one row along its first dimension and writes
/// `row` into it.
/// @param mem_type  element type of `row` in memory, e.g. H5T_NATIVE_DOUBLE.
/// @param row       prod(row_shape) elements, row-major.
/// @throws Hdf5Error if HDF5 cannot extend or write the dataset.
void append_row(hid_t dataset, hid_t mem_type, const void* row);

/// Creates a fixed-size dataset of `shape` (or reuses an existing one of that name) and writes
/// `data` (prod(shape) elements of `mem_type`, row-major) into it.
/// @throws Hdf5Error if HDF5 cannot create or write it, e.g. an existing dataset has another shape.
void write_dataset(hid_t parent, const std::string& name, hid_t file_type, hid_t mem_type,
                   const std::vector<hsize_t>& shape, const void* data);

/// Current extent of each dimension of `dataset` ({} for a scalar dataset).
/// @throws Hdf5Error if HDF5 cannot query the dataspace.
std::vector<hsize_t> dataset_shape(hid_t dataset);

/// Reads the whole dataset, converted by HDF5 to `mem_type`, into `buffer`, which must hold
/// prod(dataset_shape(dataset)) elements.
/// @throws Hdf5Error if HDF5 cannot read or convert the data (e.g. a string dataset).
void read_whole_dataset(hid_t dataset, hid_t mem_type, void* buffer);

}  // namespace cflrun::io
