#include <cflrun/run/collective_step.hpp>

namespace cflrun::run {

void print_error(const comm::Communicator& comm, const std::string& message) {
  if (comm.size() > 1) {
    std::cerr << "cflrun (rank " << comm.rank() << "): error: " << message << std::endl;
  } else {
    std::cerr << "cflrun: error: " << message << std::endl;
  }
}

}  // namespace cflrun::run
