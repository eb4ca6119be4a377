// SPDX-License-Identifier: MIT
// `nocflow simulate --dump-programs`: the sends the lowering writes, read back: the order an
// edge sends in, and each barrier phase replayed alone by `traffic --messages`.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/cli_runner.h"
#include "tests/sim/small_runs.h"

namespace nocflow::testing {
namespace {

namespace fs = std::filesystem;

/// The sends of programs dumped by `simulate --dump-programs DIR` on `pes` PEs, each PE's in
/// its order: source, destination, bytes and the edge named by its `edge=` (empty without).
struct DumpedSend {
  int src = 0, dst = 0;
  std::int64_t bytes = 0;
  std::string edge;
};
std::vector<DumpedSend> dumped_sends(const fs::path& dir, int pes) {
  std::vector<DumpedSend> sends;
  for (int pe = 0; pe < pes; ++pe) {
    std::ifstream in(dir / ("pe_" + std::to_string(pe) + ".txt"));
    EXPECT_TRUE(in) << pe;
    for (std::string line; std::getline(in, line);) {
      std::istringstream fields(line);
      std::string kind, layer, to, bytes, tag, edge;
      fields >> kind >> layer >> to >> bytes >> tag >> edge;
      if (kind != "send") continue;
      sends.push_back({pe, std::stoi(to.substr(5)), std::stoll(bytes.substr(6)),
                       edge.rfind("edge=", 0) == 0 ? edge.substr(5) : ""});  // to=PEn, bytes=B
    }
  }
  return sends;
}

TEST(SimulateCli, EdgesOfTheSameSendsButOtherBytesChooseTheirSendOrderEach) {
  // Under OUTP=64 on 8x8 each of gathers.yaml's edges has every PE send to the same 63 peers,
  // of 1 KiB, 256 B, 128 B, 8 B and 8 B per message. Lowering picks nearest first for an edge
  // where the round-robin fluid says it ends sooner (the two largest), once per list of sends:
  // the small edges, whose gain is within the margin, keep ring order and are not taken for the
  // large ones.
  const fs::path dir = fresh_dir("simulate_send_order_bytes");
  const std::string hw = " --hw " + kSrc + "/configs/hw/mesh8x8.yaml --network " + kSrc +
                         "/tests/sim/data/gathers.yaml --quiet";
  const CliRun opt =
      run_nocflow("optimize" + hw + " --solver greedy --out " + (dir / "opt").string());
  ASSERT_EQ(opt.exit_code, 0) << opt.output;
  {
    std::ofstream forced(dir / "forced.yaml");
    std::istringstream plan(read_file(dir / "opt" / "plan.yaml"));
    int choices = 0;
    for (std::string line; std::getline(plan, line);) {
      const std::size_t at = line.find("choice: ");
      if (at != std::string::npos) {
        line = line.substr(0, at) + "choice: OUTP=64";
        ++choices;
      }
      forced << line << "\n";
    }
    ASSERT_EQ(choices, 6);
  }
  const CliRun sim = run_nocflow("simulate" + hw + " --plan " + (dir / "forced.yaml").string() +
                                 " --mode barrier --dump-programs " + (dir / "programs").string() +
                                 " --out " + (dir / "sim").string());
  ASSERT_EQ(sim.exit_code, 0) << sim.output;
  // Per edge: whether every source sends nearest first (fewest hops, ties in any order).
  std::map<std::string, std::map<int, std::vector<int>>> hops;  // edge -> source -> hops in order
  for (const DumpedSend& t : dumped_sends(dir / "programs", 64))
    hops[t.edge][t.src].push_back(std::abs(t.src / 8 - t.dst / 8) +
                                  std::abs(t.src % 8 - t.dst % 8));
  std::map<std::string, bool> nearest;
  for (const auto& [edge, sources] : hops) {
    EXPECT_EQ(sources.size(), 64u) << edge;
    nearest[edge] = std::all_of(sources.begin(), sources.end(), [](const auto& s) {
      return s.second.size() == 63 && std::is_sorted(s.second.begin(), s.second.end());
    });
  }
  EXPECT_EQ(
      nearest,
      (std::map<std::string, bool>{
          {"a->b", true}, {"b->c", true}, {"c->d", false}, {"d->e", false}, {"e->f", false}}));
}

TEST(SimulateCli, BarrierPhasesTakeExactlyTheirCyclesAlone) {
  // Barrier replay: each edge's sends, taken from the dumped programs by their edge= tag and
  // replayed alone by `traffic --messages`, take exactly the cycles transfers.csv gives the
  // edge, however many phases ran before it (arbitration starts afresh at each barrier).
  const fs::path dir = fresh_dir("simulate_phases");
  const CliRun sim = run_nocflow("simulate --hw " + kSrc +
                                 "/configs/hw/mesh4x4.yaml --network zoo:resnet18 "
                                 "--cost-model linkload --mode barrier --quiet --dump-programs " +
                                 (dir / "programs").string() + " --out " + (dir / "sim").string());
  ASSERT_EQ(sim.exit_code, 0) << sim.output;
  std::map<std::string, std::string> messages;  // edge -> "src dst bytes" lines
  for (const DumpedSend& t : dumped_sends(dir / "programs", 16))
    if (!t.edge.empty())
      messages[t.edge] += std::to_string(t.src) + " " + std::to_string(t.dst) + " " +
                          std::to_string(t.bytes) + "\n";
  int compared = 0, reductions = 0;
  std::int64_t transfer_cycles = 0;  // of the edges, reductions aside
  for (const auto& row : read_csv_rows(dir / "sim" / "transfers.csv")) {
    const bool reduction = row.at("src") == row.at("dst");
    if (!reduction) transfer_cycles += std::stoll(row.at("simulated_cycles"));
    const std::string edge = row.at("src") + (reduction ? ":inpp" : "->" + row.at("dst"));
    EXPECT_EQ(row.at("senders_skew_cycles"), "0") << edge;  // every sender starts at the barrier
    if (!messages.count(edge)) {
      EXPECT_EQ(row.at("simulated_cycles"), "0") << edge;  // moves nothing
      continue;
    }
    if (reduction) {  // ring rounds wait for each other: not one batch; linkload prices the ring
      const double predicted = std::stod(row.at("predicted_linkload_cycles"));
      const double simulated = std::stod(row.at("simulated_cycles"));
      EXPECT_NEAR(predicted, simulated, 0.05 * simulated) << edge;
      ++reductions;
      continue;
    }
    std::ofstream(dir / "batch.txt") << messages.at(edge);
    const CliRun batch = run_nocflow(
        "traffic --hw " + (dir / "sim" / "config.resolved.yaml").string() + " --messages " +
        (dir / "batch.txt").string() + " --quiet --out " + (dir / "batch").string());
    ASSERT_EQ(batch.exit_code, 0) << edge << "\n" << batch.output;
    const auto summary = nlohmann::json::parse(read_file(dir / "batch" / "summary.json"));
    EXPECT_EQ(std::to_string(summary.at("cycles").get<std::int64_t>()), row.at("simulated_cycles"))
        << edge;
    ++compared;
  }
  EXPECT_GE(compared, 15);
  EXPECT_GE(reductions, 1);
  // The run's critical path: each layer's compute phase (all its PEs alike: the busy cycles of
  // layers.csv's critical PE), and every edge's and reduction's phase, alone between barriers.
  std::int64_t busy = 0;
  for (const auto& row : read_csv_rows(dir / "sim" / "layers.csv"))
    busy += std::stoll(row.at("compute_cycles"));
  const auto s = nlohmann::json::parse(read_file(dir / "sim" / "summary.json"));
  const auto compute = s.at("compute_cycles").get<std::int64_t>();
  const auto communication = s.at("communication_cycles").get<std::int64_t>();
  EXPECT_EQ(compute, busy);
  EXPECT_EQ(compute + communication, s.at("total_cycles").get<std::int64_t>());
  EXPECT_GT(communication, transfer_cycles);  // and the reductions' messages
}

}  // namespace
}  // namespace nocflow::testing
