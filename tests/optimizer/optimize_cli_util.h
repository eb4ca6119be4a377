// SPDX-License-Identifier: MIT
#pragma once
// What the `nocflow optimize` tests share: a config by name and a fresh output folder.
#include <filesystem>
#include <string>

#include "tests/cli_runner.h"

namespace nocflow::testing {

/// configs/hw/NAME in the source tree.
inline std::string hw(const std::string& name) {
  return std::string(NOCFLOW_SOURCE_DIR) + "/configs/hw/" + name;
}

/// An output folder for `nocflow optimize`, not there yet.
inline std::filesystem::path out_dir(const std::string& name) {
  return fresh_path("optimize_" + name);
}

}  // namespace nocflow::testing
