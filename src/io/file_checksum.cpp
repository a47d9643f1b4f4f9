#include <cflrun/io/file_checksum.hpp>

#include <algorithm>
#include <array>
#include <cstdio>
#include <fstream>
#include <system_error>
#include <vector>

#include <boost/crc.hpp>
#include <fcntl.h>
#include <unistd.h>

#include <cflrun/core/error.hpp>

namespace cflrun::io {
namespace {

constexpr const char* kSealPrefix = "cflrun-crc32 ";
constexpr std::size_t kReadChunk = std::size_t{1} << 20;

/// CRC-32 (IEEE 802.3, Boost.CRC) and count of the bytes of `file` from its current position on.
std::pair<std::uint32_t, std::uint64_t> checksum_rest(std::ifstream& file) {
  boost::crc_32_type crc;
  std::vector<char> chunk(kReadChunk);
  std::uint64_t total = 0;
  while (file) {
    file.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    const auto got = file.gcount();
    crc.process_bytes(chunk.data(), static_cast<std::size_t>(got));
    total += static_cast<std::uint64_t>(got);
  }
  return {crc.checksum(), total};
}

std::string seal_text(std::uint32_t crc, std::uint64_t bytes) {
  std::array<char, 96> text{};
  std::snprintf(text.data(), text.size(), "%s%08x %llu\n", kSealPrefix, crc,
                static_cast<unsigned long long>(bytes));
  return text.data();
}

ChecksumCheck damaged(const std::filesystem::path& path, const std::string& what) {
  return {ChecksumState::kDamaged, path.string() + " " + what};
}

}  // namespace

void seal_file(const std::filesystem::path& path) {
  std::ifstream file(path, std::ios::binary);
  file.seekg(static_cast<std::streamoff>(kChecksumBlockBytes));
  if (!file) {
    throw Hdf5Error("cannot read " + path.string() +
                    " to checksum it (missing, or shorter than its " +
                    std::to_string(kChecksumBlockBytes) + "-byte user block)");
  }
  const auto [crc, bytes] = checksum_rest(file);
  std::string block = seal_text(crc, bytes);
  block.resize(kChecksumBlockBytes, '\0');
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  const bool written =
      fd >= 0 &&
      ::pwrite(fd, block.data(), block.size(), 0) == static_cast<ssize_t>(block.size()) &&
      ::fsync(fd) == 0;
  const int error = errno;
  if (fd >= 0) {
    ::close(fd);
  }
  if (!written) {
    throw Hdf5Error("cannot write the checksum of " + path.string() + ": " +
                    std::generic_category().message(error));
  }
}

ChecksumCheck check_file_checksum(const std::filesystem::path& path) {
  std::ifstream file(path, std::ios::binary);
  std::string block(kChecksumBlockBytes, '\0');
  file.read(block.data(), static_cast<std::streamsize>(block.size()));
  if (!file) {
    return {ChecksumState::kUnsealed, path.string() + " cannot be read or has no checksum block"};
  }
  if (std::all_of(block.begin(), block.end(), [](char c) { return c == '\0'; }) ||
      block.rfind("\x89HDF", 0) == 0) {
    return {ChecksumState::kUnsealed, path.string() + " carries no checksum (not sealed)"};
  }
  const auto end = block.find('\n');
  if (block.rfind(kSealPrefix, 0) != 0 || end == std::string::npos ||
      block.find_first_not_of('\0', end + 1) != std::string::npos) {
    return damaged(path, "has a damaged checksum block");
  }
  const auto [crc, bytes] = checksum_rest(file);
  const auto found = seal_text(crc, bytes);
  if (block.substr(0, end + 1) != found) {
    return damaged(path, "does not match its checksum (sealed: " + block.substr(0, end) +
                             "; read: " + found.substr(0, found.size() - 1) + "): it is damaged");
  }
  return {ChecksumState::kVerified, ""};
}

}  // namespace cflrun::io
