#pragma once
/// @file
/// Test support (header-only, tests only): a temporary directory and writers of small IDX files,
/// plain or gzip-compressed, built byte by byte so that the reader is checked against an
/// independent encoder. Shared by tests/unit/io and tests/unit/data.

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

#include <zlib.h>

namespace cflrun::test {

using Bytes = std::vector<unsigned char>;

/// A fresh directory under the system temp dir, removed with its contents on destruction.
class TempDir {
 public:
  TempDir() {
    std::string name = (std::filesystem::temp_directory_path() / "cflrun-test-XXXXXX").string();
    if (mkdtemp(name.data()) == nullptr)
      throw std::runtime_error("mkdtemp failed for " + name);
    path_ = name;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  /// The directory.
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

/// The bytes of an IDX file: 0x00 0x00 type D, D big-endian uint32 sizes, then `data` as given.
inline Bytes idx_bytes(const std::vector<std::uint32_t>& sizes, const Bytes& data,
                       unsigned char type = 0x08) {
  Bytes out = {0x00, 0x00, type, static_cast<unsigned char>(sizes.size())};
  for (const std::uint32_t size : sizes) {
    for (const int shift : {24, 16, 8, 0})
      out.push_back(static_cast<unsigned char>(size >> shift));
  }
  out.insert(out.end(), data.begin(), data.end());
  return out;
}

/// Writes `bytes` to `path` unchanged.
inline void write_plain(const std::filesystem::path& path, const Bytes& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
  if (!out)
    throw std::runtime_error("cannot write " + path.string());
}

/// Writes `bytes` to `path` as one gzip stream (zlib gzopen "wb").
inline void write_gzip(const std::filesystem::path& path, const Bytes& bytes) {
  gzFile file = gzopen(path.c_str(), "wb");
  if (file == nullptr)
    throw std::runtime_error("gzopen failed for " + path.string());
  const int written = gzwrite(file, bytes.data(), static_cast<unsigned>(bytes.size()));
  const int closed = gzclose(file);
  if (written != static_cast<int>(bytes.size()) || closed != Z_OK) {
    throw std::runtime_error("gzwrite failed for " + path.string());
  }
}

/// Reads a whole file's bytes.
inline Bytes read_plain(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace cflrun::test
