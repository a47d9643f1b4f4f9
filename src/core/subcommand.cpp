#include <cflrun/core/subcommand.hpp>

#include <cflrun/core/error.hpp>
#include <cflrun/core/printable.hpp>

namespace cflrun::core {

int run_subcommand(const std::string& tool, std::ostream& err, const std::function<int()>& body) {
  try {
    return body();
  } catch (const ConfigError& e) {
    err << "cflrun " << tool << ": error: " << printable(e.what()) << std::endl;
    return kExitUsage;
  }
}

}  // namespace cflrun::core
