#include <cflrun/core/printable.hpp>

#include <array>
#include <cstdio>

namespace cflrun::core {
namespace {

constexpr std::size_t kHeadBytes = 1500;
constexpr std::size_t kTailBytes = 300;

/// Length of the valid UTF-8 sequence starting at text[at] (2-4), or 0 if there is none.
std::size_t utf8_sequence(const std::string& text, std::size_t at) {
  const auto lead = static_cast<unsigned char>(text[at]);
  const std::size_t length = lead >= 0xc2 && lead <= 0xdf   ? 2
                             : lead >= 0xe0 && lead <= 0xef ? 3
                             : lead >= 0xf0 && lead <= 0xf4 ? 4
                                                            : 0;
  if (length == 0 || at + length > text.size()) {
    return 0;
  }
  for (std::size_t i = 1; i < length; ++i) {
    if ((static_cast<unsigned char>(text[at + i]) & 0xc0) != 0x80) {
      return 0;
    }
  }
  return length;
}

std::string escaped(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t at = 0; at < text.size();) {
    const auto byte = static_cast<unsigned char>(text[at]);
    const std::size_t utf8 = byte >= 0x80 ? utf8_sequence(text, at) : 0;
    if (utf8 > 0) {
      out.append(text, at, utf8);
      at += utf8;
    } else if ((byte < 0x20 && byte != '\n' && byte != '\t') || byte >= 0x7f) {
      std::array<char, 8> code{};
      std::snprintf(code.data(), code.size(), "\\x%02x", byte);
      out += code.data();
      ++at;
    } else {
      out += text[at++];
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
