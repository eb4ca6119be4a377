// SPDX-License-Identifier: MIT
#pragma once
// Running the nocflow binary from tests: exit code and combined output; reading its files.
// Needs NOCFLOW_BINARY defined to the executable's path (see tests/CMakeLists.txt).
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "tests/scratch.h"

namespace nocflow::testing {

struct CliRun {
  int exit_code;
  std::string output;  ///< stdout and stderr
};

/// A shell command line's exit code and output (stdout and stderr).
inline CliRun run_shell(const std::string& command) {
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  std::string out;
  char buf[4096];
  while (std::size_t n = fread(buf, 1, sizeof buf, pipe)) out.append(buf, n);
  const int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

inline CliRun run_nocflow(const std::string& args) {
  return run_shell(std::string(NOCFLOW_BINARY) + " " + args);
}

inline std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

/// The text of a JSON file, minus the given top-level keys (e.g. wall-clock fields).
inline std::string json_without(const std::filesystem::path& path, std::initializer_list<const char*> keys) {
  std::string text = read_file(path);
  for (const char* key : keys) {
    const std::string needle = std::string("\n  \"") + key + "\":";
    const auto at = text.find(needle);
    if (at == std::string::npos) continue;
    const auto end = text.find('\n', at + 1);
    text.erase(at, end - at);
  }
  return text;
}

/// A CSV line's fields; commas inside double quotes stay in the field (quotes dropped).
inline std::vector<std::string> split_csv(const std::string& line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (char c : line) {
    if (c == '"')
      quoted = !quoted;
    else if (c == ',' && !quoted)
      out.emplace_back();
    else
      out.back() += c;
  }
  return out;
}

/// Rows of a CSV file as column name -> text; throws on a row whose field count differs.
inline std::vector<std::map<std::string, std::string>> read_csv_rows(const std::filesystem::path& file) {
  std::istringstream in(read_file(file));
  std::string line;
  std::getline(in, line);
  const auto header = split_csv(line);
  std::vector<std::map<std::string, std::string>> rows;
  while (std::getline(in, line)) {
    const auto fields = split_csv(line);
    if (fields.size() != header.size())
      throw std::runtime_error(file.string() + ": " + std::to_string(fields.size()) + " fields, header has " +
                               std::to_string(header.size()) + ": " + line);
    auto& row = rows.emplace_back();
    for (std::size_t i = 0; i < header.size(); ++i) row[header[i]] = fields[i];
  }
  return rows;
}

}  // namespace nocflow::testing
