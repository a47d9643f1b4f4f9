#include <cflrun/io/tensor_store.hpp>

#include <vector>

#include <torch/types.h>

#include <cflrun/core/error.hpp>
#include <cflrun/io/file_checksum.hpp>
#include <cflrun/io/hdf5_dataset.hpp>
#include <cflrun/io/hdf5_file.hpp>
#include <cflrun/io/hdf5_handle.hpp>
#include <cflrun/io/hdf5_tensor.hpp>

namespace cflrun::io {
namespace {

std::vector<std::string> member_names(hid_t group) {
  H5G_info_t info;
  check_hdf5(H5Gget_info(group, &info), "cannot list " + describe_object(group));
  std::vector<std::string> names;
  for (hsize_t i = 0; i < info.nlinks; ++i) {
    const auto length =
        H5Lget_name_by_idx(group, ".", H5_INDEX_NAME, H5_ITER_INC, i, nullptr, 0, H5P_DEFAULT);
    check_hdf5(static_cast<herr_t>(length < 0 ? -1 : 0), "cannot list " + describe_object(group));
    std::string name(static_cast<std::size_t>(length), '\0');
    H5Lget_name_by_idx(group, ".", H5_INDEX_NAME, H5_ITER_INC, i, name.data(), name.size() + 1,
                       H5P_DEFAULT);
    names.push_back(name);
  }
  return names;
}

/// The tensors of `groups` in a new file with a user block for seal_file, flushed and closed.
void write_unsealed(const std::filesystem::path& path,
                    const std::map<std::string, NamedTensors>& groups) {
  const Hdf5Handle file = create_hdf5_file(path, /*truncate=*/true, kChecksumBlockBytes);
  for (const auto& [group_name, tensors] : groups) {
    const Hdf5Handle group = make_handle(
        H5Gcreate2(file.get(), group_name.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose,
        "cannot create group " + group_name + " in " + path.string());
    for (const auto& [name, tensor] : tensors) {
      const auto cpu = tensor.to(torch::kCPU).contiguous();
      const auto types = hdf5_types_of(cpu.scalar_type());
      const std::vector<hsize_t> shape(cpu.sizes().begin(), cpu.sizes().end());
      write_dataset(group.get(), name, types.file, types.memory, shape, cpu.data_ptr());
    }
  }
  check_hdf5(H5Fflush(file.get(), H5F_SCOPE_GLOBAL), "cannot flush " + path.string());
}

}  // namespace

void write_tensor_groups(const std::filesystem::path& path,
                         const std::map<std::string, NamedTensors>& groups) {
  write_unsealed(path, groups);
  seal_file(path);
}

std::map<std::string, NamedTensors> read_tensor_groups(const std::filesystem::path& path) {
  if (!std::filesystem::is_regular_file(path)) {
    throw DataError("state file " + path.string() + " does not exist; check the path");
  }
  const auto check = check_file_checksum(path);
  if (check.state != ChecksumState::kVerified) {
    throw DataError(check.problem + (check.state == ChecksumState::kDamaged
                                         ? ""
                                         : " (damaged, or not written by cflrun)"));
  }
  const Hdf5Handle file = open_hdf5_file_read_only(path);
  std::map<std::string, NamedTensors> groups;
  for (const auto& group_name : member_names(file.get())) {
    const Hdf5Handle group =
        make_handle(H5Gopen2(file.get(), group_name.c_str(), H5P_DEFAULT), H5Gclose,
                    "cannot open group " + group_name + " in " + path.string());
    auto& tensors = groups[group_name];
    for (const auto& name : member_names(group.get())) {
      tensors.emplace(name, read_dataset_tensor(group.get(), name));
    }
  }
  return groups;
}

}  // namespace cflrun::io
