// SPDX-License-Identifier: MIT
#pragma once
// The check every line-based reader (program files, message files) makes before parsing a line.
#include <string>

#include "noc/base/error.h"

namespace nocflow {

/// Throws InputError("`where`: column N: control character 0xNN ...") when a line of a text
/// input holds a control character other than tab or CR (a NUL would cut a message short).
inline void check_text_line(const std::string& line, const std::string& where) {
  for (std::size_t i = 0; i < line.size(); ++i) {
    const auto c = static_cast<unsigned char>(line[i]);
    if (c >= 0x20 || c == '\t' || c == '\r') continue;
    const char* const hex = "0123456789abcdef";
    throw InputError(where + ": column " + std::to_string(i + 1) + ": control character 0x" +
                     hex[c >> 4] + hex[c & 15] + " (is this a text file?)");
  }
}

}  // namespace nocflow
