#include <cflrun/io/result_rows.hpp>

#include <cstring>

#include <cflrun/io/hdf5_file.hpp>
#include <cflrun/io/hdf5_tensor.hpp>

namespace cflrun::io {
namespace {

/// The difference between the dataset as read and the kept rows, "" if none.
std::string dataset_difference(const torch::Tensor& read, const torch::Tensor& kept, bool whole) {
  if (read.scalar_type() != kept.scalar_type() || read.dim() != kept.dim() ||
      read.sizes().slice(1) != kept.sizes().slice(1)) {
    return "has type " + std::string(c10::toString(read.scalar_type())) + " " +
           c10::str(read.sizes()) + ", expected " + c10::toString(kept.scalar_type()) + " " +
           c10::str(kept.sizes());
  }
  const auto rounds = kept.size(0);
  if (read.size(0) < rounds || (whole && read.size(0) != rounds)) {
    return "holds " + std::to_string(read.size(0)) + " rounds, expected " + std::to_string(rounds);
  }
  const auto prefix = read.narrow(0, 0, rounds).contiguous();
  const auto expected = kept.contiguous();
  if (std::memcmp(prefix.data_ptr(), expected.data_ptr(),
                  static_cast<std::size_t>(expected.nbytes())) != 0) {
    return "differs from the rounds written in one or more of its first " + std::to_string(rounds) +
           " rounds";
  }
  return "";
}

}  // namespace

std::string row_difference(const std::filesystem::path& path, const NamedTensors& rows,
                           bool whole) noexcept {
  try {
    const Hdf5Handle file = open_hdf5_file_read_only(path);
    for (const auto& [name, kept] : rows) {
      const auto difference =
          dataset_difference(read_dataset_tensor(file.get(), name), kept, whole);
      if (!difference.empty()) {
        return path.string() + ": " + name + " " + difference;
      }
    }
    return "";
  } catch (const std::exception& e) {
    return path.string() + ": " + e.what();
  }
}

}  // namespace cflrun::io
