#include <cflrun/io/hdf5_file.hpp>

#include <cerrno>
#include <system_error>

#include <fcntl.h>
#include <sys/stat.h>

namespace cflrun::io {
namespace {

Hdf5Handle make_file_access_properties() {
  Hdf5Handle properties = make_handle(H5Pcreate(H5P_FILE_ACCESS), H5Pclose,
                                      "cannot create HDF5 file access properties");
  check_hdf5(H5Pset_file_locking(properties.get(), /*use_file_locking=*/true,
                                 /*ignore_when_disabled=*/true),
             "cannot set HDF5 file locking");
  return properties;
}

}  // namespace

Hdf5Handle create_hdf5_file(const std::filesystem::path& path, bool truncate,
                            std::uint64_t user_block_bytes) {
  silence_hdf5_error_printing();
  const Hdf5Handle access = make_file_access_properties();
  const Hdf5Handle creation = make_handle(H5Pcreate(H5P_FILE_CREATE), H5Pclose,
                                          "cannot create HDF5 file creation properties");
  check_hdf5(H5Pset_userblock(creation.get(), user_block_bytes),
             "cannot reserve a user block in " + path.string());
  const unsigned flags = truncate ? H5F_ACC_TRUNC : H5F_ACC_EXCL;
  return make_handle(H5Fcreate(path.c_str(), flags, creation.get(), access.get()), H5Fclose,
                     "cannot create HDF5 file " + path.string());
}

Hdf5Handle open_hdf5_file_read_only(const std::filesystem::path& path) {
  silence_hdf5_error_printing();
  const Hdf5Handle access = make_file_access_properties();
  return make_handle(H5Fopen(path.c_str(), H5F_ACC_RDONLY, access.get()), H5Fclose,
                     "cannot open HDF5 file " + path.string());
}

Hdf5Handle open_hdf5_file_read_write(const std::filesystem::path& path) {
  silence_hdf5_error_printing();
  const Hdf5Handle access = make_file_access_properties();
  return make_handle(H5Fopen(path.c_str(), H5F_ACC_RDWR, access.get()), H5Fclose,
                     "cannot open HDF5 file " + path.string() + " for writing");
}

void reserve_file_space(hid_t file, const std::filesystem::path& path, std::uint64_t bytes) {
  void* handle = nullptr;
  check_hdf5(H5Fget_vfd_handle(file, H5P_DEFAULT, &handle),
             "cannot reach the file of " + path.string());
  const int fd = *static_cast<int*>(handle);  // the sec2 driver's descriptor
  struct stat status {};
  if (handle == nullptr || fstat(fd, &status) != 0) {
    return;
  }
  if (fallocate(fd, FALLOC_FL_KEEP_SIZE, status.st_size, static_cast<off_t>(bytes)) == 0) {
    return;
  }
  const int error = errno;
  if (error == EOPNOTSUPP || error == ENOSYS) {
    return;  // e.g. some network file systems: writes then meet a full disk as they come
  }
  throw_hdf5_error("cannot reserve space for the next round in " + path.string() + ": " +
                   std::generic_category().message(error) +
                   (error == ENOSPC || error == EDQUOT
                        ? " (the disk or quota is full: free space there or choose another --out)"
                        : std::string()));
}

}  // namespace cflrun::io
