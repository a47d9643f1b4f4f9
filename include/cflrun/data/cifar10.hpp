#pragma once
/// @file
/// CIFAR-10 in its standard binary version (https://www.cs.toronto.edu/~kriz/cifar.html).

#include <filesystem>

#include <cflrun/data/dataset.hpp>

namespace cflrun::data {

/// Loads `dir`/data_batch_1.bin .. data_batch_5.bin (train, concatenated in that order) and
/// `dir`/test_batch.bin (test). Each file is a sequence of 3 073-byte records: the label (0..9),
/// then the 1 024 red, 1 024 green and 1 024 blue bytes of a 32x32 image, row-major. Files of any
/// whole number of records are accepted (the official ones hold 10 000 each).
/// @return images [N, 3, 32, 32] uint8 (channels R, G, B), labels [N] int64; num_classes 10.
/// @throws DataError naming the file and how to obtain the data if a file is missing or
///         unreadable, empty, not a whole number of records (truncated or not CIFAR-10), or holds
///         a label outside [0, 10).
ImageDataset load_cifar10(const std::filesystem::path& dir);

}  // namespace cflrun::data
