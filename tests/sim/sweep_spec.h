// SPDX-License-Identifier: MIT
#pragma once
// The sweep CLI tests' machine and spec file (sweep_cli_test.cpp, sweep_spec_cli_test.cpp).
#include <filesystem>
#include <fstream>
#include <string>

namespace nocflow::testing {

inline const std::string kHw = std::string(NOCFLOW_SOURCE_DIR) + "/configs/hw/mesh4x4.yaml";

/// DIR/spec.yaml holding `body`.
inline std::filesystem::path write_spec(const std::filesystem::path& dir, const std::string& body) {
  const std::filesystem::path file = dir / "spec.yaml";
  std::ofstream(file) << body;
  return file;
}

}  // namespace nocflow::testing
