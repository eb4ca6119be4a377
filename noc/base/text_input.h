// SPDX-License-Identifier: MIT
#pragma once
// The checks text inputs pass before they are parsed or written out again: every line-based
// reader (program files, message files) checks each line, and names that reach JSON outputs
// (layers, graphs) are checked to be UTF-8, which JSON requires.
#include <algorithm>
#include <string>
#include <string_view>

#include "noc/base/error.h"

namespace nocflow {

/// The offset of the first byte of `s` that is not part of well-formed UTF-8 (overlong forms,
/// surrogates and code points above U+10FFFF are not), or npos.
inline std::size_t invalid_utf8_at(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    // The length of the sequence and the range its second byte must be in (Unicode's table 3-7).
    int n = 0;
    unsigned char lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF)
      n = 2;
    else if (c >= 0xE0 && c <= 0xEF)
      n = 3, lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
    else if (c >= 0xF0 && c <= 0xF4)
      n = 4, lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
    else
      return i;
    if (i + static_cast<std::size_t>(n) > s.size()) return i;
    for (int k = 1; k < n; ++k) {
      const auto b = static_cast<unsigned char>(s[i + static_cast<std::size_t>(k)]);
      if (k == 1 ? b < lo || b > hi : b < 0x80 || b > 0xBF) return i;
    }
    i += static_cast<std::size_t>(n);
  }
  return std::string_view::npos;
}

/// `s` with each byte that is not part of well-formed UTF-8 replaced by U+FFFD: for labels
/// taken from file names, which a network is named after where its file names it not.
inline std::string utf8_replaced(std::string_view s) {
  std::string out;
  for (std::size_t at; (at = invalid_utf8_at(s)) != std::string_view::npos; s.remove_prefix(at + 1))
    out.append(s.substr(0, at)).append("\xEF\xBF\xBD");
  return out.append(s);
}

/// "0xNN", lower case.
inline std::string hex_byte(unsigned char c) {
  const char* const hex = "0123456789abcdef";
  return std::string("0x") + hex[c >> 4] + hex[c & 15];
}

/// Throws InputError("`where`: column N: byte 0xNN is not UTF-8") unless `s` is UTF-8.
inline void check_utf8(std::string_view s, const std::string& where) {
  const std::size_t at = invalid_utf8_at(s);
  if (at == std::string_view::npos) return;
  throw InputError(where + ": column " + std::to_string(at + 1) + ": byte " +
                   hex_byte(static_cast<unsigned char>(s[at])) + " is not UTF-8");
}

/// Throws InputError("`origin`:LINE:COLUMN: byte 0xNN is not UTF-8") unless the whole text
/// of a file is UTF-8.
inline void check_utf8_file(std::string_view text, const std::string& origin) {
  const std::size_t at = invalid_utf8_at(text);
  if (at == std::string_view::npos) return;
  const std::size_t line_start = text.rfind('\n', at) + 1;  // npos + 1 is 0: the first line
  const auto line =
      1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n');
  check_utf8(text.substr(line_start, at - line_start + 1), origin + ":" + std::to_string(line));
}

/// Throws InputError("`where`: column N: control character 0xNN ...") when a line of a text
/// input holds a control character other than tab or CR (a NUL would cut a message short), or
/// bytes that are not UTF-8.
inline void check_text_line(const std::string& line, const std::string& where) {
  for (std::size_t i = 0; i < line.size(); ++i) {
    const auto c = static_cast<unsigned char>(line[i]);
    if (c >= 0x20 || c == '\t' || c == '\r') continue;
    throw InputError(where + ": column " + std::to_string(i + 1) + ": control character " +
                     hex_byte(c) + " (is this a text file?)");
  }
  check_utf8(line, where);
}

/// `message` with each line longer than `limit` bytes cut in the middle, its first and last
/// parts kept ("... [98304 bytes left out] ..."), at UTF-8 character boundaries: an error
/// that echoes a 100 KB value or line keeps where it is and what is wrong, both at the ends.
inline std::string elide_long_lines(std::string_view message, std::size_t limit = 1000) {
  const std::size_t head = limit / 2, tail = limit / 4;
  // Back to a character's first byte: at most 3 bytes (a run of stray continuation bytes, not
  // UTF-8, is cut anywhere).
  auto boundary = [](std::string_view s, std::size_t at) {
    for (int back = 0;
         back < 3 && at > 0 && at < s.size() && (static_cast<unsigned char>(s[at]) & 0xC0) == 0x80;
         ++back)
      --at;
    return at;
  };
  std::string out;
  for (std::size_t start = 0; start <= message.size();) {
    const std::size_t end = std::min(message.find('\n', start), message.size());
    const std::string_view line = message.substr(start, end - start);
    if (line.size() <= limit) {
      out.append(line);
    } else {
      const std::size_t a = boundary(line, head), b = boundary(line, line.size() - tail);
      out.append(line.substr(0, a));
      out.append(" ... [" + std::to_string(b - a) + " bytes left out] ... ");
      out.append(line.substr(b));
    }
    if (end == message.size()) break;
    out += '\n';
    start = end + 1;
  }
  return out;
}

}  // namespace nocflow
