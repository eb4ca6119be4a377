// SPDX-License-Identifier: MIT
// `nocflow validate`: what the models miss where flows contend (VC-starved cycles, edges split
// by what bounds them, the round-robin fluid run). The other validate tests:
// validate_cli_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "tests/cli_runner.h"
#include "tests/sim/validate_runner.h"

namespace nocflow::testing {
namespace {

TEST(ValidateCli, WormholeBlockingShowsAsVcStarvedCyclesOnTheBusiestRouterLink) {
  // 16x16's GROUP_GATHER (OUTP=16,OFMP_H=16: 15 messages per PE, groups split by the snake)
  // runs at 1.85 times its busiest link (3,790 cycles, 2,048 flits; 4,464 cycles, over twice,
  // in ring order before session 72): flows slowed where others join hold every VC of the
  // links before, which then idle although packets wait (1,527 cycles). A 1-D halo between
  // neighbours never waits for a VC.
  const Validation v = validate(
      "validate_vc_starved", "--meshes 16 --crossbar 0 --sizes 256KiB --types GROUP_GATHER,HALO");
  ASSERT_EQ(v.rows.size(), 2u);
  for (const auto& row : v.rows) {
    const std::int64_t t = std::stoll(row.at("simulated_cycles")),
                       flits = std::stoll(row.at("busiest_router_link_flits")),
                       starved = std::stoll(row.at("busiest_router_link_vc_starved_cycles"));
    EXPECT_LE(flits + starved, t) << row.at("type");  // a cycle sends or starves, not both
    if (row.at("type") == "GROUP_GATHER") {
      EXPECT_GT(starved, 3 * t / 10);
      EXPECT_GT(t, 3 * flits / 2);
    } else {
      EXPECT_EQ(starved, 0);
    }
  }
  // The summary's share: starved over simulated cycles, for the one GROUP_GATHER case.
  const auto& gather = v.rows[0].at("type") == "GROUP_GATHER" ? v.rows[0] : v.rows[1];
  int summary_rows = 0;
  for (const auto& row : read_csv_rows(v.out / "summary.csv")) {
    if (row.at("type") != "GROUP_GATHER" || row.at("model") != "linkload") continue;
    ++summary_rows;
    EXPECT_NEAR(std::stod(row.at("vc_starved_share")),
                std::stod(gather.at("busiest_router_link_vc_starved_cycles")) /
                    std::stod(gather.at("simulated_cycles")),
                1e-9);
  }
  EXPECT_EQ(summary_rows, 1);  // the share was checked
  EXPECT_NE(v.run.output.find("VC-starved"), std::string::npos) << v.run.output;
}

TEST(ValidateCli, EdgesAreSplitByWhatBoundsThem) {
  const Validation v =
      validate("validate_bound", "--meshes 4 --crossbar 8 --sizes 64KiB --types SCATTER,HALO");
  ASSERT_EQ(v.rows.size(), 4u);
  int router_bound = 0;
  for (const auto& row : v.rows) {
    const std::string kind = row.at("busiest_link_kind");
    // A crossbar has no router-to-router links; a mesh's all-to-all loads its middle links most.
    if (row.at("topology").rfind("crossbar", 0) == 0) {
      EXPECT_EQ(kind, "endpoint") << row.at("type");
    } else if (row.at("type") == "SCATTER") {
      EXPECT_EQ(kind, "router");
    }
    router_bound += kind == "router";
    // Endpoint-bound, the busiest PE channel sends back to back; bound by a router link, it
    // waits for credits from the congested routes (busy share of its first-to-last-flit span).
    const double busy = std::stod(row.at("busiest_endpoint_busy_share"));
    if (kind == "endpoint") {
      EXPECT_EQ(busy, 1) << row.at("topology") << " " << row.at("type");
    } else {
      EXPECT_LT(busy, 0.9) << row.at("topology") << " " << row.at("type");
    }
  }
  EXPECT_EQ(router_bound, 1);
  int without_router_cases = 0;
  for (const auto& row : read_csv_rows(v.out / "summary.csv")) {
    EXPECT_EQ(std::stoi(row.at("cases_endpoint_bound")) + std::stoi(row.at("cases_router_bound")),
              std::stoi(row.at("cases_below_saturation")))
        << row.at("type") << " " << row.at("model");
    // A statistic over no case is an empty cell (and "n/a" on screen), not a perfect 0.
    if (row.at("cases_router_bound") == "0") {
      ++without_router_cases;
      EXPECT_EQ(row.at("mape_router_bound"), "") << row.at("type") << " " << row.at("model");
      EXPECT_EQ(row.at("max_error_router_bound"), "") << row.at("type") << " " << row.at("model");
    }
  }
  EXPECT_GT(without_router_cases, 0);
  EXPECT_NE(v.run.output.find("n/a"), std::string::npos) << v.run.output;
}

TEST(ValidateCli, TheRoundRobinRunPricesAMeshsSendsNoFasterThanTheirBusiestLink) {
  // The fluid run (optimizer/cost/round_robin_fluid.h) of each mesh case's sends: at most a
  // flit per cycle through any output, so never under the busiest link's flits (plus the
  // latency term it shares with linkload). Not for the crossbar, nor ring rounds.
  const Validation v = validate("validate_round_robin",
                                "--meshes 4 --crossbar 8 --sizes 64KiB "
                                "--types SCATTER,HALO_2D,ALL_REDUCE");
  ASSERT_EQ(v.rows.size(), 6u);
  int priced = 0;
  for (const auto& row : v.rows) {
    const std::string what = row.at("topology") + " " + row.at("type");
    const std::string& cell = row.at("round_robin_cycles");
    if (row.at("topology") != "mesh 4x4" || row.at("type") == "ALL_REDUCE") {
      EXPECT_EQ(cell, "") << what;
      EXPECT_EQ(row.at("round_robin_error"), "") << what;
      continue;
    }
    ASSERT_NE(cell, "") << what;
    const double cycles = std::stod(cell), simulated = std::stod(row.at("simulated_cycles"));
    const double busiest = std::max(std::stod(row.at("busiest_router_link_flits")),
                                    std::stod(row.at("busiest_endpoint_flits")));
    EXPECT_GE(cycles, std::stod(row.at("linkload_latency_cycles")) + busiest - 1e-6) << what;
    EXPECT_NEAR(std::stod(row.at("round_robin_error")), (cycles - simulated) / simulated, 1e-5)
        << what;  // both printed to 6 digits
    ++priced;
  }
  EXPECT_EQ(priced, 2);
  int summarized = 0;
  for (const auto& row : read_csv_rows(v.out / "summary.csv"))
    if (row.at("model") == "round_robin" && row.at("type") != "ALL_REDUCE")
      summarized +=
          std::stoi(row.at("cases_below_saturation")) + std::stoi(row.at("cases_near_saturation"));
  EXPECT_EQ(summarized, 2);
  EXPECT_NE(v.run.output.find("round_robin"), std::string::npos) << v.run.output;
}

}  // namespace
}  // namespace nocflow::testing
