#pragma once
/// @file
/// Messages that echo what a user gave (option values, config lines, file names) made safe to
/// print.

#include <cstddef>
#include <string>

namespace cflrun::core {

/// Longest message printable() passes on whole (bytes).
inline constexpr std::size_t kPrintableBytes = 2000;

/// `message` as it may go to a terminal or a log: each control character other than newline and
/// tab (escape sequences, BEL, NUL, CR, DEL) and each byte that is not part of valid UTF-8 (a
/// stray 0xFF) as \xNN; valid UTF-8 (an accented file name) passes unchanged. A message longer
/// than kPrintableBytes keeps its first 1 500 and last 300 bytes with "... [N bytes left out] ..."
/// between (a 10 MB config value would flood the log).
std::string printable(const std::string& message);

}  // namespace cflrun::core
