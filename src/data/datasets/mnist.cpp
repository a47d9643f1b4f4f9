#include <cflrun/data/datasets/mnist.hpp>

namespace cflrun::data {

std::string MnistSource::how_to_obtain() const {
  return "install the official MNIST as datasets/mnist by running datasets/get_mnist.sh in the "
         "source tree (it downloads and verifies the files; --from DIR takes them from a copy), or "
         "pass --data-dir with a directory holding the four MNIST IDX files (datasets/README.md)";
}

}  // namespace cflrun::data
