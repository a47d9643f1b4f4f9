#pragma once
/// @file
/// Reader of IDX files, the format of MNIST and Fashion-MNIST (LeCun et al., "The MNIST database
/// of handwritten digits"), plain or gzip-compressed.
///
/// Layout: two zero bytes, a type byte, a byte giving the number of dimensions D, then D big-endian
/// uint32 sizes, then the data in row-major order. Only type 0x08 (unsigned byte) is supported,
/// which is what MNIST and Fashion-MNIST use for both images and labels.

#include <filesystem>
#include <string>

#include <torch/types.h>

namespace cflrun::io {

/// Reads a whole IDX file of unsigned bytes, gzip-compressed or not (zlib detects which).
/// @param path  the file, e.g. `.../train-images-idx3-ubyte.gz`.
/// @return      uint8 tensor whose shape is the file's D sizes (1 <= D <= 4), e.g. [60000, 28, 28]
///              for training images or [60000] for labels; contiguous, owned by the tensor.
/// @throws DataError (message names `path`) if the file is missing or unreadable, if its first two
///         bytes are not zero, if the type byte is not 0x08, if D is outside [1, 4], if a size is
///         zero or the data would exceed 2^31 bytes, if the data are shorter than the product of
///         the sizes (truncated) or longer (trailing bytes), or if the gzip stream is corrupt
///         (with zlib's own message).
torch::Tensor read_idx(const std::filesystem::path& path);

/// Finds the file of an IDX dataset component, compressed or not.
/// @param dir   the directory searched.
/// @param stem  the file name without ".gz", e.g. "t10k-labels-idx1-ubyte".
/// @return      `dir/stem.gz` if it exists, else `dir/stem` if it exists.
/// @throws DataError listing both paths tried if neither exists.
std::filesystem::path find_idx_file(const std::filesystem::path& dir, const std::string& stem);

}  // namespace cflrun::io
