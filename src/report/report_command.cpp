#include <cflrun/report/report_command.hpp>
#include <iostream>
namespace cflrun::report {
int run_report_command(int, const char* const[]) { std::cerr << "cflrun report: not built yet\n"; return 2; }
}  // namespace cflrun::report
