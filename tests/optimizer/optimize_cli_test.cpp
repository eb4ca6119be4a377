// SPDX-License-Identifier: MIT
// `nocflow optimize` end to end: outputs, --compare, and exit code 2 for bad input.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <tuple>

#include "noc/base/error.h"
#include "noc/base/format.h"
#include "optimizer/plan/plan.h"
#include "tests/cli_runner.h"
#include "tests/optimizer/optimize_cli_util.h"

namespace {

namespace fs = std::filesystem;

using nocflow::testing::CliRun;
using nocflow::testing::run_nocflow;

using nocflow::testing::hw;
using nocflow::testing::out_dir;

TEST(OptimizeCli, WritesPlanSummaryAndComparison) {
  const fs::path out = out_dir("vgg5");
  const CliRun r = run_nocflow("optimize --hw " + hw("mesh4x4.yaml") + " --network zoo:vgg5 --compare --out " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::ifstream in(out / "summary.json");
  const auto j = nlohmann::json::parse(in);
  for (const char* key : {"solver", "cost_model", "placement", "total_cost_cycles",
                          "compute_cycles", "redistribution_cycles", "solve_seconds", "energy_pj"})
    EXPECT_TRUE(j.contains(key)) << key;
  EXPECT_EQ(j["solver"], "dp");
  EXPECT_EQ(j["batch"], 1);
  EXPECT_TRUE(j["train"].is_null()) << j["train"];  // inference
  // The table's solve seconds read tables tabulated once: the footer gives that time, as
  // summary.json does.
  EXPECT_NE(r.output.find("tabulated once for all, in " + nocflow::fixed(j["tabulate_seconds"].get<double>(), 4) +
                          " s"),
            std::string::npos)
      << r.output;
  EXPECT_NEAR(j["total_cost_cycles"].get<double>(),
              j["compute_cycles"].get<double>() + j["redistribution_cycles"].get<double>(), 1e-6);
  const auto plan = nocflow::optimizer::read_plan((out / "plan.yaml").string());
  EXPECT_EQ(plan.layers.front().name, "conv1");
  EXPECT_NEAR(plan.total_cycles(), j["total_cost_cycles"].get<double>(), 1e-3);
  // The same figures as the plan file writes them (12 digits: no last-bit noise of a sum;
  // paper's redistribution on vgg5 summed to 204.79999999999998).
  for (const char* model : {"linkload", "paper"}) {
    const fs::path dir = out_dir(std::string("vgg5_") + model);
    const CliRun m =
        run_nocflow("optimize --hw " + hw("mesh4x4.yaml") +
                    " --network zoo:vgg5 --quiet --cost-model " + model + " --out " + dir.string());
    ASSERT_EQ(m.exit_code, 0) << m.output;
    const auto s = nlohmann::json::parse(std::ifstream(dir / "summary.json"));
    const auto p = nocflow::optimizer::read_plan((dir / "plan.yaml").string());
    EXPECT_EQ(s["compute_cycles"].get<double>(), p.compute_cycles) << model;
    EXPECT_EQ(s["redistribution_cycles"].get<double>(), p.redistribution_cycles) << model;
    EXPECT_EQ(s["energy_pj"].get<double>(), p.energy_pj) << model;
  }
  // What the prediction depends on: the config keys the cost models read, as resolved.
  const std::pair<std::string, std::string> sram_port{"pe.sram_bytes_per_cycle", "64"},
      mesh{"topology.rows", "4"};
  EXPECT_NE(std::find(plan.priced_for.begin(), plan.priced_for.end(), sram_port),
            plan.priced_for.end());
  EXPECT_NE(std::find(plan.priced_for.begin(), plan.priced_for.end(), mesh), plan.priced_for.end());
  for (const auto& [key, value] : plan.priced_for) EXPECT_NE(key.rfind("clock.", 0), 0u) << key;
  std::string text = nocflow::testing::read_file(out / "plan.yaml");
  const auto at = text.find("priced_for: {");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, text.find('}', at) + 1 - at, "priced_for: [pe.sram_bytes_per_cycle]");
  std::ofstream(out / "listed.yaml") << text;
  try {
    nocflow::optimizer::read_plan((out / "listed.yaml").string());
    ADD_FAILURE() << "a list as priced_for was accepted";
  } catch (const nocflow::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("priced_for: expected a map of config keys to values"),
              std::string::npos)
        << e.what();
  }
  // A cost model that does not exist would be printed as the one that priced the plan.
  text = nocflow::testing::read_file(out / "plan.yaml");
  text.replace(text.find("cost_model: linkload"), 20, "cost_model: foo");
  std::ofstream(out / "foo.yaml") << text;
  try {
    nocflow::optimizer::read_plan((out / "foo.yaml").string());
    ADD_FAILURE() << "cost_model: foo was accepted";
  } catch (const nocflow::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("cost_model: unknown cost model 'foo'"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(fs::exists(out / "config.resolved.yaml"));
  std::map<std::string, double> total;
  std::map<std::string, std::string> optimal;
  const auto rows = nocflow::testing::read_csv_rows(out / "compare.csv");
  for (const auto& row : rows) {
    total[row.at("method")] = std::stod(row.at("total_cycles"));
    optimal[row.at("method")] = row.at("optimal");
  }
  // Proven: the exact solvers, and dp-local, whose one window holds all of vgg5 (it was 0).
  for (const char* method : {"dp", "dp-local", "ilp-flow", "ilp-mccormick"})
    EXPECT_EQ(optimal[method], "1") << method;
  EXPECT_EQ(optimal["greedy"], "0");
  EXPECT_EQ(rows.size(), 6u);  // greedy, greedy-layout, dp, dp-local, ilp-flow, ilp-mccormick
  // The exact solvers agree at P = 16 and beat the seed's greedy baseline.
  EXPECT_NEAR(total["dp"], total["ilp-flow"], 1e-6 * total["dp"]);
  EXPECT_NEAR(total["dp"], total["ilp-mccormick"], 1e-6 * total["dp"]);
  EXPECT_LT(total["dp"], total["greedy"]);
  EXPECT_NEAR(total["dp-local"], total["dp"], 1e-6 * total["dp"]);  // one window holds vgg5
  EXPECT_NE(r.output.find("ilp-mccormick"), std::string::npos);
}

// Stopped by its time limit before branch and bound proves anything, the ILP's answer is still
// the optimum when the tree bound meets its cost: it says so (it said "gap 0.00 %" and "not
// proven optimal" side by side).
TEST(OptimizeCli, AnIlpWhoseBoundMeetsItsCostIsOptimalWhateverItsTimeLimit) {
  const CliRun r = run_nocflow("optimize --hw " + hw("mesh4x4.yaml") +
                               " --network zoo:resnet18 --train sgd --solver ilp --time-limit 0.001 "
                               "--quiet --out " + out_dir("ilp_bound").string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("gap 0.00 %, optimal"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("not proven optimal"), std::string::npos) << r.output;
}

// On one PE every layer has one choice: greedy's plan is the optimum the exact solvers prove,
// and --compare says so (it called greedy "not proven optimal").
TEST(OptimizeCli, ACompareOnOnePeCallsEveryPlanOptimal) {
  const fs::path out = out_dir("one_pe");
  const CliRun r = run_nocflow("optimize --hw " + hw("mesh4x4.yaml") +
                               " --set topology.rows=1 --set topology.cols=1 --network zoo:vgg5 "
                               "--compare --out " +
                               out.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("mesh 1x1 (1 PE)"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("not proven optimal"), std::string::npos) << r.output;
  const auto rows = nocflow::testing::read_csv_rows(out / "compare.csv");
  ASSERT_EQ(rows.size(), 6u);
  for (const auto& row : rows) {
    EXPECT_EQ(row.at("optimal"), "1") << row.at("method");
    EXPECT_EQ(row.at("total_cycles"), rows.front().at("total_cycles")) << row.at("method");
  }
}

TEST(OptimizeCli, LinkloadIlpAgreesWithDpAndExportsItsModel) {
  const fs::path lp = nocflow::testing::fresh_path("optimize_vgg5.lp");
  const std::string args =
      "optimize --hw " + hw("mesh4x4.yaml") + " --network zoo:vgg5 --cost-model linkload ";
  const fs::path ilp_out = out_dir("ilp"), dp_out = out_dir("dp");
  const CliRun ilp =
      run_nocflow(args + "--solver ilp --export-lp " + lp.string() + " --out " + ilp_out.string());
  ASSERT_EQ(ilp.exit_code, 0) << ilp.output;
  EXPECT_NE(ilp.output.find("; and " + lp.string() + "\n"), std::string::npos) << ilp.output;
  const CliRun dp = run_nocflow(args + "--solver dp --out " + dp_out.string());
  ASSERT_EQ(dp.exit_code, 0) << dp.output;
  auto total = [](const fs::path& dir) {
    return nlohmann::json::parse(std::ifstream(dir / "summary.json"))["total_cost_cycles"]
        .get<double>();
  };
  EXPECT_NEAR(total(ilp_out), total(dp_out), 1e-6 * total(dp_out));
  // The exported model: one "exactly one choice" row per layer (vgg5 has 7).
  const std::string model = nocflow::testing::read_file(lp);
  for (int layer = 0; layer < 7; ++layer)
    EXPECT_NE(model.find("one_" + std::to_string(layer)), std::string::npos) << layer;
}

// greedy-layout computes one row per edge on demand instead of tabulating (EdgeTables::Rows):
// its plan must cost what --compare's greedy-layout, on full tables, gives without pruning.
TEST(OptimizeCli, GreedyLayoutOnRowsPlansAsOnFullTables) {
  const std::string args = "optimize --hw " + hw("mesh4x4.yaml") +
                           " --network zoo:resnet18 --solver greedy-layout --no-prune ";
  const fs::path rows = out_dir("gl_rows"), full = out_dir("gl_full");
  const CliRun r = run_nocflow(args + "--out " + rows.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("reads one row per edge"), std::string::npos) << r.output;
  const CliRun c = run_nocflow(args + "--compare --out " + full.string());
  ASSERT_EQ(c.exit_code, 0) << c.output;
  EXPECT_EQ(c.output.find("reads one row per edge"), std::string::npos) << c.output;
  double compared = -1;
  for (const auto& row : nocflow::testing::read_csv_rows(full / "compare.csv"))
    if (row.at("method") == "greedy-layout") compared = std::stod(row.at("total_cycles"));
  ASSERT_GT(compared, 0);
  const auto j = nlohmann::json::parse(std::ifstream(rows / "summary.json"));
  EXPECT_NEAR(j["total_cost_cycles"].get<double>(), compared, 1e-9 * compared);
  const auto a = nocflow::optimizer::read_plan((rows / "plan.yaml").string()),
             b = nocflow::optimizer::read_plan((full / "plan.yaml").string());
  ASSERT_EQ(a.layers.size(), b.layers.size());
  for (std::size_t l = 0; l < a.layers.size(); ++l)
    EXPECT_EQ(a.layers[l].choice.str(), b.layers[l].choice.str()) << a.layers[l].name;
}

// The LP relaxation is a lower bound on the optimum: printed beside a proven optimum it must not
// read higher (resnet18 on 8x8 relaxes to the optimum plus rounding noise: 133891.25 + 1e-11,
// which once printed as 133891.3 after a total of 133891.2).
TEST(OptimizeCli, PrintedLpRelaxationIsNotAboveTheOptimum) {
  const fs::path out = out_dir("r18");
  const CliRun r = run_nocflow("optimize --hw " + hw("mesh8x8.yaml") +
                               " --network zoo:resnet18 --solver ilp --out " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto number_after = [&](const std::string& key) {
    const std::size_t at = r.output.find(key);
    EXPECT_NE(at, std::string::npos) << key << " in " << r.output;
    return at == std::string::npos ? 0.0 : std::stod(r.output.substr(at + key.size()));
  };
  ASSERT_NE(r.output.find(", optimal"), std::string::npos) << r.output;
  EXPECT_LE(number_after("LP relaxation "), number_after(": total ")) << r.output;
  // summary.json's bounds alike, to 0.001 cycle (not lp_solve's 17 digits).
  const auto j = nlohmann::json::parse(std::ifstream(out / "summary.json"));
  for (const char* key : {"lp_relaxation", "lower_bound_cycles"}) {
    const double bound = j["ilp"][key].get<double>();
    EXPECT_LE(bound, j["total_cost_cycles"].get<double>()) << key;
    EXPECT_EQ(bound, std::round(bound * 1000) / 1000) << key;
  }
}

// --bnoc prices the paper model with another B_NoC: the plan and summary.json record it, and a
// replay, which prices with a calibration file or one link, says its edge table is not the plan's.
TEST(OptimizeCli, BnocIsRecordedAndAReplayNotesItPricesOtherwise) {
  const std::string machine = "--hw " + hw("mesh4x4.yaml") + " --network zoo:vgg5 ";
  const fs::path dir = out_dir("bnoc");
  const CliRun opt = run_nocflow("optimize " + machine + "--cost-model paper --bnoc 64 --out " +
                                 (dir / "opt").string());
  ASSERT_EQ(opt.exit_code, 0) << opt.output;
  const auto summary = nlohmann::json::parse(std::ifstream(dir / "opt" / "summary.json"));
  EXPECT_EQ(summary["bnoc_bytes_per_cycle"].get<double>(), 64);
  const auto plan = nocflow::optimizer::read_plan((dir / "opt" / "plan.yaml").string());
  ASSERT_TRUE(plan.bnoc.has_value());
  EXPECT_EQ(*plan.bnoc, 64);
  const CliRun sim =
      run_nocflow("simulate " + machine + "--quiet --plan " + (dir / "opt" / "plan.yaml").string() +
                  " --out " + (dir / "sim").string());
  ASSERT_EQ(sim.exit_code, 0) << sim.output;
  EXPECT_NE(sim.output.find("note: the plan was priced with --bnoc 64 (the paper model's B_NoC, "
                            "bytes/cycle), this run prices its edges uncalibrated"),
            std::string::npos)
      << sim.output;
  // Without --bnoc: null in summary.json, nothing in the plan, no note.
  const CliRun plain =
      run_nocflow("optimize " + machine + "--cost-model paper --out " + (dir / "plain").string());
  ASSERT_EQ(plain.exit_code, 0) << plain.output;
  EXPECT_TRUE(
      nlohmann::json::parse(std::ifstream(dir / "plain" / "summary.json"))["bnoc_bytes_per_cycle"]
          .is_null());
  EXPECT_FALSE(
      nocflow::optimizer::read_plan((dir / "plain" / "plan.yaml").string()).bnoc.has_value());
}

// The console says what was done as asked: no pruning under --no-prune (it said "1143 -> 1143
// after dominance pruning"), a time limit under a second as given (it printed "0 s"), and a
// pipeline whose stages' resident weights do not fit in mesh rows and what to change.
TEST(OptimizeCli, ConsoleSaysWhatWasAsked) {
  const std::string machine = "--hw " + hw("mesh4x4.yaml") + " --network zoo:vgg5 ";
  const CliRun unpruned =
      run_nocflow("optimize " + machine + "--no-prune --out " + out_dir("said_np").string());
  ASSERT_EQ(unpruned.exit_code, 0) << unpruned.output;
  EXPECT_NE(unpruned.output.find("s; not pruned: --no-prune)"), std::string::npos)
      << unpruned.output;
  EXPECT_EQ(unpruned.output.find("after dominance pruning"), std::string::npos) << unpruned.output;
  const CliRun ilp = run_nocflow("optimize " + machine + "--solver ilp --time-limit 0.5 --out " +
                                 out_dir("said_tl").string());
  ASSERT_EQ(ilp.exit_code, 0) << ilp.output;
  EXPECT_NE(ilp.output.find("time limit 0.5 s"), std::string::npos) << ilp.output;
  const CliRun tight = run_nocflow("optimize " + machine +
                                   "--stages 2 --resident-weights --set pe.sram_bytes=100KiB "
                                   "--out " +
                                   out_dir("said_rw").string());
  EXPECT_EQ(tight.exit_code, 2) << tight.output;
  EXPECT_NE(tight.output.find(" on 2 mesh rows hold "), std::string::npos) << tight.output;
  EXPECT_NE(tight.output.find("(raise pe.sram_bytes, use fewer --stages, or leave out "
                              "--resident-weights)"),
            std::string::npos)
      << tight.output;
}

// vit_b_16's 197 tokens are prime: its LayerNorms' ReduceMean, Add and Sqrt, which can split
// only the tokens, ran on PE 0 alone without a word. One note line says so, for one plan and
// for a pipeline; not with balanced splits, nor for the default example's resnet18.
TEST(OptimizeCli, LayersNoDivisorSplitsGetOneNoteLine) {
  const std::string vit = " --network " NOCFLOW_SOURCE_DIR "/tests/optimizer/data/vit_b_16.onnx";
  const std::string note =
      "\n  note: 100 layers run on one PE since no divisor of their dimensions splits them (197 "
      "is prime); --set partition.splits=balanced offers uneven blocks\n";
  for (const std::string extra : {"", " --stages 2"}) {
    const CliRun r = run_nocflow("optimize --hw " + hw("mesh8x8.yaml") + vit + extra + " --out " +
                                 out_dir("single_pe" + std::to_string(extra.size())).string());
    ASSERT_EQ(r.exit_code, 0) << extra << "\n" << r.output;
    const auto at = r.output.find(note);
    EXPECT_NE(at, std::string::npos) << extra << "\n" << r.output;
    EXPECT_EQ(r.output.find("on one PE", at + note.size()), std::string::npos) << r.output;
  }
  const CliRun balanced = run_nocflow("optimize --hw " + hw("mesh8x8.yaml") + vit +
                                      " --set partition.splits=balanced --out " +
                                      out_dir("single_pe_balanced").string());
  ASSERT_EQ(balanced.exit_code, 0) << balanced.output;
  EXPECT_EQ(balanced.output.find("on one PE"), std::string::npos) << balanced.output;
  const CliRun resnet = run_nocflow("optimize --hw " + hw("mesh8x8.yaml") +
                                    " --network zoo:resnet18 --out " +
                                    out_dir("single_pe_resnet18").string());
  ASSERT_EQ(resnet.exit_code, 0) << resnet.output;
  EXPECT_EQ(resnet.output.find("on one PE"), std::string::npos) << resnet.output;
}

TEST(OptimizeCli, PlacementSearchWritesRowsChoicesThatReplay) {
  const std::string machine = "--hw " + hw("mesh4x4.yaml") + " --network zoo:vgg5 ";
  const fs::path dir = out_dir("placement");
  const CliRun snake = run_nocflow("optimize " + machine + "--cost-model linkload --out " +
                                   (dir / "snake").string());
  const CliRun search =
      run_nocflow("optimize " + machine + "--cost-model linkload --placement search --out " +
                  (dir / "search").string());
  ASSERT_EQ(snake.exit_code, 0) << snake.output;
  ASSERT_EQ(search.exit_code, 0) << search.output;
  auto total = [&](const std::string& name) {
    std::ifstream in(dir / name / "summary.json");
    return nlohmann::json::parse(in)["total_cost_cycles"].get<double>();
  };
  EXPECT_LT(total("search"), total("snake"));
  const nocflow::optimizer::Plan plan =
      nocflow::optimizer::read_plan((dir / "search" / "plan.yaml").string());
  int rows = 0;
  for (const auto& l : plan.layers) rows += l.choice.rows_placement;
  EXPECT_GT(rows, 0);
  const CliRun sim =
      run_nocflow("simulate " + machine + "--quiet --plan " +
                  (dir / "search" / "plan.yaml").string() + " --out " + (dir / "sim").string());
  EXPECT_EQ(sim.exit_code, 0) << sim.output;
}

// --quiet drops the progress lines (on stderr every 2 s, so a short run has none to drop) and
// nothing else: the same plan, whole machine and pipelined (whose bands and stage solves report
// through their own callbacks).
TEST(OptimizeCli, QuietWritesTheSamePlan) {
  const std::string machine = "--hw " + hw("mesh4x4.yaml") + " --network zoo:vgg5 ";
  const fs::path dir = out_dir("quiet");
  for (const std::string pipeline : {"", "--stages 2 ", "--solver ilp "}) {
    const std::string tag = pipeline.empty() ? "whole" : pipeline == "--solver ilp " ? "ilp" : "stages";
    const CliRun plain =
        run_nocflow("optimize " + machine + pipeline + "--out " + (dir / tag).string());
    const CliRun quiet = run_nocflow("optimize " + machine + pipeline + "--quiet --out " +
                                     (dir / (tag + "_quiet")).string());
    ASSERT_EQ(plain.exit_code, 0) << plain.output;
    ASSERT_EQ(quiet.exit_code, 0) << quiet.output;
    EXPECT_EQ(quiet.output.find("  ... "), std::string::npos) << quiet.output;
    EXPECT_EQ(quiet.output.find("solving the ILP"), std::string::npos) << quiet.output;
    EXPECT_EQ(plain.output.find("solving the ILP") != std::string::npos, tag == "ilp") << plain.output;
    const std::string plan = nocflow::testing::read_file(dir / tag / "plan.yaml");
    EXPECT_FALSE(plan.empty());
    EXPECT_EQ(nocflow::testing::read_file(dir / (tag + "_quiet") / "plan.yaml"), plan) << tag;
  }
}

TEST(OptimizeCli, BadInputExitsTwoAndWritesNothing) {
  struct Case { std::string args, message; };
  const std::vector<Case> cases = {
      {"--solver annealing", "--solver: unknown solver 'annealing'"},
      {"--cost-model fancy", "--cost-model: unknown cost model 'fancy'"},
      {"--formulation bigm --solver ilp", "unknown ILP formulation"},
      {"--exact-nodes --set topology.cols=7 --set topology.rows=1",
       "no partition choice using exactly 7 PEs"},
      {"--set pe.sram_bytes=1024", "does not fit in PE memory"},
      {"--memory-limit --set pe.sram_bytes=1024", "; --no-memory-limit plans it anyway"},
      {"--export-lp model.lp", "--export-lp: applies to --solver ilp without --compare only"},
      // --compare solves without exporting: the file was silently never written.
      {"--compare --export-lp model.lp",
       "--export-lp: applies to --solver ilp without --compare only"},
      {"--solver ilp --time-limit nan", "--time-limit: expected a number, got 'nan'"},
      // Refused before the solve, not after it.
      {"--solver ilp --export-lp /nonexistent-nocflow/x.lp",
       "--export-lp /nonexistent-nocflow/x.lp: cannot write: no folder /nonexistent-nocflow"},
      {"--solver ilp --export-lp /", "--export-lp /: cannot write: it is a directory"},
      // dp reads them only for a graph it hands to the ilp; greedy never.
      {"--solver greedy --formulation mccormick",
       "--formulation: applies to --solver ilp or dp (or --compare) only"},
      {"--solver dp-local --time-limit 5",
       "--time-limit: applies to --solver ilp or dp (or --compare) only"},
      {"--bnoc -1", "--bnoc: must be at least 0, got -1"},
      // linkload never read it: the total did not move.
      {"--bnoc 100",
       "--bnoc: sets the paper model's B_NoC; --cost-model linkload does not read it"},
      {"--placement diagonal", "--placement: unknown placement 'diagonal' (known: snake, search)"},
      // A typo gets its suggestion, as config keys and zoo names do.
      {"--solver dpp", "--solver: unknown solver 'dpp'; did you mean 'dp'?"},
      {"--train sdg", "--train: unknown optimizer 'sdg'; did you mean 'sgd'?"},
      // Ignored on a crossbar: the plan came out byte-identical to the snake's.
      {"--set topology.kind=crossbar --set topology.ports=16 --placement search",
       "--placement search: places mesh rows; a crossbar has none"},
  };
  for (const Case& c : cases) {
    const fs::path out = out_dir("bad");
    const CliRun r = run_nocflow("optimize --hw " + hw("mesh4x4.yaml") + " --network zoo:vgg5 " + c.args + " --out " + out.string());
    EXPECT_EQ(r.exit_code, 2) << c.args << "\n" << r.output;
    EXPECT_NE(r.output.find(c.message), std::string::npos) << c.args << "\n" << r.output;
    EXPECT_FALSE(fs::exists(out)) << c.args;
  }
}

// A calibration without this machine's router contention is refused before any output under
// linkload (its notes used to come first); paper reads only its B_NoC and latency.
TEST(OptimizeCli, ACalibrationOfAnotherMachineIsRefusedFirst) {
  const fs::path dir = nocflow::testing::fresh_dir("optimize_other_calibration");
  std::ofstream(dir / "cal.yaml") << "paper: {bnoc_bytes_per_cycle: 64, latency_cycles: 10}\n"
                                     "linkload: {router_contention: {\"mesh 8x8\": 0.5}}\n"
                                     "fitted_for: {machines: [mesh 8x8]}\n";
  const std::string args = "optimize --hw " + hw("mesh4x4.yaml") + " --network zoo:vgg5 --calibration " +
                           (dir / "cal.yaml").string();
  const CliRun linkload = run_nocflow(args + " --out " + (dir / "l").string());
  EXPECT_EQ(linkload.exit_code, 2) << linkload.output;
  EXPECT_EQ(linkload.output.rfind("nocflow: error: " + (dir / "cal.yaml").string() +
                                      ": linkload.router_contention has no entry for 'mesh 4x4'",
                                  0),
            0u)
      << linkload.output;
  const CliRun paper = run_nocflow(args + " --cost-model paper --out " + (dir / "p").string());
  EXPECT_EQ(paper.exit_code, 0) << paper.output;
  EXPECT_NE(paper.output.find("were fitted on mesh 8x8, not on mesh 4x4"), std::string::npos) << paper.output;
}

}  // namespace
