// SPDX-License-Identifier: MIT
// Paper-model calibration: the fit recovers known parameters; files round-trip; bad files fail.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "noc/base/error.h"
#include "optimizer/cost/paper_calibration.h"
#include "tests/scratch.h"

namespace nocflow::optimizer {
namespace {

TEST(PaperCalibration, FitRecoversBandwidthAndLatency) {
  std::vector<CalibrationPoint> points;
  for (double x : {1e3, 5e3, 2e4, 1e5, 7e5}) points.push_back({x, x / 250.0 + 40.0});
  points.push_back({0, 10});  // moves nothing: ignored
  const PaperCalibration c = fit_paper_calibration(points);
  EXPECT_NEAR(c.bnoc_bytes_per_cycle, 250.0, 1e-6);
  EXPECT_NEAR(c.latency_cycles, 40.0, 1e-6);
}

TEST(PaperCalibration, NeverFitsANegativeLatency) {
  // y = x / 100 - 5 would need a negative latency: the slope alone is fitted instead.
  const PaperCalibration c = fit_paper_calibration({{1e3, 5}, {2e3, 15}, {4e3, 35}});
  EXPECT_EQ(c.latency_cycles, 0);
  EXPECT_GT(c.bnoc_bytes_per_cycle, 0);
  EXPECT_THROW(fit_paper_calibration({{1e3, 5}}), InputError);
}

TEST(PaperCalibration, FileRoundTripsAndBadFilesAreClear) {
  const auto dir = nocflow::testing::fresh_dir("paper_calibration");
  const auto good = dir / "nocflow_calibration.yaml";
  std::ofstream(good) << paper_calibration_yaml({123.5, 7.25}, "test");
  const PaperCalibration c = read_paper_calibration(good.string());
  EXPECT_DOUBLE_EQ(c.bnoc_bytes_per_cycle, 123.5);
  EXPECT_DOUBLE_EQ(c.latency_cycles, 7.25);
  HwDesc hw;
  c.apply(hw);
  EXPECT_DOUBLE_EQ(hw.bnoc(), 123.5);
  const auto bad = dir / "nocflow_calibration_bad.yaml";
  std::ofstream(bad) << "paper:\n  bnoc_bytes_per_cycle: -3\n  latency_cycles: 1\n";
  try {
    read_paper_calibration(bad.string());
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("paper.bnoc_bytes_per_cycle"), std::string::npos) << e.what();
  }
  EXPECT_THROW(read_paper_calibration((dir / "nocflow_no_such_calibration.yaml").string()), InputError);
  // What used to escape as an internal error (yaml-cpp's own exceptions), or price every edge
  // at 1e300 cycles.
  const std::pair<std::string, std::string> refused[] = {
      {"paper: {bnoc_bytes_per_cycle: 8, latency_cycles: 1e300}\n",
       "paper.latency_cycles: expected at most 1e9"},
      {"? [paper]\n: 1\n",
       "nocflow_calibration_bad.yaml:1:3: a key must be a name, not a list or map"}};
  for (const auto& [text, message] : refused) {
    std::ofstream(bad) << text;
    try {
      read_paper_calibration(bad.string());
      ADD_FAILURE() << text;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
    }
  }
  std::ofstream(bad) << "paper: {bnoc_bytes_per_cycle: 8, latency_cycles: 1}\nlinkload: 3\n";
  try {
    read_router_slowdown(bad.string(), noc::TopologySpec{"mesh", 2, 2, 0}, nullptr);
    ADD_FAILURE();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("linkload: expected a map"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace nocflow::optimizer
