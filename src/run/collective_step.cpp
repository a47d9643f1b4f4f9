#include <cflrun/run/collective_step.hpp>
#include <cflrun/core/printable.hpp>

namespace cflrun::run {

void print_error(const comm::Communicator& comm, const std::string& message) {
  if (comm.size() > 1) {
    std::cerr << "cflrun (rank " << comm.rank() << "): error: " << core::printable(message)
              << std::endl;
  } else {
    std::cerr << "cflrun: error: " << core::printable(message) << std::endl;
  }
}

}  // namespace cflrun::run
