#pragma once
/// @file
/// Creating and opening HDF5 files. Includes <hdf5.h>: for the io area and its tests only
/// (see hdf5_handle.hpp).

#include <cstdint>
#include <filesystem>

#include <cflrun/io/hdf5_handle.hpp>

namespace cflrun::io {

/// Creates an HDF5 file in the default (HDF5 1.8-compatible) format, which h5py and h5dump of any
/// recent version read, and which stays readable after the writing process is killed (the 1.10
/// format would mark it "open for writing" until `h5clear -s` is run).
/// File locking is used where the file system supports it and skipped where it does not (as on
/// some Lustre and NFS mounts), instead of failing.
/// @param truncate  replace an existing file; if false, fail when the file exists.
/// @param user_block_bytes  bytes reserved before the HDF5 data (0, or a power of two >= 512:
///        kChecksumBlockBytes for a file that seal_file will seal, see file_checksum.hpp).
/// @throws Hdf5Error naming `path` if HDF5 cannot create it.
Hdf5Handle create_hdf5_file(const std::filesystem::path& path, bool truncate,
                            std::uint64_t user_block_bytes = 0);

/// Opens an existing HDF5 file read-only (file locking as in `create_hdf5_file`).
/// @throws Hdf5Error naming `path` if HDF5 cannot open it (e.g. another process is writing it:
///         set HDF5_USE_FILE_LOCKING=FALSE to peek at a running job's file at your own risk).
Hdf5Handle open_hdf5_file_read_only(const std::filesystem::path& path);

/// Opens an existing HDF5 file for reading and writing (file locking as in `create_hdf5_file`).
/// @throws Hdf5Error naming `path` if HDF5 cannot open it.
Hdf5Handle open_hdf5_file_read_write(const std::filesystem::path& path);

/// Reserves `bytes` of disk space past the end of the open file (fallocate, FALLOC_FL_KEEP_SIZE:
/// the file's size does not change), so that HDF5's next writes, which extend the file, cannot meet
/// a full disk half way. A run reserves a round's growth before appending it: on a full disk it
/// stops with the file exactly as it was. File systems without fallocate are passed over.
/// @throws Hdf5Error naming `path` if the disk or quota is full (ENOSPC, EDQUOT) or another error.
void reserve_file_space(hid_t file, const std::filesystem::path& path, std::uint64_t bytes);

}  // namespace cflrun::io
