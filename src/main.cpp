// cflrun: clustered federated learning experiments on MPI ranks. Only main() lives here.
#include <iostream>
#include <string>

#include <cflrun/cli/models_command.hpp>
#include <cflrun/cli/run_options.hpp>
#include <cflrun/comm/communicator.hpp>
#include <cflrun/core/build_info.hpp>
#include <cflrun/core/error.hpp>
#include <cflrun/io/hdf5_library.hpp>
#include <cflrun/report/report_command.hpp>
#include <cflrun/sweep/sweep_command.hpp>
#include <cflrun/run/check_command.hpp>
#include <cflrun/run/collective_step.hpp>
#include <cflrun/run/experiment.hpp>
#include <cflrun/openmp/spin_count.hpp>
#include <cflrun/run/stop_signals.hpp>
#include <cflrun/core/printable.hpp>

namespace {

constexpr int kExitFailure = 1;
/// A rank did not answer within --round-timeout (as timeout(1)); --resume continues from the last
/// checkpoint.
constexpr int kExitWatchdog = 124;

void print_version() {
  std::cout << "cflrun " << cflrun::core::version() << "\ngit commit " << cflrun::core::git_commit()
            << "\nLibTorch " << cflrun::core::torch_version() << "\nCUDA "
            << cflrun::core::cuda_support() << "\nCPU kernels " << cflrun::core::cpu_kernels()
            << "\nOpenMP " << cflrun::openmp::spin_count_setting() << std::endl;
}

/// Subcommands that read or write files only: no MPI, one process.
int run_tool(const std::string& name, int argc, char** argv) {
  try {
    if (name == "models") {
      return cflrun::cli::run_models_command(argc, argv, std::cout, std::cerr);
    }
    return name == "report" ? cflrun::report::run_report_command(argc, argv)
                            : cflrun::sweep::run_sweep_command(argc, argv);
  } catch (const cflrun::Error& e) {
    std::cerr << "cflrun " << name << ": error: " << cflrun::core::printable(e.what()) << std::endl;
    return kExitFailure;
  }
}

}  // namespace

int main(int argc, char** argv) {
  cflrun::io::keep_hdf5_out_of_exit();
  const std::string subcommand = argc > 1 ? argv[1] : "";
  if (subcommand == "report" || subcommand == "sweep" || subcommand == "models") {
    return run_tool(argv[1], argc - 1, argv + 1);
  }
  cflrun::openmp::use_default_spin_count(argv);  // before MPI starts: may execute cflrun again
  cflrun::comm::Environment mpi(argc, argv);
  cflrun::comm::Communicator comm(mpi.world());
  cflrun::run::install_stop_signals();
  if (argc > 1 && std::string(argv[1]) == "check") {
    return cflrun::run::run_check_command(argc - 1, argv + 1, comm, std::cout, std::cerr);
  }
  try {
    const auto parsed = cflrun::run::collective_step(
        comm, [&] { return cflrun::cli::parse_command_line(argc, argv); });
    if (parsed.help || parsed.version) {
      if (comm.is_root()) {
        parsed.help ? void(std::cout << cflrun::cli::help_text() << std::endl) : print_version();
      }
      return 0;
    }
    cflrun::run::run_experiment(parsed.options, comm);
    return 0;
  } catch (const cflrun::run::ReportedError&) {
    return kExitFailure;
  } catch (const cflrun::run::Interrupted&) {
    return cflrun::run::kExitInterrupted;  // checkpoint written: --resume continues
  } catch (const cflrun::comm::WatchdogTimeout& e) {
    cflrun::run::print_error(comm, e.what());
    comm.abort(kExitWatchdog);
  } catch (const std::exception& e) {
    // Only this rank may have failed while others wait in a collective: end them all (a worker
    // first tells rank 0, which marks the result file failed with its message).
    cflrun::run::print_error(comm, e.what());
    comm.end_job_after_error(e.what(), kExitFailure);
  }
}
