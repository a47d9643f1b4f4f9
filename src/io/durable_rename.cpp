#include <cflrun/io/durable_rename.hpp>

#include <fcntl.h>
#include <unistd.h>

namespace cflrun::io {

std::error_code durable_rename(const std::filesystem::path& from,
                               const std::filesystem::path& to) noexcept {
  const int fd = ::open(from.c_str(), O_RDONLY);
  if (fd >= 0) {
    ::fsync(fd);
    ::close(fd);
  }
  std::error_code error;
  std::filesystem::rename(from, to, error);
  return error;
}

}  // namespace cflrun::io
