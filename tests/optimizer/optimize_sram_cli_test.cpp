// SPDX-License-Identifier: MIT
// `nocflow optimize` and the PEs' SRAM: plans that overflow it, and refusals that say what the
// whole network needs.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <tuple>

#include "tests/optimizer/optimize_cli_util.h"

namespace {

namespace fs = std::filesystem;
using nocflow::testing::CliRun, nocflow::testing::hw, nocflow::testing::out_dir,
    nocflow::testing::run_nocflow;

// A plan that overflows a PE's SRAM (--no-memory-limit; 128 KiB PEs) is written, with a warning,
// because simulate will refuse it; by default (--memory-limit) no warning, and simulate accepts it.
// Pipelines alike.
TEST(OptimizeCli, PlansOverflowingSramAreWrittenWithAWarning) {
  const std::string machine =
      "--hw " + hw("mesh4x4.yaml") + " --network zoo:vgg5 --set pe.sram_bytes=128KiB ";
  auto optimize_then_replay = [&](const std::string& name, const std::string& extra) {
    const fs::path dir = out_dir("sram_" + name);
    const CliRun opt =
        run_nocflow("optimize " + machine + extra + "--out " + (dir / "opt").string());
    EXPECT_EQ(opt.exit_code, 0) << opt.output;
    const CliRun sim =
        run_nocflow("simulate " + machine + "--quiet --plan " +
                    (dir / "opt" / "plan.yaml").string() + " --out " + (dir / "sim").string());
    return std::tuple{opt, sim, dir};
  };
  for (const std::string stages : {"", "--stages 2 "}) {
    const std::string pipeline = stages.empty() ? "" : "_stages";
    const auto [over, refused, over_dir] =
        optimize_then_replay("loose" + pipeline, "--no-memory-limit " + stages);
    EXPECT_NE(over.output.find(" more than a PE's 131072 bytes of SRAM"), std::string::npos)
        << over.output;
    EXPECT_EQ(over.output.find(" 1 layer of this plan need "), std::string::npos) << over.output;
    EXPECT_EQ(refused.exit_code, 2) << refused.output;
    // summary.json lists the warning among its notes, and says the limit was off.
    const auto summary = nlohmann::json::parse(std::ifstream(over_dir / "opt" / "summary.json"));
    EXPECT_FALSE(summary["memory_limit"].get<bool>());
    const auto& notes = summary["notes"];
    EXPECT_TRUE(std::any_of(notes.begin(), notes.end(), [](const nlohmann::json& n) {
      return n.get<std::string>().rfind("warning: ", 0) == 0 &&
             n.get<std::string>().find(" more than a PE's 131072 bytes of SRAM") !=
                 std::string::npos;
    })) << notes;
    const auto [within, accepted, within_dir] = optimize_then_replay("tight" + pipeline, stages);
    EXPECT_EQ(within.output.find("warning"), std::string::npos) << within.output;
    EXPECT_EQ(accepted.exit_code, 0) << accepted.output;
  }
}

// The refusal named only the first layer that did not fit: raising pe.sram_bytes to its
// footprint was refused again for the next one. Every command that solves says what the whole
// network needs, so that one raise is enough.
TEST(OptimizeCli, ASramRefusalGivesWhatTheWholeNetworkNeedsSoOneRaiseIsEnough) {
  const std::string args = " --hw " + hw("mesh4x4.yaml") + " --network zoo:gpt2_block --out ";
  const std::string first =
      "layer 'attn.scores' does not fit in PE memory: its smallest per-PE footprint (weights, "
      "input and output share) is 1966080 bytes, the limit (pe.sram_bytes) is 1048576 bytes; ";
  // The most any layer needs at its smallest: the masked scores (12 heads of 1024 x 1024, 2-byte
  // elements) in and out on 16 PEs, and their rows of the 1024 x 1024 causal mask (the scaled
  // scores, without the mask, before a layer held the fixed constants it reads).
  const std::int64_t scores = 12 * 1024 * 1024 * 2, mask = 1024 * 1024 * 2, pes = 16;
  const std::int64_t need = (2 * scores + mask) / pes;
  const std::string needs =
      "the network needs at least " + std::to_string(need) +
      " bytes per PE (layer 'attn.masked'); raise pe.sram_bytes or use more PEs";
  for (const char* command : {"optimize", "simulate"}) {
    const fs::path out = out_dir(std::string("sram_need_") + command);
    const CliRun r = run_nocflow(command + args + out.string());
    EXPECT_EQ(r.exit_code, 2) << command << "\n" << r.output;
    EXPECT_NE(r.output.find(first + needs), std::string::npos) << command << "\n" << r.output;
    EXPECT_FALSE(fs::exists(out / "plan.yaml")) << command;
  }
  // A pipeline's example refusal says which band it holds for: an even split's (2 rows of 4
  // for 2 stages), the widest every stage can have. The first band that failed, of 1 row, said
  // the network needed 12582912 bytes per PE, twice what 2 stages need.
  const CliRun staged =
      run_nocflow("optimize --stages 2" + args + out_dir("sram_need_stages").string());
  EXPECT_EQ(staged.exit_code, 2) << staged.output;
  EXPECT_NE(staged.output.find("for example: on a band of 2 mesh rows (8 PEs): layer 'attn.query' "
                               "does not fit in PE memory"),
            std::string::npos)
      << staged.output;
  const std::string band_need = std::to_string(2 * need);  // half the PEs per stage
  EXPECT_NE(staged.output.find("; the network needs at least " + band_need +
                               " bytes per PE (layer 'attn.masked'); raise pe.sram_bytes"),
            std::string::npos)
      << staged.output;
  const CliRun staged_raised = run_nocflow("optimize --stages 2 --set pe.sram_bytes=" + band_need +
                                           args + out_dir("sram_need_stages_raised").string());
  EXPECT_EQ(staged_raised.exit_code, 0) << staged_raised.output;
  const CliRun raised = run_nocflow("optimize --set pe.sram_bytes=" + std::to_string(need) + args +
                                    out_dir("sram_need_raised").string());
  EXPECT_EQ(raised.exit_code, 0) << raised.output;
  const CliRun short_by_one =
      run_nocflow("optimize --set pe.sram_bytes=" + std::to_string(need - 1) + args +
                  out_dir("sram_need_short").string());
  EXPECT_EQ(short_by_one.exit_code, 2) << short_by_one.output;  // the figure is the least
}

}  // namespace
