#include <cflrun/io/tensor_store.hpp>

#include <vector>

#include <torch/types.h>

#include <cflrun/core/error.hpp>
#include <cflrun/io/hdf5_dataset.hpp>
#include <cflrun/io/hdf5_file.hpp>
#include <cflrun/io/hdf5_handle.hpp>

namespace cflrun::io {
namespace {

/// The file type and memory type of a tensor dtype (bool as an 8-bit bitfield, so that it reads
/// back as bool).
struct Types {
  hid_t file;
  hid_t memory;
};

Types types_of(torch::ScalarType type) {
  switch (type) {
    case torch::kFloat32: return {H5T_IEEE_F32LE, H5T_NATIVE_FLOAT};
    case torch::kFloat64: return {H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE};
    case torch::kInt64: return {H5T_STD_I64LE, H5T_NATIVE_INT64};
    case torch::kInt32: return {H5T_STD_I32LE, H5T_NATIVE_INT32};
    case torch::kBool: return {H5T_STD_B8LE, H5T_NATIVE_B8};
    default: throw ShapeError(std::string("cannot store a tensor of dtype ") + c10::toString(type) +
                              "; use float32, float64, int64, int32 or bool");
  }
}

/// The tensor dtype of a stored dataset's file type.
torch::ScalarType dtype_of(hid_t dataset) {
  const Hdf5Handle type = make_handle(H5Dget_type(dataset), H5Tclose, "cannot get the type of " + describe_object(dataset));
  const auto size = H5Tget_size(type.get());
  switch (H5Tget_class(type.get())) {
    case H5T_FLOAT: return size == 4 ? torch::kFloat32 : torch::kFloat64;
    case H5T_INTEGER: return size == 8 ? torch::kInt64 : torch::kInt32;
    case H5T_BITFIELD: return torch::kBool;
    default: throw DataError("unsupported tensor type in " + describe_object(dataset));
  }
}

std::vector<std::string> member_names(hid_t group) {
  H5G_info_t info;
  check_hdf5(H5Gget_info(group, &info), "cannot list " + describe_object(group));
  std::vector<std::string> names;
  for (hsize_t i = 0; i < info.nlinks; ++i) {
    const auto length = H5Lget_name_by_idx(group, ".", H5_INDEX_NAME, H5_ITER_INC, i, nullptr, 0, H5P_DEFAULT);
    check_hdf5(static_cast<herr_t>(length < 0 ? -1 : 0), "cannot list " + describe_object(group));
    std::string name(static_cast<std::size_t>(length), '\0');
    H5Lget_name_by_idx(group, ".", H5_INDEX_NAME, H5_ITER_INC, i, name.data(), name.size() + 1, H5P_DEFAULT);
    names.push_back(name);
  }
  return names;
}

torch::Tensor read_tensor(hid_t group, const std::string& name) {
  const Hdf5Handle dataset = make_handle(H5Dopen2(group, name.c_str(), H5P_DEFAULT), H5Dclose,
                                         "cannot open " + name + " in " + describe_object(group));
  const auto shape = dataset_shape(dataset.get());
  const auto dtype = dtype_of(dataset.get());
  auto tensor = torch::empty(std::vector<std::int64_t>(shape.begin(), shape.end()), dtype);
  if (tensor.numel() > 0) {
    read_whole_dataset(dataset.get(), types_of(dtype).memory, tensor.data_ptr());
  }
  return tensor;
}

}  // namespace

void write_tensor_groups(const std::filesystem::path& path, const std::map<std::string, NamedTensors>& groups) {
  const Hdf5Handle file = create_hdf5_file(path, /*truncate=*/true);
  for (const auto& [group_name, tensors] : groups) {
    const Hdf5Handle group = make_handle(H5Gcreate2(file.get(), group_name.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                                         H5Gclose, "cannot create group " + group_name + " in " + path.string());
    for (const auto& [name, tensor] : tensors) {
      const auto cpu = tensor.to(torch::kCPU).contiguous();
      const auto types = types_of(cpu.scalar_type());
      const std::vector<hsize_t> shape(cpu.sizes().begin(), cpu.sizes().end());
      write_dataset(group.get(), name, types.file, types.memory, shape, cpu.data_ptr());
    }
  }
  check_hdf5(H5Fflush(file.get(), H5F_SCOPE_GLOBAL), "cannot flush " + path.string());
}

std::map<std::string, NamedTensors> read_tensor_groups(const std::filesystem::path& path) {
  if (!std::filesystem::is_regular_file(path)) {
    throw DataError("state file " + path.string() + " does not exist; check the path");
  }
  const Hdf5Handle file = open_hdf5_file_read_only(path);
  std::map<std::string, NamedTensors> groups;
  for (const auto& group_name : member_names(file.get())) {
    const Hdf5Handle group = make_handle(H5Gopen2(file.get(), group_name.c_str(), H5P_DEFAULT), H5Gclose,
                                         "cannot open group " + group_name + " in " + path.string());
    auto& tensors = groups[group_name];
    for (const auto& name : member_names(group.get())) {
      tensors.emplace(name, read_tensor(group.get(), name));
    }
  }
  return groups;
}

}  // namespace cflrun::io
