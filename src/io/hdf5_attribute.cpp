#include <cflrun/io/hdf5_attribute.hpp>

#include <cstring>

#include <cflrun/core/error.hpp>

namespace cflrun::io {
namespace {

std::string attribute_label(hid_t object, const std::string& name) {
  return "attribute '" + name + "' of " + describe_object(object);
}

Hdf5Handle make_vlen_string_type(H5T_cset_t cset) {
  Hdf5Handle type = make_handle(H5Tcopy(H5T_C_S1), H5Tclose, "cannot copy the HDF5 string type");
  check_hdf5(H5Tset_size(type.get(), H5T_VARIABLE), "cannot make a variable-length string type");
  check_hdf5(H5Tset_cset(type.get(), cset), "cannot set the character set of a string type");
  return type;
}

void delete_attribute_if_present(hid_t object, const std::string& name) {
  if (has_attribute(object, name)) {
    check_hdf5(H5Adelete(object, name.c_str()), "cannot replace " + attribute_label(object, name));
  }
}

/// Creates (replacing any old one) an attribute of the given file type and dataspace.
Hdf5Handle create_attribute(hid_t object, const std::string& name, hid_t type, hid_t space) {
  delete_attribute_if_present(object, name);
  return make_handle(H5Acreate2(object, name.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT),
                     H5Aclose, "cannot create " + attribute_label(object, name));
}

Hdf5Handle open_attribute(hid_t object, const std::string& name) {
  if (!has_attribute(object, name)) {
    throw DataError(describe_object(object) + " has no attribute '" + name +
                    "'; is this a result file written by cflrun?");
  }
  return make_handle(H5Aopen(object, name.c_str(), H5P_DEFAULT), H5Aclose,
                     "cannot open " + attribute_label(object, name));
}

void write_string_pointers(hid_t object, const std::string& name, hid_t space,
                           const std::vector<const char*>& pointers) {
  const Hdf5Handle type = make_vlen_string_type(H5T_CSET_UTF8);
  const Hdf5Handle attribute = create_attribute(object, name, type.get(), space);
  check_hdf5(H5Awrite(attribute.get(), type.get(), pointers.data()),
             "cannot write " + attribute_label(object, name));
}

std::vector<std::string> read_vlen_strings(hid_t attribute, hid_t file_type, hid_t space,
                                           std::size_t count, const std::string& label) {
  const Hdf5Handle type = make_vlen_string_type(H5Tget_cset(file_type));
  std::vector<char*> pointers(count, nullptr);
  check_hdf5(H5Aread(attribute, type.get(), pointers.data()), "cannot read " + label);
  std::vector<std::string> values;
  values.reserve(count);
  for (const char* pointer : pointers) {
    values.emplace_back(pointer != nullptr ? pointer : "");
  }
  H5Dvlen_reclaim(type.get(), space, H5P_DEFAULT, pointers.data());
  return values;
}

std::vector<std::string> read_fixed_strings(hid_t attribute, hid_t file_type, std::size_t count,
                                            const std::string& label) {
  const std::size_t size = H5Tget_size(file_type);
  const Hdf5Handle type =
      make_handle(H5Tcopy(file_type), H5Tclose, "cannot copy the type of " + label);
  std::vector<char> buffer(count * size);
  check_hdf5(H5Aread(attribute, type.get(), buffer.data()), "cannot read " + label);
  std::vector<std::string> values;
  values.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    const char* start = buffer.data() + i * size;
    values.emplace_back(start, strnlen(start, size));
  }
  return values;
}

herr_t collect_attribute_name(hid_t /*object*/, const char* name, const H5A_info_t* /*info*/,
                              void* names) {
  static_cast<std::vector<std::string>*>(names)->emplace_back(name);
  return 0;
}

}  // namespace

bool has_attribute(hid_t object, const std::string& name) {
  const htri_t exists = H5Aexists(object, name.c_str());
  check_hdf5(exists, "cannot look up " + attribute_label(object, name));
  return exists > 0;
}

std::vector<std::string> attribute_names(hid_t object) {
  std::vector<std::string> names;
  check_hdf5(
      H5Aiterate2(object, H5_INDEX_NAME, H5_ITER_INC, nullptr, collect_attribute_name, &names),
      "cannot list the attributes of " + describe_object(object));
  return names;
}

void write_string_attribute(hid_t object, const std::string& name, const std::string& value) {
  const Hdf5Handle space =
      make_handle(H5Screate(H5S_SCALAR), H5Sclose, "cannot create a scalar dataspace");
  write_string_pointers(object, name, space.get(), {value.c_str()});
}

void write_string_array_attribute(hid_t object, const std::string& name,
                                  const std::vector<std::string>& values) {
  const hsize_t count = values.size();
  const Hdf5Handle space =
      make_handle(H5Screate_simple(1, &count, nullptr), H5Sclose,
                  "cannot create a dataspace for " + attribute_label(object, name));
  std::vector<const char*> pointers;
  pointers.reserve(values.size());
  for (const std::string& value : values) {
    pointers.push_back(value.c_str());
  }
  write_string_pointers(object, name, space.get(), pointers);
}

namespace {

/// Writes a scalar numeric attribute, reusing an existing one of the same class and size.
void write_scalar_attribute(hid_t object, const std::string& name, H5T_class_t type_class,
                            hid_t file_type, hid_t memory_type, const void* value,
                            std::size_t size) {
  if (has_attribute(object, name)) {
    const Hdf5Handle attribute = open_attribute(object, name);
    const Hdf5Handle type = make_handle(H5Aget_type(attribute.get()), H5Tclose,
                                        "cannot get the type of " + attribute_label(object, name));
    if (H5Tget_class(type.get()) == type_class && H5Tget_size(type.get()) == size) {
      check_hdf5(H5Awrite(attribute.get(), memory_type, value),
                 "cannot write " + attribute_label(object, name));
      return;
    }
  }
  const Hdf5Handle space =
      make_handle(H5Screate(H5S_SCALAR), H5Sclose, "cannot create a scalar dataspace");
  const Hdf5Handle attribute = create_attribute(object, name, file_type, space.get());
  check_hdf5(H5Awrite(attribute.get(), memory_type, value),
             "cannot write " + attribute_label(object, name));
}

}  // namespace

void write_int64_attribute(hid_t object, const std::string& name, std::int64_t value) {
  write_scalar_attribute(object, name, H5T_INTEGER, H5T_STD_I64LE, H5T_NATIVE_INT64, &value,
                         sizeof(value));
}

void write_double_attribute(hid_t object, const std::string& name, double value) {
  write_scalar_attribute(object, name, H5T_FLOAT, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &value,
                         sizeof(value));
}

std::vector<std::string> read_string_array_attribute(hid_t object, const std::string& name) {
  const std::string label = attribute_label(object, name);
  const Hdf5Handle attribute = open_attribute(object, name);
  const Hdf5Handle type =
      make_handle(H5Aget_type(attribute.get()), H5Tclose, "cannot get the type of " + label);
  if (H5Tget_class(type.get()) != H5T_STRING) {
    throw DataError(label +
                    " should be a string but has another type; is this a cflrun result file?");
  }
  const Hdf5Handle space =
      make_handle(H5Aget_space(attribute.get()), H5Sclose, "cannot get the shape of " + label);
  const hssize_t count = H5Sget_simple_extent_npoints(space.get());
  if (count < 0) {
    throw_hdf5_error("cannot get the size of " + label);
  }
  const htri_t variable = H5Tis_variable_str(type.get());
  check_hdf5(variable, "cannot inspect the string type of " + label);
  if (variable > 0) {
    return read_vlen_strings(attribute.get(), type.get(), space.get(),
                             static_cast<std::size_t>(count), label);
  }
  return read_fixed_strings(attribute.get(), type.get(), static_cast<std::size_t>(count), label);
}

std::string read_string_attribute(hid_t object, const std::string& name) {
  std::vector<std::string> values = read_string_array_attribute(object, name);
  if (values.size() != 1) {
    throw DataError(attribute_label(object, name) + " should hold one string but holds " +
                    std::to_string(values.size()));
  }
  return std::move(values.front());
}

namespace {

/// Reads a scalar numeric attribute of the given class, converted by HDF5 to `memory_type`.
void read_scalar_attribute(hid_t object, const std::string& name, H5T_class_t type_class,
                           const char* expected, hid_t memory_type, void* value) {
  const std::string label = attribute_label(object, name);
  const Hdf5Handle attribute = open_attribute(object, name);
  const Hdf5Handle type =
      make_handle(H5Aget_type(attribute.get()), H5Tclose, "cannot get the type of " + label);
  const Hdf5Handle space =
      make_handle(H5Aget_space(attribute.get()), H5Sclose, "cannot get the shape of " + label);
  if (H5Tget_class(type.get()) != type_class || H5Sget_simple_extent_npoints(space.get()) != 1) {
    throw DataError(label + " should be one " + expected +
                    " but has another type or shape; is this a cflrun result file?");
  }
  check_hdf5(H5Aread(attribute.get(), memory_type, value), "cannot read " + label);
}

}  // namespace

std::int64_t read_int64_attribute(hid_t object, const std::string& name) {
  std::int64_t value = 0;
  read_scalar_attribute(object, name, H5T_INTEGER, "integer", H5T_NATIVE_INT64, &value);
  return value;
}

double read_double_attribute(hid_t object, const std::string& name) {
  double value = 0.0;
  read_scalar_attribute(object, name, H5T_FLOAT, "floating-point number", H5T_NATIVE_DOUBLE,
                        &value);
  return value;
}

}  // namespace cflrun::io
