// SPDX-License-Identifier: MIT
#pragma once
// Scratch files of tests, under NOCFLOW_TEST_TMP: the build tree's own folder
// (tests/CMakeLists.txt), so two build trees or checkouts testing at once never share a path.
// Names must be unique across the tests of one build tree (CTest runs them in parallel).
#include <filesystem>
#include <string>

namespace nocflow::testing {

/// A path under the scratch folder (created); the file itself is left as it is.
inline std::filesystem::path scratch_path(const std::string& name) {
  const std::filesystem::path root(NOCFLOW_TEST_TMP);
  std::filesystem::create_directories(root);
  return root / name;
}

/// A path under the scratch folder with nothing there: a file a test expects a command to
/// write cannot be a leftover of an earlier run.
inline std::filesystem::path fresh_path(const std::string& name) {
  const auto path = scratch_path(name);
  std::filesystem::remove_all(path);
  return path;
}

/// A fresh, empty folder under the scratch folder.
inline std::filesystem::path fresh_dir(const std::string& name) {
  const auto dir = fresh_path(name);
  std::filesystem::create_directories(dir);
  return dir;
}

}  // namespace nocflow::testing
