#include <cflrun/data/datasets/fmnist.hpp>

namespace cflrun::data {

std::string FashionMnistSource::how_to_obtain() const {
  return "install Fashion-MNIST with `apt-get install dataset-fashion-mnist` or pass --data-dir "
         "with a directory holding its four IDX files";
}

}  // namespace cflrun::data
