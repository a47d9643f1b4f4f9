#pragma once
/// @file
/// Reading and writing the string and integer attributes of HDF5 objects (files, groups,
/// datasets). Includes <hdf5.h>: for the io area and its tests only (see hdf5_handle.hpp).

#include <cstdint>
#include <string>
#include <vector>

#include <cflrun/io/hdf5_handle.hpp>

namespace cflrun::io {

/// True if `object` has an attribute called `name`.
/// @throws Hdf5Error if HDF5 cannot query the object.
bool has_attribute(hid_t object, const std::string& name);

/// The names of all attributes of `object`, in alphabetical (HDF5 name index) order.
/// @throws Hdf5Error if HDF5 cannot iterate over them.
std::vector<std::string> attribute_names(hid_t object);

/// Writes a scalar variable-length UTF-8 string attribute, replacing any attribute of that name.
/// Variable-length strings live in the file's global heap, so long values do not hit the 64 KiB
/// limit on compact attribute storage; h5py reads them as `str`.
/// @throws Hdf5Error if HDF5 cannot delete the old or write the new attribute.
void write_string_attribute(hid_t object, const std::string& name, const std::string& value);

/// Writes a [N] variable-length UTF-8 string array attribute, replacing any of that name.
/// @throws Hdf5Error if HDF5 cannot write it.
void write_string_array_attribute(hid_t object, const std::string& name,
                                  const std::vector<std::string>& values);

/// Writes a scalar int64 attribute. An existing int64 attribute of that name is overwritten in
/// place (cheap enough to call once per round); anything else of that name is replaced.
/// @throws Hdf5Error if HDF5 cannot write it.
void write_int64_attribute(hid_t object, const std::string& name, std::int64_t value);

/// Writes (or overwrites) a scalar float64 attribute. @throws Hdf5Error naming the object.
void write_double_attribute(hid_t object, const std::string& name, double value);

/// Reads a string attribute of any rank, variable- or fixed-length, flattened row-major
/// (a scalar gives one element). Fixed-length values are cut at their first NUL.
/// @throws DataError if the attribute is missing or not a string (the message names the object).
/// @throws Hdf5Error if HDF5 cannot read it.
std::vector<std::string> read_string_array_attribute(hid_t object, const std::string& name);

/// Reads a string attribute holding exactly one value (scalar or [1]).
/// @throws DataError if it is missing, not a string, or holds other than one value.
/// @throws Hdf5Error if HDF5 cannot read it.
std::string read_string_attribute(hid_t object, const std::string& name);

/// Reads a scalar integer attribute (any integer type, converted to int64).
/// @throws DataError if it is missing, not an integer, or not scalar.
/// @throws Hdf5Error if HDF5 cannot read it.
std::int64_t read_int64_attribute(hid_t object, const std::string& name);

/// Reads a scalar floating-point attribute as float64.
/// @throws DataError if it is missing or not one floating-point number.
double read_double_attribute(hid_t object, const std::string& name);

}  // namespace cflrun::io
