// SPDX-License-Identifier: MIT
// `nocflow validate --calibrate` and the router-contention fit: what is fitted, on which cases,
// and what optimize makes of the calibration.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <sstream>
#include <tuple>
#include <vector>

#include "noc/traffic/batch.h"
#include "tests/cli_runner.h"
#include "tests/sim/validate_runner.h"

namespace nocflow::testing {
namespace {

namespace fs = std::filesystem;

TEST(ValidateCli, CalibrationImprovesThePaperModelAndOptimizeLoadsIt) {
  const fs::path dir = fresh_dir("validate_calibrate");
  const CliRun r = run_nocflow("validate " + kHw + " --meshes 2,4 --crossbar 0 --sizes 4KiB,64KiB "
                               "--types ALL_GATHER,ALL_TO_ALL,SCATTER --calibrate --out " + (dir / "v").string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string cal = read_file(dir / "v" / "calibration.yaml");
  // The machines it was fitted on, not only the file their routers and links came from.
  EXPECT_NE(cal.find("), on mesh 2x2, mesh 4x4 with the routers and links of "), std::string::npos) << cal;
  // "paper MAPE X% before, Y% after": calibration must help.
  const auto before = cal.find("paper MAPE "), after = cal.find("% before, ");
  ASSERT_NE(before, std::string::npos) << cal;
  const double mape_before = std::stod(cal.substr(before + 11)), mape_after = std::stod(cal.substr(after + 10));
  EXPECT_LT(mape_after, mape_before) << cal;
  // optimize vgg5 with a calibration file (written first when `yaml` is given).
  auto optimize = [&](const fs::path& file, const std::string& yaml = "", const std::string& model = "paper") {
    if (!yaml.empty()) std::ofstream(file) << yaml;
    return run_nocflow("optimize " + kHw + " --network zoo:vgg5 --cost-model " + model + " --calibration " +
                       file.string() + " --out " + (dir / ("o_" + file.stem().string() + "_" + model)).string());
  };
  const CliRun o = optimize(dir / "v" / "calibration.yaml");
  EXPECT_EQ(o.exit_code, 0) << o.output;
  // The values the model read are shown, not only the file's name.
  EXPECT_NE(o.output.find("note: calibrated paper: B_NoC "), std::string::npos) << o.output;
  const CliRun bad = optimize(dir / "bad.yaml", "paper: {latency_cycles: 3}\n");
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_NE(bad.output.find("paper.bnoc_bytes_per_cycle"), std::string::npos) << bad.output;

  // linkload's router contention: fitted on one router-bound case of the 4x4 mesh, which it
  // then predicts exactly; it changes only cases where a router-to-router link binds (busier
  // than every channel, or as busy and shared by ≥ 2 sources); optimize
  // loads it for this machine and names the machines a file lacks.
  int fitted = 0, slowed = 0;
  for (const auto& row : read_csv_rows(dir / "v" / "validation.csv")) {
    const std::string what = row.at("topology") + " " + row.at("type") + " " + row.at("tensor_bytes");
    const double sim = std::stod(row.at("simulated_cycles")), plain = std::stod(row.at("linkload_cycles"));
    const double with = std::stod(row.at("linkload_fitted_cycles"));
    if (row.at("slowdown_fitted_here") == "1") {
      ++fitted;
      EXPECT_EQ(row.at("type") + " " + row.at("tensor_bytes"), "SCATTER 65536");
      EXPECT_EQ(row.at("topology"), "mesh 4x4") << what;
      EXPECT_GT(std::stod(row.at("router_slowdown")), 0) << what;
      EXPECT_NEAR(with, sim, 1e-3 * sim) << what;
    }
    if (with != plain) {  // slower drain, some latency hidden
      ++slowed;
      EXPECT_GE(std::stoll(row.at("busiest_router_link_flits")), std::stoll(row.at("busiest_endpoint_flits"))) << what;
    }
  }
  EXPECT_EQ(fitted, 1);
  EXPECT_GE(slowed, 2);
  EXPECT_NE(cal.find("\"mesh 4x4\":"), std::string::npos) << cal;
  EXPECT_NE(cal.find("\"mesh 2x2\": 0\n"), std::string::npos) << cal;  // no router-bound case: s = 0
  const CliRun l = optimize(dir / "v" / "calibration.yaml", "", "linkload");
  EXPECT_EQ(l.exit_code, 0) << l.output;
  EXPECT_NE(l.output.find("note: calibrated linkload: router contention s "), std::string::npos)
      << l.output;
  // A file fitted on another machine: linkload refuses it, the paper model takes its B_NoC.
  const CliRun other = optimize(dir / "other.yaml",
                                "paper: {bnoc_bytes_per_cycle: 32, latency_cycles: 3}\n"
                                "linkload: {router_contention: {\"mesh 8x8\": 0.5}}\n",
                                "linkload");
  EXPECT_EQ(other.exit_code, 2) << other.output;
  EXPECT_NE(other.output.find("no entry for 'mesh 4x4' (it has: mesh 8x8)"), std::string::npos) << other.output;
  EXPECT_EQ(optimize(dir / "other.yaml").exit_code, 0);
  // The file names the hardware it was fitted on; pricing other hardware with it says what
  // differs, and a plan records the file it was priced with, which a replay compares.
  EXPECT_NE(cal.find("machines: [mesh 2x2, mesh 4x4]"), std::string::npos) << cal;
  const std::string vcs2 = " --set router.vcs=2";
  const CliRun other_router = run_nocflow(
      "optimize " + kHw + vcs2 + " --network zoo:vgg5 --calibration " +
      (dir / "v" / "calibration.yaml").string() + " --out " + (dir / "o_vcs2").string());
  EXPECT_EQ(other_router.exit_code, 0) << other_router.output;
  EXPECT_NE(other_router.output.find("was fitted on other hardware (router.vcs 4 -> 2)"),
            std::string::npos)
      << other_router.output;
  EXPECT_NE(read_file(dir / "o_vcs2" / "plan.yaml").find("calibration: " + (dir / "v").string()),
            std::string::npos);
  // summary.json lists every note the console printed, these too (it had only the solver's).
  EXPECT_NE(read_file(dir / "o_vcs2" / "summary.json")
                .find("fitted on other hardware (router.vcs 4 -> 2)"),
            std::string::npos);
  // A file with only the paper fit: linkload priced the plan as uncalibrated, and said nothing.
  const CliRun paper_only =
      optimize(dir / "paper_only.yaml", "paper: {bnoc_bytes_per_cycle: 32, latency_cycles: 3}\n",
               "linkload");
  EXPECT_EQ(paper_only.exit_code, 0) << paper_only.output;
  EXPECT_NE(
      paper_only.output.find("paper_only.yaml has no linkload section: linkload prices without "
                             "router contention"),
      std::string::npos)
      << paper_only.output;
  // A file from before lowering.all_gather named no such key: it was at its default, direct.
  const std::string key = ", lowering.all_gather: direct";
  ASSERT_NE(cal.find(key), std::string::npos) << cal;
  std::string before_key = cal;
  before_key.erase(before_key.find(key), key.size());
  const CliRun old_same = optimize(dir / "old.yaml", before_key, "linkload");
  EXPECT_EQ(old_same.exit_code, 0) << old_same.output;
  EXPECT_EQ(old_same.output.find("fitted on other hardware"), std::string::npos) << old_same.output;
  // Files from before router.alloc_iterations 0 (by topology) have 1: on a mesh router that is
  // the same one iteration, so no note.
  const std::string iterations = "router.alloc_iterations: 0";
  ASSERT_NE(cal.find(iterations), std::string::npos) << cal;
  std::string one_iteration = cal;
  one_iteration.replace(one_iteration.find(iterations), iterations.size(),
                        "router.alloc_iterations: 1");
  const CliRun old_iterations = optimize(dir / "old_iterations.yaml", one_iteration, "linkload");
  EXPECT_EQ(old_iterations.exit_code, 0) << old_iterations.output;
  EXPECT_EQ(old_iterations.output.find("fitted on other hardware"), std::string::npos)
      << old_iterations.output;
  const CliRun two_iterations = optimize(
      dir / "two_iterations.yaml",
      cal.substr(0, cal.find(iterations)) + "router.alloc_iterations: 2" +
          cal.substr(cal.find(iterations) + iterations.size()),
      "linkload");
  EXPECT_NE(two_iterations.output.find("fitted on other hardware (router.alloc_iterations 2 -> 0)"),
            std::string::npos)
      << two_iterations.output;
  // Past int, and a machine that is a list: both were internal errors (found by fuzzing).
  const CliRun huge_iterations =
      optimize(dir / "huge_iterations.yaml",
               cal.substr(0, cal.find(iterations)) + "router.alloc_iterations: 2147483648" +
                   cal.substr(cal.find(iterations) + iterations.size()),
               "linkload");
  EXPECT_NE(huge_iterations.output.find(
                "fitted on other hardware (router.alloc_iterations 2147483648 -> 0)"),
            std::string::npos)
      << huge_iterations.output;
  const std::string machines = "machines: [mesh 2x2, mesh 4x4]";
  std::string listed = cal;
  listed.replace(listed.find(machines), machines.size(), "machines: [[mesh 2x2], mesh 8x8]");
  const CliRun list_machine = optimize(dir / "list_machine.yaml", listed, "linkload");
  EXPECT_EQ(list_machine.exit_code, 0) << list_machine.output;
  EXPECT_NE(list_machine.output.find("fitted on mesh 8x8, not on mesh 4x4"), std::string::npos)
      << list_machine.output;
  const CliRun old_ring =
      run_nocflow("optimize " + kHw +
                  " --set lowering.all_gather=ring --network zoo:vgg5 "
                  "--calibration " +
                  (dir / "old.yaml").string() + " --out " + (dir / "o_old_ring").string());
  EXPECT_EQ(old_ring.exit_code, 0) << old_ring.output;
  EXPECT_NE(old_ring.output.find("fitted on other hardware (lowering.all_gather direct -> ring)"),
            std::string::npos)
      << old_ring.output;
  const CliRun replay =
      run_nocflow("simulate " + kHw + vcs2 + " --network zoo:vgg5 --quiet --plan " +
                  (dir / "o_vcs2" / "plan.yaml").string() + " --out " + (dir / "s_vcs2").string());
  EXPECT_EQ(replay.exit_code, 0) << replay.output;
  EXPECT_NE(replay.output.find("note: the plan was priced with --calibration "), std::string::npos)
      << replay.output;
  EXPECT_NE(replay.output.find("this run prices its edges uncalibrated"), std::string::npos)
      << replay.output;
  const CliRun same_file =
      run_nocflow("simulate " + kHw + vcs2 + " --network zoo:vgg5 --quiet --plan " +
                  (dir / "o_vcs2" / "plan.yaml").string() + " --calibration " +
                  (dir / "v" / "." / "calibration.yaml").string() + " --out " +
                  (dir / "s_same").string());  // the same file by another path
  EXPECT_EQ(same_file.exit_code, 0) << same_file.output;
  EXPECT_EQ(same_file.output.find("the plan was priced with"), std::string::npos)
      << same_file.output;
  const CliRun bigger =
      run_nocflow("optimize --hw " + std::string(NOCFLOW_SOURCE_DIR) +
                  "/configs/hw/mesh8x8.yaml --network zoo:vgg5 --cost-model paper --calibration " +
                  (dir / "v" / "calibration.yaml").string() + " --out " + (dir / "o_8x8").string());
  EXPECT_EQ(bigger.exit_code, 0) << bigger.output;
  EXPECT_NE(bigger.output.find(
                "paper B_NoC and latency were fitted on mesh 2x2, mesh 4x4, not on mesh 8x8"),
            std::string::npos)
      << bigger.output;
  // A mistyped key is named at its line, with the keys known there.
  const CliRun typo =
      optimize(dir / "typo.yaml", "paper:\n  bnoc_bytes_per_cycle: 32\n  latency_cycels: 3\n");
  EXPECT_EQ(typo.exit_code, 2) << typo.output;
  EXPECT_NE(
      typo.output.find(
          "typo.yaml:3:3: paper: unknown key 'latency_cycels'; did you mean 'latency_cycles'?"),
      std::string::npos)
      << typo.output;
  // A file of the earlier slowdown-only form: its s means something else, so it is refused.
  const CliRun old = optimize(dir / "old.yaml", "paper: {bnoc_bytes_per_cycle: 32, latency_cycles: 3}\n"
                                                "linkload: {router_slowdown: {\"mesh 4x4\": 0.5}}\n");
  EXPECT_EQ(old.exit_code, 2) << old.output;
  EXPECT_NE(old.output.find("run nocflow validate --calibrate again"), std::string::npos) << old.output;
}

// Two types' cases on 4x4 at 1 MiB send the very same messages (ALL_GATHER OUTP=16 -> OFMP_W=16,
// ALL_TO_ALL OFMP_W=16 -> INPP=16): router contention fitted on one is fitted on both, so
// linkload_fitted scores neither.
TEST(ValidateCli, RouterContentionIsNotScoredOnTheCaseItWasFittedOnNorItsTwin) {
  const Validation v = validate(
      "validate_fitted_twin",
      "--meshes 4 --crossbar 0 --types ALL_GATHER,ALL_TO_ALL --sizes 1MiB --dump-messages");
  ASSERT_EQ(v.rows.size(), 2u);
  auto sends = [&](const char* type) {  // (src, dst, bytes) of each message, in file order
    const fs::path file = v.out / "messages" / ("mesh_4x4_" + std::string(type) + "_1048576.txt");
    std::istringstream in(read_file(file));
    std::vector<std::tuple<int, int, std::int64_t>> out;
    for (const noc::BatchMessage& m : noc::read_messages(in, file.string(), 16))
      out.emplace_back(m.src, m.dst, m.bytes);
    return out;
  };
  EXPECT_EQ(sends("ALL_GATHER"), sends("ALL_TO_ALL"));
  EXPECT_GT(sends("ALL_GATHER").size(), 100u);  // 16 x 15 messages
  EXPECT_NE(v.run.output.find("config.resolved.yaml, messages/"), std::string::npos)
      << v.run.output;
  for (const auto& row : v.rows) EXPECT_EQ(row.at("slowdown_fitted_here"), "1") << row.at("type");
  for (const auto& row : read_csv_rows(v.out / "summary.csv")) {
    const int scored =
        std::stoi(row.at("cases_below_saturation")) + std::stoi(row.at("cases_near_saturation"));
    EXPECT_EQ(scored, row.at("model") == "linkload_fitted" ? 0 : 1)
        << row.at("type") << " " << row.at("model");
  }
}

// Router contention is fitted only where it can be measured: a case whose busiest router link
// carries at least its route's latency in flits. 4x4's HALO_2D at 64 and 128 B (9 flits on
// that link) fitted s = 16.0, which the optimizer then used; beside SCATTER at 64 KiB (1,024
// flits on it) s is fitted on that.
TEST(ValidateCli, RouterContentionIsNotFittedOnACaseOfAFewFlits) {
  const Validation tiny =
      validate("validate_fit_tiny", "--meshes 4 --crossbar 0 --types HALO_2D --sizes 64,128");
  ASSERT_EQ(tiny.rows.size(), 2u);
  for (const auto& row : tiny.rows) {
    EXPECT_GT(std::stod(row.at("busiest_router_link_flits")),
              std::stod(row.at("busiest_endpoint_flits")))
        << "router-bound, as the fit asks";
    EXPECT_LT(std::stod(row.at("busiest_router_link_flits")),
              std::stod(row.at("linkload_latency_cycles")));
    EXPECT_EQ(row.at("slowdown_fitted_here"), "0");
    EXPECT_EQ(std::stod(row.at("router_slowdown")), 0);
  }
  EXPECT_NE(tiny.run.output.find("mesh 4x4 0.000"), std::string::npos) << tiny.run.output;
  const Validation large = validate(
      "validate_fit_large", "--meshes 4 --crossbar 0 --types HALO_2D,SCATTER --sizes 64,64KiB");
  ASSERT_EQ(large.rows.size(), 4u);
  int fitted = 0;
  for (const auto& row : large.rows)
    if (row.at("slowdown_fitted_here") == "1") {
      ++fitted;
      EXPECT_EQ(row.at("type") + " " + row.at("tensor_bytes"), "SCATTER 65536");
      EXPECT_GE(std::stod(row.at("busiest_router_link_flits")),
                std::stod(row.at("linkload_latency_cycles")));
      EXPECT_GT(std::stod(row.at("router_slowdown")), 0);
    }
  EXPECT_EQ(fitted, 1);
}

// GROUP_GATHER on 4x4: OUTP=4 x OFMP_H=4 on both sides, so every PE sends its 1/16 of the
// tensor to the 3 other PEs of its OFMP_H slice, which placement strides by OFMP_H along the
// snake: one per mesh row. The seed calls it NONE and prices it at nothing; linkload prices
// its routes. It stays out of the router-contention fit: alone, it leaves s at 0.
TEST(ValidateCli, GroupGatherIsAnAllGatherInStridedGroupsAndStaysOutOfTheFit) {
  const Validation v = validate("validate_group_gather",
                                "--meshes 4 --crossbar 0 --types GROUP_GATHER --sizes 64KiB --dump-messages");
  ASSERT_EQ(v.rows.size(), 1u);
  const auto& row = v.rows[0];
  EXPECT_EQ(row.at("producer"), "OUTP=4,OFMP_H=4");
  EXPECT_EQ(row.at("consumer"), row.at("producer"));
  const std::int64_t tensor = std::stoll(row.at("tensor_bytes"));
  EXPECT_EQ(std::stoll(row.at("bytes_moved")), 16 * 3 * (tensor / 16));
  EXPECT_EQ(std::stod(row.at("paper_cycles")), 0);
  EXPECT_GT(std::stod(row.at("linkload_cycles")), 0);
  EXPECT_GT(std::stoll(row.at("simulated_cycles")), 0);
  std::map<int, int> sent;
  const fs::path file = v.out / "messages" / "mesh_4x4_GROUP_GATHER_65536.txt";
  std::istringstream in(read_file(file));
  for (const noc::BatchMessage& m : noc::read_messages(in, file.string(), 16)) {
    EXPECT_NE(m.src / 4, m.dst / 4) << m.src << " -> " << m.dst;  // one PE of a group per mesh row
    EXPECT_EQ(m.bytes, tensor / 16) << m.src << " -> " << m.dst;
    ++sent[m.src];
  }
  EXPECT_EQ(sent.size(), 16u);
  for (const auto& [pe, messages] : sent) EXPECT_EQ(messages, 3) << "PE " << pe;
  EXPECT_EQ(row.at("slowdown_fitted_here"), "0");
  EXPECT_EQ(std::stod(row.at("router_slowdown")), 0);
  EXPECT_NE(v.run.output.find("mesh 4x4 0.000"), std::string::npos) << v.run.output;
}

// The same groups under lowering.all_gather: ring: the same bytes reach every PE, now as 3
// rounds of one piece to the ring successor, which linkload prices as rounds (within 5 %:
// -3.2 % and -0.1 % when written), calibrated or not (the ALL_TO_ALL cases give the machine a
// router contention s to fit: 0.457 when written; slowed, the rounds were priced 15 % higher), and
// the case dumps no messages (a replay would inject every round at once).
TEST(ValidateCli, GroupGatherUnderRingLoweringIsPricedAsItsRounds) {
  const Validation direct =
      validate("validate_group_gather_direct",
               "--meshes 4 --crossbar 0 --types GROUP_GATHER --sizes 64KiB,1MiB");
  const Validation ring =
      validate("validate_group_gather_ring",
               "--meshes 4 --crossbar 0 --types GROUP_GATHER,ALL_TO_ALL --sizes 64KiB,1MiB "
               "--set lowering.all_gather=ring --dump-messages");
  std::vector<std::map<std::string, std::string>> gathers;
  for (const auto& row : ring.rows)
    if (row.at("type") == "GROUP_GATHER") gathers.push_back(row);
  ASSERT_EQ(gathers.size(), 2u);
  ASSERT_EQ(direct.rows.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    const auto& row = gathers[i];
    EXPECT_GT(std::stod(row.at("router_slowdown")), 0.1);
    EXPECT_EQ(std::stod(row.at("linkload_fitted_cycles")), std::stod(row.at("linkload_cycles")));
    EXPECT_EQ(row.at("producer"), "OUTP=4,OFMP_H=4");
    EXPECT_EQ(row.at("bytes_moved"), direct.rows[i].at("bytes_moved"));
    EXPECT_NE(row.at("simulated_cycles"), direct.rows[i].at("simulated_cycles"));
    EXPECT_LT(std::abs(std::stod(row.at("linkload_error"))), 0.05) << row.at("tensor_bytes");
    EXPECT_FALSE(std::filesystem::exists(
        ring.out / "messages" / ("mesh_4x4_GROUP_GATHER_" + row.at("tensor_bytes") + ".txt")));
  }
}

}  // namespace
}  // namespace nocflow::testing
