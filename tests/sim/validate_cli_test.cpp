// SPDX-License-Identifier: MIT
// `nocflow validate` on a small set: rows, exact bytes, bad arguments.
#include <gtest/gtest.h>

#include <sstream>

#include "tests/cli_runner.h"

namespace nocflow::testing {
namespace {

namespace fs = std::filesystem;
const std::string kHw = "--hw " + std::string(NOCFLOW_SOURCE_DIR) + "/configs/hw/mesh4x4.yaml";

std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> out;
  std::string field;
  bool quoted = false;
  for (char c : line) {
    if (c == '"') quoted = !quoted;
    else if (c == ',' && !quoted) out.push_back(field), field.clear();
    else field += c;
  }
  out.push_back(field);
  return out;
}

TEST(ValidateCli, TextbookPatternsMoveTheirExactBytes) {
  const fs::path dir = fresh_dir("validate");
  const CliRun r = run_nocflow("validate " + kHw + " --meshes 2 --crossbar 0 --sizes 4KiB,16KiB "
                               "--types ALL_GATHER,HALO,NONE --out " + (dir / "out").string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::istringstream csv(read_file(dir / "out" / "validation.csv"));
  std::string line;
  std::getline(csv, line);
  const auto header = split(line);
  ASSERT_EQ(header[1], "type");
  int rows = 0;
  while (std::getline(csv, line)) {
    const auto f = split(line);
    ++rows;
    const std::int64_t tensor = std::stoll(f[2]), moved = std::stoll(f[5]);
    const std::int64_t simulated = std::stoll(f[8]);
    if (f[1] == "ALL_GATHER") {
      // OUTP=4 -> a spatial split: each consumer strip needs all channels, 3/4 of which four
      // other nodes hold: 3/4 of the tensor moves.
      EXPECT_EQ(f[3], "OUTP=4") << line;
      EXPECT_EQ(moved, tensor * 3 / 4) << line;
      EXPECT_GT(simulated, 0);
    }
    if (f[1] == "NONE") {
      EXPECT_EQ(moved, 0) << line;
      EXPECT_EQ(simulated, 0) << line;
    }
    if (f[1] == "HALO") {
      EXPECT_GT(moved, 0) << line;
      EXPECT_LT(moved, tensor) << line;  // only boundary rows or columns
    }
  }
  EXPECT_EQ(rows, 6);
  // Both ALL_GATHER cases appear in the summary, below or near saturation.
  std::istringstream summary(read_file(dir / "out" / "summary.csv"));
  bool found = false;
  while (std::getline(summary, line)) {
    const auto f = split(line);
    if (f[0] == "ALL_GATHER" && f[1] == "linkload") {
      found = true;
      EXPECT_EQ(std::stoi(f[2]) + std::stoi(f[5]), 2) << line;
    }
  }
  EXPECT_TRUE(found);
}

TEST(ValidateCli, CalibrationImprovesThePaperModelAndOptimizeLoadsIt) {
  const fs::path dir = fresh_dir("validate_calibrate");
  const CliRun r = run_nocflow("validate " + kHw + " --meshes 2,4 --crossbar 0 --sizes 4KiB,64KiB "
                               "--types ALL_GATHER,ALL_TO_ALL,SCATTER --calibrate --out " + (dir / "v").string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string cal = read_file(dir / "v" / "calibration.yaml");
  // "paper MAPE X% before, Y% after": calibration must help.
  const auto before = cal.find("paper MAPE "), after = cal.find("% before, ");
  ASSERT_NE(before, std::string::npos) << cal;
  const double mape_before = std::stod(cal.substr(before + 11)), mape_after = std::stod(cal.substr(after + 10));
  EXPECT_LT(mape_after, mape_before) << cal;
  const CliRun o = run_nocflow("optimize " + kHw + " --network zoo:vgg5 --calibration " +
                               (dir / "v" / "calibration.yaml").string() + " --out " + (dir / "o").string());
  EXPECT_EQ(o.exit_code, 0) << o.output;
  std::ofstream(dir / "bad.yaml") << "paper: {latency_cycles: 3}\n";
  const CliRun bad = run_nocflow("optimize " + kHw + " --network zoo:vgg5 --calibration " +
                                 (dir / "bad.yaml").string() + " --out " + (dir / "o2").string());
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_NE(bad.output.find("paper.bnoc_bytes_per_cycle"), std::string::npos) << bad.output;
}

TEST(ValidateCli, BadArgumentsExitWith2) {
  const fs::path dir = fresh_dir("validate_bad");
  EXPECT_EQ(run_nocflow("validate " + kHw + " --types ALL_GATHR --out " + (dir / "o").string()).exit_code, 2);
  EXPECT_EQ(run_nocflow("validate " + kHw + " --sizes 4KB --out " + (dir / "o").string()).exit_code, 2);
  EXPECT_FALSE(fs::exists(dir / "o"));
}

}  // namespace
}  // namespace nocflow::testing
