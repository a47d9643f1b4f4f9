#pragma once
/// @file
/// Whole-file checksums of finished HDF5 files (complete result files, checkpoints): a CRC-32 of
/// every byte after the file's first kChecksumBlockBytes, written into those bytes, which the file
/// reserves as its HDF5 user block (HDF5 and h5py skip it). Any changed, missing or added byte
/// after sealing makes the check fail (docs/reliability.md).

#include <cstdint>
#include <filesystem>
#include <string>

namespace cflrun::io {

/// Size of the user block a sealable HDF5 file reserves at its start (bytes; HDF5 needs a power
/// of two >= 512). Pass it to create_hdf5_file.
constexpr std::uint64_t kChecksumBlockBytes = 512;

/// What check_file_checksum found.
enum class ChecksumState {
  kVerified,  ///< the seal is there and every byte after it matches it.
  kUnsealed,  ///< no seal: the user block is all zeros or absent (a file being written, or one
              ///< written before cflrun sealed its files).
  kDamaged,   ///< a seal that the bytes do not match, or a block that is not a seal.
};

/// The outcome of check_file_checksum.
struct ChecksumCheck {
  ChecksumState state = ChecksumState::kUnsealed;
  std::string problem;  ///< for kDamaged/kUnsealed: what was found, naming the file.
};

/// Seals a closed file created with a kChecksumBlockBytes user block: reads every byte after the
/// block, writes "cflrun-crc32 <8 hex digits> <bytes after the block>\n" into the block (zeros
/// after it), then flushes the file to disk (fsync).
/// @throws Hdf5Error naming `path` if it cannot be read, written or flushed, or is shorter than the
/// block.
void seal_file(const std::filesystem::path& path);

/// Checks the seal of `path` against its bytes (reads the whole file once).
/// Never throws for a damaged file (that is kDamaged); an unreadable file is kDamaged too.
ChecksumCheck check_file_checksum(const std::filesystem::path& path);

}  // namespace cflrun::io
