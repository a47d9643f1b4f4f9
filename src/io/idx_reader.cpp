#include <cflrun/io/idx_reader.hpp>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

#include <zlib.h>

#include <cflrun/core/error.hpp>

namespace cflrun::io {
namespace {

constexpr int kTypeUnsignedByte = 0x08;
constexpr int kMaxDims = 4;
constexpr std::int64_t kMaxDataBytes = std::int64_t{1} << 31;
constexpr std::int64_t kMagicBytes = 4;
constexpr std::int64_t kBytesPerSize = 4;
// gzread takes an unsigned count; reading in chunks keeps every call far below its limit.
constexpr std::int64_t kReadChunkBytes = std::int64_t{1} << 30;

struct GzCloser {
  void operator()(gzFile_s* file) const noexcept { gzclose(file); }
};
using GzHandle = std::unique_ptr<gzFile_s, GzCloser>;

[[noreturn]] void fail(const std::filesystem::path& path, const std::string& what) {
  throw DataError("IDX file " + path.string() + ": " + what);
}

std::string hex_byte(int value) {
  constexpr const char* kDigits = "0123456789ABCDEF";
  return std::string("0x") + kDigits[(value >> 4) & 0xF] + kDigits[value & 0xF];
}

std::string idx_type_name(int type) {
  switch (type) {
    case 0x08:
      return "unsigned byte";
    case 0x09:
      return "signed byte";
    case 0x0B:
      return "int16";
    case 0x0C:
      return "int32";
    case 0x0D:
      return "float32";
    case 0x0E:
      return "float64";
    default:
      return "not an IDX type";
  }
}

std::string join_sizes(const std::vector<std::int64_t>& sizes) {
  std::string text = "[";
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    text += (i == 0 ? "" : ", ") + std::to_string(sizes[i]);
  }
  return text + "]";
}

/// zlib's description of the stream's error state, with its code; empty if there is none.
std::string zlib_error(gzFile file, const std::filesystem::path& path, int* code) {
  const char* raw = gzerror(file, code);
  if (*code == Z_OK)
    return "";
  if (*code == Z_ERRNO)
    return std::strerror(errno);
  // gzerror prefixes the path that gzopen received; the caller names the file already.
  const std::string message = raw;
  const std::string prefix = path.string() + ": ";
  return message.rfind(prefix, 0) == 0 ? message.substr(prefix.size()) : message;
}

GzHandle open_idx(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    fail(path, "file does not exist");
  if (!std::filesystem::is_regular_file(path, ec))
    fail(path, "not a regular file");
  GzHandle file(gzopen(path.c_str(), "rb"));
  if (!file)
    fail(path, std::string("cannot be opened: ") + std::strerror(errno));
  return file;
}

/// Reads up to `count` bytes; returns how many were read (fewer only at the end of the data).
/// @throws DataError with zlib's message if the gzip stream is corrupt.
std::int64_t read_up_to(gzFile file, const std::filesystem::path& path, void* buffer,
                        std::int64_t count) {
  auto* bytes = static_cast<unsigned char*>(buffer);
  std::int64_t total = 0;
  while (total < count) {
    const auto chunk = static_cast<unsigned>(std::min(count - total, kReadChunkBytes));
    const int got = gzread(file, bytes + total, chunk);
    if (got <= 0)
      break;
    total += got;
  }
  int code = Z_OK;
  const std::string message = zlib_error(file, path, &code);
  // Z_BUF_ERROR is a gzip stream that ends early: reported by the caller as truncation.
  if (code != Z_OK && code != Z_BUF_ERROR) {
    fail(path, "corrupt gzip stream (zlib: " + message + "); re-download or regenerate the file");
  }
  return total;
}

/// Reads exactly `count` bytes of the part named `what`, or fails naming expected and found sizes.
void read_exactly(gzFile file, const std::filesystem::path& path, void* buffer, std::int64_t count,
                  const std::string& what) {
  const std::int64_t got = read_up_to(file, path, buffer, count);
  if (got == count)
    return;
  int code = Z_OK;
  const std::string message = zlib_error(file, path, &code);
  fail(path, "expected " + std::to_string(count) + " bytes of " + what + ", found " +
                 std::to_string(got) + " (truncated?" +
                 (message.empty() ? "" : " zlib: " + message) + ")");
}

void check_magic(const std::filesystem::path& path, const std::array<unsigned char, 4>& magic) {
  if (magic[0] != 0 || magic[1] != 0) {
    fail(path, "expected the IDX magic to start with 0x00 0x00, found " + hex_byte(magic[0]) + " " +
                   hex_byte(magic[1]) + " (not an IDX file)");
  }
  if (magic[2] != kTypeUnsignedByte) {
    fail(path, "expected data type 0x08 (unsigned byte), found " + hex_byte(magic[2]) + " (" +
                   idx_type_name(magic[2]) + "); only unsigned-byte IDX files are supported");
  }
  if (magic[3] < 1 || magic[3] > kMaxDims) {
    fail(path, "expected 1 to " + std::to_string(kMaxDims) + " dimensions, found " +
                   std::to_string(magic[3]));
  }
}

std::vector<std::int64_t> read_sizes(gzFile file, const std::filesystem::path& path, int dims) {
  std::vector<unsigned char> raw(static_cast<std::size_t>(dims * kBytesPerSize));
  read_exactly(file, path, raw.data(), static_cast<std::int64_t>(raw.size()), "dimension sizes");
  std::vector<std::int64_t> sizes(static_cast<std::size_t>(dims));
  for (std::size_t d = 0; d < sizes.size(); ++d) {
    const unsigned char* b = &raw[d * kBytesPerSize];
    sizes[d] = (std::int64_t{b[0]} << 24) | (std::int64_t{b[1]} << 16) | (std::int64_t{b[2]} << 8) |
               std::int64_t{b[3]};
  }
  std::int64_t total = 1;
  for (const std::int64_t size : sizes) {
    total *= size;  // at most 2^31 * 2^32 before the check below: no overflow
    if (size == 0 || total >= kMaxDataBytes) {
      fail(path, "dimension sizes " + join_sizes(sizes) +
                     " are invalid: each must be positive and their product below 2^31 bytes");
    }
  }
  return sizes;
}

}  // namespace

torch::Tensor read_idx(const std::filesystem::path& path) {
  const GzHandle file = open_idx(path);
  std::array<unsigned char, kMagicBytes> magic{};
  read_exactly(file.get(), path, magic.data(), kMagicBytes, "header");
  check_magic(path, magic);
  const std::vector<std::int64_t> sizes = read_sizes(file.get(), path, magic[3]);

  torch::Tensor data = torch::empty(sizes, torch::kUInt8);
  read_exactly(file.get(), path, data.data_ptr<std::uint8_t>(), data.numel(),
               "data for sizes " + join_sizes(sizes));
  unsigned char extra = 0;
  if (read_up_to(file.get(), path, &extra, 1) != 0) {
    fail(path, "found bytes after the " + std::to_string(data.numel()) +
                   " data bytes that the header announces (corrupt file)");
  }
  return data;
}

std::filesystem::path find_idx_file(const std::filesystem::path& dir, const std::string& stem) {
  const std::filesystem::path compressed = dir / (stem + ".gz");
  const std::filesystem::path plain = dir / stem;
  std::error_code ec;
  if (std::filesystem::exists(compressed, ec))
    return compressed;
  if (std::filesystem::exists(plain, ec))
    return plain;
  throw DataError("IDX file " + stem + " not found: tried " + compressed.string() + " and " +
                  plain.string());
}

}  // namespace cflrun::io
