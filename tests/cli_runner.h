// SPDX-License-Identifier: MIT
#pragma once
// Running the nocflow binary from tests: exit code and combined output, temporary folders.
// Needs NOCFLOW_BINARY defined to the executable's path (see tests/CMakeLists.txt).
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace nocflow::testing {

struct CliRun {
  int exit_code;
  std::string output;  ///< stdout and stderr
};

inline CliRun run_nocflow(const std::string& args) {
  const std::string cmd = std::string(NOCFLOW_BINARY) + " " + args + " 2>&1";
  FILE* pipe = popen(cmd.c_str(), "r");
  std::string out;
  char buf[4096];
  while (std::size_t n = fread(buf, 1, sizeof buf, pipe)) out.append(buf, n);
  const int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

/// A fresh, empty folder under the system temp directory.
inline std::filesystem::path fresh_dir(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / ("nocflow_" + name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
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

}  // namespace nocflow::testing
