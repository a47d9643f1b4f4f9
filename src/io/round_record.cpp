#include <cflrun/core/error.hpp>
#include <cflrun/io/result_writer.hpp>

namespace cflrun::io {

const torch::Tensor* RoundRecord::find(const std::string& path) const {
  const auto found = rows_.find(path);
  return found == rows_.end() ? nullptr : &found->second;
}

double RoundRecord::number(const std::string& path) const {
  const auto* row = find(path);
  if (row == nullptr || row->numel() != 1) {
    throw ShapeError("RoundRecord: " + path + " is " +
                     (row == nullptr ? std::string("unset") : c10::str(row->numel(), " values")) +
                     ", not one value");
  }
  return row->item<double>();
}

}  // namespace cflrun::io
