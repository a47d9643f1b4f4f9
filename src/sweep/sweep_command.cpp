#include <cflrun/sweep/sweep_command.hpp>
#include <iostream>
namespace cflrun::sweep {
int run_sweep_command(int, const char* const[]) { std::cerr << "cflrun sweep: not built yet\n"; return 2; }
}  // namespace cflrun::sweep
