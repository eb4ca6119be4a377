// SPDX-License-Identifier: MIT
#pragma once
// Running `nocflow validate` from the CLI tests (validate_cli_test.cpp, validate_fit_cli_test.cpp).
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/cli_runner.h"

namespace nocflow::testing {

inline const std::string kHw = "--hw " + std::string(NOCFLOW_SOURCE_DIR) + "/configs/hw/mesh4x4.yaml";

/// `nocflow validate` on mesh4x4.yaml with `args`, into a fresh folder's out/.
struct Validation {
  std::filesystem::path out;
  CliRun run;
  std::vector<std::map<std::string, std::string>> rows;  ///< validation.csv
};
inline Validation validate(const std::string& name, const std::string& args) {
  Validation v;
  v.out = fresh_dir(name) / "out";
  v.run = run_nocflow("validate " + kHw + " " + args + " --out " + v.out.string());
  EXPECT_EQ(v.run.exit_code, 0) << v.run.output;
  if (v.run.exit_code == 0) v.rows = read_csv_rows(v.out / "validation.csv");
  return v;
}

}  // namespace nocflow::testing
