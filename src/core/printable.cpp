#include <cflrun/core/printable.hpp>

#include <array>
#include <cstdio>

namespace cflrun::core {
namespace {

constexpr std::size_t kHeadBytes = 1500;
constexpr std::size_t kTailBytes = 300;

std::string escaped(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if ((byte < 0x20 && c != '\n' && c != '\t') || byte == 0x7f) {
      std::array<char, 8> code{};
      std::snprintf(code.data(), code.size(), "\\x%02x", byte);
      out += code.data();
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

std::string printable(const std::string& message) {
  if (message.size() <= kPrintableBytes) {
    return escaped(message);
  }
  const auto left_out = message.size() - kHeadBytes - kTailBytes;
  return escaped(message.substr(0, kHeadBytes)) + " ... [" + std::to_string(left_out) +
         " bytes left out] ... " + escaped(message.substr(message.size() - kTailBytes));
}

}  // namespace cflrun::core
