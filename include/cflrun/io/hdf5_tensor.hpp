#pragma once
/// @file
/// LibTorch tensors in and out of HDF5 datasets (tensor_store, result rows). Includes <hdf5.h>:
/// for the io area and its tests only (see hdf5_handle.hpp).

#include <string>

#include <torch/types.h>

#include <cflrun/io/hdf5_handle.hpp>

namespace cflrun::io {

/// The HDF5 element types of a tensor dtype: in the file (little-endian) and in memory (native).
struct Hdf5Types {
  hid_t file;
  hid_t memory;
};

/// The types of float32, float64, int64, int32 and bool (an 8-bit bitfield, so that it reads back
/// as bool). @throws ShapeError for any other dtype.
Hdf5Types hdf5_types_of(torch::ScalarType type);

/// The tensor dtype a dataset reads back as: float32/float64 by size, int32/int64 by size, bool
/// for a bitfield. @throws DataError for any other class (strings, compounds).
torch::ScalarType dtype_of_dataset(hid_t dataset);

/// Reads the whole dataset `name` of `parent` as a CPU tensor of its own shape and dtype.
/// @throws Hdf5Error if it cannot be opened or read; DataError for a type with no tensor dtype.
torch::Tensor read_dataset_tensor(hid_t parent, const std::string& name);

}  // namespace cflrun::io
