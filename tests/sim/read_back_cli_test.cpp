// SPDX-License-Identifier: MIT
// Intermediate artefacts written by one command and read back by another (DESIGN §1): per-PE
// programs (`simulate --dump-programs`, `simulate --programs`) and graphs (`inspect --save`,
// `--network FILE`). Plans: simulate_cli_test.cpp.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "noc/base/format.h"
#include "tests/cli_runner.h"

namespace nocflow::testing {
namespace {

namespace fs = std::filesystem;
const std::string kSrc = NOCFLOW_SOURCE_DIR;

/// summary.json without its wall-clock fields, the only ones allowed to vary run to run.
std::string summary_without_timing(const fs::path& dir) {
  return json_without(dir / "summary.json", {"wall_seconds", "flits_per_second"});
}

TEST(ReadBackCli, DumpedProgramsReadBackReplayExactlyAndEditsTakeEffect) {
  const fs::path dir = fresh_dir("simulate_programs");
  const std::string hw = "--hw " + kSrc + "/configs/hw/mesh4x4.yaml ";
  std::string back_output;  // the dataflow dump's replay
  for (const char* mode : {"dataflow", "barrier"}) {
    const fs::path run = dir / mode, programs = dir / (std::string(mode) + "_programs");
    const CliRun sim =
        run_nocflow("simulate " + hw + "--network zoo:vgg5 --mode " + mode + " --dump-programs " +
                    programs.string() + " --quiet --out " + run.string());
    ASSERT_EQ(sim.exit_code, 0) << sim.output;
    const CliRun back =
        run_nocflow("simulate " + hw + "--programs " + programs.string() + " --quiet --out " +
                    (dir / (std::string(mode) + "_back")).string());
    ASSERT_EQ(back.exit_code, 0) << back.output;
    if (back_output.empty()) back_output = back.output;
    const nlohmann::json a = nlohmann::json::parse(read_file(run / "summary.json"));
    const nlohmann::json b =
        nlohmann::json::parse(read_file(dir / (std::string(mode) + "_back") / "summary.json"));
    for (const char* key : {"total_cycles", "compute_cycles", "communication_cycles", "messages",
                            "flits", "flit_hops", "steps"})
      EXPECT_EQ(a[key], b[key]) << mode << " " << key;
    EXPECT_DOUBLE_EQ(a["energy_pj"]["noc"].get<double>(), b["energy_pj"]["noc"].get<double>());
    EXPECT_EQ(read_file(run / "links.csv"),
              read_file(dir / (std::string(mode) + "_back") / "links.csv"))
        << mode;
    // transfers.csv: every edge that moves bytes, with the same bytes and simulated cycles (no
    // type or predictions without the network).
    std::vector<std::map<std::string, std::string>> moving;
    for (auto& row : read_csv_rows(run / "transfers.csv"))
      if (row["bytes"] != "0") moving.push_back(row);
    const auto replayed = read_csv_rows(dir / (std::string(mode) + "_back") / "transfers.csv");
    ASSERT_EQ(replayed.size(), moving.size()) << mode;
    ASSERT_GE(moving.size(), 4u);
    for (std::size_t e = 0; e < moving.size(); ++e)
      for (const char* key : {"src", "dst", "bytes", "simulated_cycles"})
        EXPECT_EQ(replayed[e].at(key), moving[e].at(key)) << mode << " edge " << e << " " << key;
  }
  // Every PE first computes 100,000 cycles more: the whole run shifts by exactly that.
  const fs::path programs = dir / "dataflow_programs", edited = dir / "edited";
  fs::create_directories(edited);
  for (int pe = 0; pe < 16; ++pe) {
    const std::string name = "pe_" + std::to_string(pe) + ".txt";
    std::ofstream(edited / name) << "compute  cycles=100000\n" << read_file(programs / name);
  }
  const CliRun shifted = run_nocflow("simulate " + hw + "--programs " + edited.string() +
                                     " --quiet --out " + (dir / "shifted").string());
  ASSERT_EQ(shifted.exit_code, 0) << shifted.output;
  const auto cycles = [](const fs::path& d) {
    return nlohmann::json::parse(read_file(d / "summary.json"))["total_cycles"].get<std::int64_t>();
  };
  EXPECT_EQ(cycles(dir / "shifted"), cycles(dir / "dataflow") + 100000);
  // One 64-byte message: its NoC energy prints in pJ (it printed "0.000 uJ"), its count singular.
  const fs::path tiny = dir / "tiny";
  fs::create_directories(tiny);
  for (int pe = 2; pe < 16; ++pe) std::ofstream(tiny / ("pe_" + std::to_string(pe) + ".txt"));
  std::ofstream(tiny / "pe_0.txt") << "send to=PE1 bytes=64 tag=1 edge=a->b\n";
  std::ofstream(tiny / "pe_1.txt") << "recv from=PE0 bytes=64 tag=1 edge=a->b\n";
  auto replay_tiny = [&](const std::string& out) {
    return run_nocflow("simulate " + hw + "--programs " + tiny.string() + " --quiet --out " +
                       (dir / out).string());
  };
  const CliRun one = replay_tiny("tiny_run");
  ASSERT_EQ(one.exit_code, 0) << one.output;
  EXPECT_NE(one.output.find("1 message, 1 packet, 2 flits, 64 bytes;"), std::string::npos)
      << one.output;
  const double noc_pj =
      nlohmann::json::parse(read_file(dir / "tiny_run" / "summary.json"))["energy_pj"]["noc"]
          .get<double>();
  ASSERT_GT(noc_pj, 0);
  ASSERT_LT(noc_pj, 1000);
  EXPECT_NE(one.output.find(fixed(noc_pj, 3) + " pJ in the NoC"), std::string::npos) << one.output;
  // A name in names.txt that no program uses is noted (it was ignored unsaid); a dump has none.
  EXPECT_EQ(back_output.find("that no program uses"), std::string::npos) << back_output;
  std::ofstream(tiny / "names.txt") << "layer ghost\nedge a->b\n";
  const CliRun named = replay_tiny("tiny_named");
  ASSERT_EQ(named.exit_code, 0) << named.output;
  EXPECT_NE(named.output.find("names.txt: 1 layer name that no program uses (ghost); ignored"),
            std::string::npos)
      << named.output;
  // A message of more flits than the NI counts (2^31 flits of the config's 32 bytes) is refused
  // at its line (it was, when sent, naming only its PE).
  const std::string bytes = std::to_string((std::int64_t{1} << 31) * 32);
  std::ofstream(tiny / "pe_0.txt") << "send to=PE1 bytes=" << bytes << " tag=1\n";
  std::ofstream(tiny / "pe_1.txt") << "recv from=PE0 bytes=" << bytes << " tag=1\n";
  const CliRun huge = replay_tiny("tiny_huge");
  EXPECT_EQ(huge.exit_code, 2) << huge.output;
  EXPECT_NE(huge.output.find("pe_0.txt:1: message of " + bytes + " bytes: more flits than the NI"),
            std::string::npos)
      << huge.output;

  // A receive deleted: the send it served is named, nothing is written.
  std::string pe1 = read_file(programs / "pe_1.txt");
  const auto recv = pe1.find("\nrecv ");
  ASSERT_NE(recv, std::string::npos);
  const auto recv_end = pe1.find('\n', recv + 1);
  const std::string removed = pe1.substr(recv + 1, recv_end - recv - 1);
  pe1.erase(recv, recv_end - recv);
  std::ofstream(edited / "pe_1.txt") << pe1;
  const CliRun bad = run_nocflow("simulate " + hw + "--programs " + edited.string() + " --out " +
                                 (dir / "bad").string());
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  const std::string from =
      removed.substr(removed.find("from=") + 5,
                     removed.find(' ', removed.find("from=")) - removed.find("from=") - 5);
  EXPECT_NE(bad.output.find("nothing receives this message: PE 1 has no 'recv from=" + from),
            std::string::npos)
      << bad.output;
  EXPECT_FALSE(fs::exists(dir / "bad"));
  // Options that belong to a network and plan are refused with --programs.
  const CliRun both = run_nocflow("simulate " + hw + "--programs " + programs.string() +
                                  " --network zoo:vgg5 --out " + (dir / "both").string());
  EXPECT_EQ(both.exit_code, 2) << both.output;
  EXPECT_NE(both.output.find("excludes"), std::string::npos) << both.output;
  const CliRun placed = run_nocflow("simulate " + hw + "--programs " + programs.string() +
                                    " --placement search --out " + (dir / "placed").string());
  EXPECT_EQ(placed.exit_code, 2) << placed.output;
  EXPECT_NE(placed.output.find("--placement"), std::string::npos) << placed.output;
}

// A pipeline's micro-batches interleave on the PEs: the dump's names.txt keeps the plan's order
// of layers and edges in the replay's tables (without it, PE 0's stage came first).
TEST(ReadBackCli, ProgramsReplayListsLayersInThePlansOrder) {
  const fs::path dir = fresh_dir("simulate_programs_order"), programs = dir / "programs";
  const std::string hw = "--hw " + kSrc + "/configs/hw/mesh4x4.yaml ";
  const CliRun sim =
      run_nocflow("simulate " + hw + "--network zoo:vgg5 --stages 2 --dump-programs " +
                  programs.string() + " --quiet --out " + (dir / "run").string());
  ASSERT_EQ(sim.exit_code, 0) << sim.output;
  const CliRun back = run_nocflow("simulate " + hw + "--programs " + programs.string() +
                                  " --quiet --out " + (dir / "back").string());
  ASSERT_EQ(back.exit_code, 0) << back.output;
  auto column = [](const fs::path& csv, const char* key) {
    std::vector<std::string> names;
    for (auto& row : read_csv_rows(csv)) names.push_back(row.at(key));
    return names;
  };
  const std::vector<std::string> layers = column(dir / "run" / "layers.csv", "layer");
  ASSERT_GE(layers.size(), 8u);
  EXPECT_EQ(column(dir / "back" / "layers.csv", "layer"), layers);
  std::vector<std::string> moving;
  for (auto& row : read_csv_rows(dir / "run" / "transfers.csv"))
    if (row["bytes"] != "0") moving.push_back(row["src"] + "->" + row["dst"]);
  std::vector<std::string> replayed;
  for (auto& row : read_csv_rows(dir / "back" / "transfers.csv"))
    replayed.push_back(row["src"] + "->" + row["dst"]);
  EXPECT_EQ(replayed, moving);
}

// Past 2^53 ps (6 * 10^17 here) SystemC time held as a double stops advancing cycle by cycle:
// this run used to hang at the slowest clock the configs allow.
TEST(ReadBackCli, ALongProgramAtTheSlowestClockEndsOnItsCycle) {
  const fs::path dir = fresh_dir("simulate_slow_clock"), programs = dir / "programs";
  fs::create_directories(programs);
  const std::int64_t compute = 600'000'000'000;
  std::ofstream(programs / "pe_0.txt")
      << "compute cycles=" << compute << "\nsend to=PE1 bytes=64 tag=1\n";
  std::ofstream(programs / "pe_1.txt") << "recv from=PE0 bytes=64 tag=1\n";
  std::ofstream(programs / "pe_2.txt");
  std::ofstream(programs / "pe_3.txt");
  auto total_at = [&](const std::string& ghz) {
    const fs::path out = dir / ghz;
    const CliRun r =
        run_nocflow("simulate --hw " + kSrc +
                    "/configs/hw/mesh4x4.yaml --set topology.rows=2 --set "
                    "topology.cols=2 --set clock.frequency_ghz=" +
                    ghz + " --quiet --programs " + programs.string() + " --out " + out.string());
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return nlohmann::json::parse(read_file(out / "summary.json"))["total_cycles"]
        .get<std::int64_t>();
  };
  // Cycles do not depend on the clock: the same as at 1 GHz, a few past the compute.
  const std::int64_t slow = total_at("0.001");
  EXPECT_EQ(slow, total_at("1"));
  EXPECT_GT(slow, compute);
  EXPECT_LT(slow, compute + 20);
}

TEST(ReadBackCli, ASavedGraphOptimizesAndReplaysAsTheNetworkItWasSavedFrom) {
  const fs::path dir = fresh_dir("simulate_saved_graph");
  const std::string hw = "--hw " + kSrc + "/configs/hw/mesh4x4.yaml ";  // 2-byte data
  const fs::path graph = dir / "vgg5.train.yaml";
  const CliRun save =
      run_nocflow("inspect --network zoo:vgg5 --train sgd --elem-bytes 2 --save " + graph.string());
  ASSERT_EQ(save.exit_code, 0) << save.output;
  const std::string solve = "--solver greedy-layout --cost-model linkload --out ";
  const CliRun from_zoo = run_nocflow("optimize " + hw + "--network zoo:vgg5 --train sgd " + solve +
                                      (dir / "zoo").string());
  const CliRun from_file = run_nocflow("optimize " + hw + "--network " + graph.string() + " " +
                                       solve + (dir / "file").string());
  ASSERT_EQ(from_zoo.exit_code, 0) << from_zoo.output;
  ASSERT_EQ(from_file.exit_code, 0) << from_file.output;
  EXPECT_EQ(read_file(dir / "zoo" / "plan.yaml"), read_file(dir / "file" / "plan.yaml"));
  const std::string plan = "--plan " + (dir / "zoo" / "plan.yaml").string() + " --quiet --out ";
  const CliRun a = run_nocflow("simulate " + hw + "--network zoo:vgg5 --train sgd " + plan +
                               (dir / "a").string());
  const CliRun b = run_nocflow("simulate " + hw + "--network " + graph.string() + " " + plan +
                               (dir / "b").string());
  ASSERT_EQ(a.exit_code, 0) << a.output;
  ASSERT_EQ(b.exit_code, 0) << b.output;
  EXPECT_EQ(summary_without_timing(dir / "a"), summary_without_timing(dir / "b"));
  // Both name the weight updates' optimizer, the saved graph's from its update layers; so do
  // the banners and optimize's summary.
  for (const char* run : {"a", "b", "zoo", "file"}) {
    const auto summary = nlohmann::json::parse(read_file(dir / run / "summary.json"));
    EXPECT_EQ(summary["train"], "sgd") << run;
    EXPECT_EQ(summary["batch"], 1) << run;
  }
  EXPECT_NE(b.output.find("batch 1, training with sgd, plan"), std::string::npos) << b.output;
  EXPECT_NE(from_file.output.find("vgg5.train (training with sgd) on mesh 4x4"), std::string::npos)
      << from_file.output;
  EXPECT_EQ(b.output.find("does not apply"), std::string::npos) << b.output;
  // Saved with 4-byte elements, the graph replays the 2-byte plan's choices with a note.
  const fs::path wide = dir / "vgg5.train.4B.yaml";
  ASSERT_EQ(run_nocflow("inspect --network zoo:vgg5 --train sgd --save " + wide.string()).exit_code,
            0);
  const CliRun c = run_nocflow("simulate " + hw + "--network " + wide.string() + " " + plan +
                               (dir / "c").string());
  ASSERT_EQ(c.exit_code, 0) << c.output;
  EXPECT_NE(c.output.find("(other shapes or element size): its predicted total does not apply"),
            std::string::npos)
      << c.output;
  // It is differentiated already.
  const CliRun twice = run_nocflow("optimize " + hw + "--network " + graph.string() +
                                   " --train sgd --out " + (dir / "twice").string());
  EXPECT_EQ(twice.exit_code, 2) << twice.output;
  EXPECT_NE(twice.output.find("is a training graph already"), std::string::npos) << twice.output;
}

}  // namespace
}  // namespace nocflow::testing
