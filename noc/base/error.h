// SPDX-License-Identifier: MIT
#pragma once
// Error types shared by every nocflow library. Library code throws; only the command line
// turns an error into a message and an exit code (InputError → 2, CheckError → 3, others → 1).
// Also the check every line-based reader makes before parsing a line.
#include <stdexcept>
#include <string>

namespace nocflow {

/// Bad user input: config, network, plan, command-line values. The message is complete and
/// names where the problem is (file:line:col and key path where known).
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A run's self-check failed: a flit lost or duplicated, credits not conserved, a deadlock
/// caught by the watchdog. The message names router, port and VC.
class CheckError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

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
