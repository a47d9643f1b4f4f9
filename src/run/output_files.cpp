#include <cflrun/run/output_files.hpp>

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <map>
#include <set>
#include <system_error>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cflrun/cli/option_kinds.hpp>
#include <cflrun/core/error.hpp>

namespace cflrun::run {
namespace {

/// The options that do not change a run's results: placement and bookkeeping.
const std::set<std::string>& result_neutral_options() {
  static const auto names =
      cli::option_names({core::OptionKind::kPlacement, core::OptionKind::kBookkeeping});
  return names;
}

std::string holder_description() {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  const char* job = std::getenv("SLURM_JOB_ID");
  const auto now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  char when[64] = {};
  std::strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", std::localtime(&now));
  return std::string("host ") + host + ", pid " + std::to_string(getpid()) +
         (job != nullptr ? std::string(", SLURM job ") + job : std::string()) + ", since " + when;
}

std::string read_all(int fd) {
  std::string text(512, '\0');
  const auto length = pread(fd, text.data(), text.size(), 0);
  text.resize(length > 0 ? static_cast<std::size_t>(length) : 0);
  return text;
}

}  // namespace

OutputPaths output_paths(const std::filesystem::path& out) {
  return {out, out.string() + ".partial", out.string() + ".checkpoint", out.string() + ".lock"};
}

RunLock::RunLock(const std::filesystem::path& path) : path_(path) {
  std::error_code error;
  if (!path.parent_path().empty()) {
    std::filesystem::create_directories(path.parent_path(), error);
  }
  // A holder removes the lock file before it unlocks, so the file this run opened and locked may
  // no longer be the one at `path` (a third run may have made and locked a new one): a lock counts
  // only while `path` still names the locked file; else try again on the new file.
  while (!try_lock()) {
  }
  const auto me = holder_description();
  if (ftruncate(fd_, 0) != 0 || pwrite(fd_, me.data(), me.size(), 0) < 0) {
    // The lock holds without the description; only the message of a refused run is poorer.
  }
}

bool RunLock::try_lock() {
  fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    throw ConfigError("cannot create the lock file " + path_.string() +
                      " beside --out: " + std::generic_category().message(errno) +
                      "; check that the directory is writable");
  }
  if (flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const auto holder = read_all(fd_);
    ::close(fd_);
    fd_ = -1;
    throw ConfigError("another run is writing this --out (" +
                      (holder.empty() ? std::string("unknown") : holder) + ", lock " +
                      path_.string() + "); wait for it to end, or choose another --out");
  }
  struct stat locked {};
  struct stat named {};
  if (fstat(fd_, &locked) == 0 && stat(path_.c_str(), &named) == 0 &&
      locked.st_dev == named.st_dev && locked.st_ino == named.st_ino) {
    return true;
  }
  ::close(fd_);  // the file was removed (and maybe replaced) between open and flock
  fd_ = -1;
  return false;
}

RunLock::~RunLock() {
  if (fd_ >= 0) {
    std::error_code error;
    std::filesystem::remove(path_, error);  // while still locked: no other run can be between
    flock(fd_, LOCK_UN);
    ::close(fd_);
  }
}

std::vector<std::string> config_differences(
    const std::vector<std::pair<std::string, std::string>>& requested,
    const std::vector<std::pair<std::string, std::string>>& recorded) {
  const std::map<std::string, std::string> had(recorded.begin(), recorded.end());
  std::vector<std::string> differences;
  for (const auto& [name, value] : requested) {
    if (result_neutral_options().count(name) != 0) {
      continue;
    }
    const auto found = had.find(name);
    if (found == had.end()) {  // recorded by an older build: a difference unless at the default
      const auto by_default = cli::default_option_values().find(name);
      if (by_default == cli::default_option_values().end() || by_default->second != value) {
        differences.push_back("--" + name + ": " + value + " (not recorded)");
      }
    } else if (found->second != value) {
      differences.push_back("--" + name + ": " + value + " (recorded " + found->second + ")");
    }
  }
  return differences;
}

void require_same_options(const std::vector<std::pair<std::string, std::string>>& requested,
                          const std::vector<std::pair<std::string, std::string>>& recorded,
                          const std::string& subject, const std::string& fix) {
  const auto differences = config_differences(requested, recorded);
  if (differences.empty()) {
    return;
  }
  std::string list;
  for (const auto& difference : differences) {
    list += "\n  " + difference;
  }
  throw ConfigError(subject + " of other options:" + list + "\n" + fix);
}

}  // namespace cflrun::run
