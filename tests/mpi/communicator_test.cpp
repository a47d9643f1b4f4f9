// MPI tests of the communicator; own main, run under mpiexec with 3 ranks by CTest.
#include <cflrun/comm/communicator.hpp>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <string>

#include <gtest/gtest.h>

namespace cflrun::comm {
namespace {

MPI_Comm world() { return MPI_COMM_WORLD; }

TEST(Communicator, BroadcastsFromRankZero) {
  Communicator comm(world());
  std::vector<float> data(5, static_cast<float>(comm.rank()));
  if (comm.is_root()) {
    std::iota(data.begin(), data.end(), 1.5F);
  }
  comm.broadcast(data.data(), static_cast<std::int64_t>(data.size()));
  EXPECT_EQ(data, (std::vector<float>{1.5F, 2.5F, 3.5F, 4.5F, 5.5F}));
}

TEST(Communicator, GathersVariableSizesInRankOrder) {
  Communicator comm(world());
  // rank r sends r values equal to r (rank 0 sends nothing, like the server).
  const std::vector<double> local(static_cast<std::size_t>(comm.rank()), comm.rank());
  const auto all = comm.gather(local);
  if (comm.is_root()) {
    std::vector<double> expected;
    for (int r = 0; r < comm.size(); ++r) {
      expected.insert(expected.end(), static_cast<std::size_t>(r), r);
    }
    EXPECT_EQ(all, expected);
  } else {
    EXPECT_TRUE(all.empty());
  }
}

// A communicator is freed and another one created in the same process (each test here does so):
// no message of the old one may reach the new one. Rank 0 used to free its communicator while the
// workers' watchdog arrival messages could still be in flight, and once (CI, ctest -j2 load) this
// suite hung in the second test's communicator; the watchdog now receives them all first. The
// hang did not recur in 1 600 create/free cycles under load before that change, so this loop
// guards the teardown rather than reproducing that hang.
TEST(Communicator, ManyCommunicatorsOneAfterAnother) {
  for (int i = 0; i < 200; ++i) {
    Communicator comm(world());
    std::vector<double> local(static_cast<std::size_t>(comm.rank()), i);
    const auto all = comm.gather(local);
    int value = comm.is_root() ? i : -1;
    comm.broadcast(&value, 1);
    ASSERT_EQ(value, i);
    if (comm.is_root()) {
      ASSERT_EQ(all.size(), static_cast<std::size_t>(comm.size() * (comm.size() - 1) / 2));
    }
  }
}

TEST(Communicator, ReducesSumsOnRankZeroAndAgreesOnMinimum) {
  Communicator comm(world());
  const std::vector<double> local{1.0, static_cast<double>(comm.rank())};
  const auto sum = comm.reduce_sum(local);
  if (comm.is_root()) {
    const double n = comm.size();
    EXPECT_EQ(sum, (std::vector<double>{n, n * (n - 1) / 2}));
  }
  EXPECT_EQ(comm.all_min(comm.size() - comm.rank()), 1);
}

// MPI errors on the communicator return (MPI_ERRORS_RETURN) instead of aborting the job, so that
// the class can throw MpiError: a send to a rank that does not exist fails with MPI_ERR_RANK.
TEST(Communicator, MpiErrorsReturnInsteadOfAborting) {
  Communicator comm(world());
  MPI_Errhandler handler = MPI_ERRHANDLER_NULL;
  ASSERT_EQ(MPI_Comm_get_errhandler(comm.handle(), &handler), MPI_SUCCESS);
  EXPECT_EQ(handler, MPI_ERRORS_RETURN);
  MPI_Errhandler_free(&handler);
  int value = 1;
  const int rc = MPI_Send(&value, 1, MPI_INT, comm.size(), 0, comm.handle());
  int error_class = MPI_SUCCESS;
  MPI_Error_class(rc, &error_class);
  EXPECT_EQ(error_class, MPI_ERR_RANK);
}

TEST(Communicator, SeesAllRanksOnThisNode) {
  Communicator comm(world());
  EXPECT_EQ(comm.local_size(), comm.size());
  EXPECT_EQ(comm.local_rank(), comm.rank());
}

// Rank 0 times out on a gather the workers never reach (its timeout 0.5 s, theirs off). Returns
// rank 0's watchdog message; the workers wait in a barrier until rank 0 ends the job.
std::string gather_timeout_message(bool continue_rank0_first) {
  Communicator comm(world());
  comm.set_timeout(comm.is_root() ? 0.5 : 0.0);
  if (!comm.is_root()) {
    MPI_Barrier(world());
    return "";
  }
  if (continue_rank0_first) {
    std::raise(SIGCONT);  // as mpiexec continues a stopped server before ending the job
  }
  try {
    comm.gather({});
  } catch (const WatchdogTimeout& e) {
    return e.what();
  }
  return "";
}

// As `main` does after a WatchdogTimeout, rank 0 ends the job: exit status 0 when its checks
// passed (the timed-out gather cannot be finished or freed, so the ranks cannot finalize).
[[noreturn]] void end_job_with_result() {
  std::fflush(stdout);
  MPI_Abort(world(), ::testing::Test::HasFailure() ? 1 : 0);
  std::abort();
}

// Without a continue, the missing workers are named. Each watchdog test ends its job, so each runs
// in its own mpiexec (tests/mpi/CMakeLists.txt).
TEST(CommunicatorWatchdog, NamesLateWorkers) {
  const auto message = gather_timeout_message(false);
  EXPECT_NE(message.find("watchdog: rank 1 (host "), std::string::npos) << message;
  EXPECT_NE(message.find("did not reach collective 1"), std::string::npos) << message;
  end_job_with_result();
}

// A server continued after its last collective (it was stopped itself) must not blame the
// workers that timed out on it.
TEST(CommunicatorWatchdog, ContinuedServerBlamesItself) {
  const auto message = gather_timeout_message(true);
  EXPECT_NE(message.find("watchdog: this rank, rank 0 (host "), std::string::npos) << message;
  EXPECT_NE(message.find("was stopped and continued (SIGCONT)"), std::string::npos) << message;
  EXPECT_EQ(message.find("rank 1"), std::string::npos) << message;
  end_job_with_result();
}

}  // namespace
}  // namespace cflrun::comm

int main(int argc, char** argv) {
  cflrun::comm::Environment mpi(argc, argv);
  ::testing::InitGoogleTest(&argc, argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) {
    delete ::testing::UnitTest::GetInstance()->listeners().Release(
        ::testing::UnitTest::GetInstance()->listeners().default_result_printer());
  }
  return RUN_ALL_TESTS();
}
