// SPDX-License-Identifier: MIT
// `nocflow simulate` end to end: outputs, determinism, summary against trace, replay modes
// (pipelines and training graphs: simulate_pipeline_cli_test.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <tuple>
#include <vector>

#include "tests/cli_runner.h"
#include "tests/sim/small_runs.h"
#include "tests/sim/trace_counters.h"

namespace nocflow::testing {
namespace {

namespace fs = std::filesystem;


/// summary.json without its wall-clock fields, the only ones allowed to vary run to run.
std::string summary_without_timing(const fs::path& dir) {
  return json_without(dir / "summary.json", {"wall_seconds", "flits_per_second"});
}

TEST(SimulateCli, SameInputsGiveByteIdenticalOutputsAndTheTraceAgreesWithTheSummary) {
  const fs::path dir = fresh_dir("simulate_det");
  const std::string args = "simulate --hw " + kSrc + "/configs/hw/mesh4x4.yaml --network zoo:vgg5 "
                           "--mode barrier --trace perfetto --vcd --quiet --out ";
  for (const char* run : {"a", "b"}) {
    const CliRun r = run_nocflow(args + (dir / run).string());
    ASSERT_EQ(r.exit_code, 0) << r.output;
  }
  for (const char* file : {"layers.csv", "transfers.csv", "links.csv", "memory.csv", "plan.yaml",
                           "plan.dot", "trace.json", "trace.vcd", "config.resolved.yaml"})
    EXPECT_EQ(read_file(dir / "a" / file), read_file(dir / "b" / file)) << file;
  EXPECT_EQ(summary_without_timing(dir / "a"), summary_without_timing(dir / "b"));
  const nlohmann::json s = nlohmann::json::parse(read_file(dir / "a" / "summary.json"));
  // The summary's memory plan is memory.csv's highest PE: its largest offset + bytes.
  {
    const auto rows = read_csv_rows(dir / "a" / "memory.csv");
    ASSERT_FALSE(rows.empty());
    std::map<int, std::int64_t> peak;  // per PE
    for (const auto& row : rows) {
      auto& p = peak[std::stoi(row.at("pe"))];
      p = std::max<std::int64_t>(p,
                                 std::stoll(row.at("offset_bytes")) + std::stoll(row.at("bytes")));
    }
    EXPECT_EQ(peak.size(), 16u);
    const auto top = std::max_element(peak.begin(), peak.end(),
                                      [](auto& x, auto& y) { return x.second < y.second; });
    EXPECT_EQ(s["memory_plan"]["peak_bytes"].get<std::int64_t>(), top->second);
    EXPECT_EQ(s["memory_plan"]["pe"].get<int>(), top->first);
    EXPECT_LE(s["memory_plan"]["live_peak_bytes"].get<std::int64_t>(), top->second);
  }
  // Counts in the summary agree with the trace: one span event per step, and the link
  // counters add up to the flits' link traversals (injection links plus router outputs).
  const auto trace = nlohmann::json::parse(read_file(dir / "a" / "trace.json"));
  std::int64_t spans = 0, link_flits = 0, injected = 0;
  std::map<int, int> barriers, sort_index;          // per PE: its barrier spans, its sort index
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == "X") ++spans;
    // A barrier belongs to no layer: it is named by its number on its PE ("barrier 3"; it was
    // "barrier" with layer "", 960 alike on resnet18), and the PEs sort by number.
    if (e["ph"] == "X" && e["cat"] == "barrier") {
      const int k = ++barriers[e["tid"].get<int>()];
      EXPECT_EQ(e["name"], "barrier " + std::to_string(k)) << e.dump();
      EXPECT_EQ(e["args"]["barrier"], k) << e.dump();
    }
    if (e["name"] == "thread_sort_index")
      sort_index[e["tid"].get<int>()] = e["args"]["sort_index"].get<int>();
  }
  // A counter keeps its last sample: every link's track returns to 0 once the link goes idle,
  // and is sampled where its count changes only.
  const CounterTracks counters = read_counters(trace, 1000, 1000);  // 1 GHz, 1000-cycle windows
  EXPECT_FALSE(counters.last.empty());
  for (const auto& [link, flits] : counters.last) EXPECT_EQ(flits, 0) << link;
  EXPECT_EQ(counters.repeats, 0);
  for (const auto& [link, flits] : counters.flits) link_flits += flits;
  EXPECT_EQ(barriers.size(), 16u);
  EXPECT_GT(barriers.begin()->second, 1);
  for (const auto& [pe, count] : barriers) EXPECT_EQ(count, barriers.begin()->second) << pe;
  EXPECT_EQ(sort_index.size(), 16u);
  for (const auto& [pe, index] : sort_index) EXPECT_EQ(index, pe);
  EXPECT_EQ(spans, s["steps"].get<std::int64_t>());
  for (const auto& row : read_csv_rows(dir / "a" / "links.csv"))
    if (row.at("from").rfind("node", 0) == 0) injected += std::stoll(row.at("flits"));
  EXPECT_EQ(injected, s["flits"].get<std::int64_t>());
  // Every flit crosses its injection and ejection channels, and flit_hops router-to-router links.
  EXPECT_EQ(link_flits, 2 * s["flits"].get<std::int64_t>() + s["flit_hops"].get<std::int64_t>());
}

// The main workflow: `optimize` writes plan.yaml, `simulate --plan` replays it. The plan file
// carries every choice and the prediction: the replay is the one of simulate's own solve with
// the same solver and cost model, and its predicted total is optimize's. linkload's energy is
// the simulator's (MACs, SRAM bytes, whole flits per hop), on a mesh and on a crossbar.
TEST(SimulateCli, AnOptimizedPlanReplaysAsSimulatesOwnSolve) {
  const fs::path dir = fresh_dir("simulate_plan");
  const std::string hw = "--hw " + kSrc + "/configs/hw/mesh4x4.yaml --network zoo:vgg5 ";
  const CliRun opt = run_nocflow("optimize " + hw + "--cost-model linkload --memory-limit --out " +
                                 (dir / "opt").string());
  ASSERT_EQ(opt.exit_code, 0) << opt.output;
  const CliRun plan =
      run_nocflow("simulate " + hw + "--plan " + (dir / "opt" / "plan.yaml").string() +
                  " --quiet --out " + (dir / "plan").string());
  ASSERT_EQ(plan.exit_code, 0) << plan.output;
  const CliRun own = run_nocflow("simulate " + hw + "--cost-model linkload --quiet --out " +
                                 (dir / "own").string());
  ASSERT_EQ(own.exit_code, 0) << own.output;
  for (const char* file : {"layers.csv", "transfers.csv", "links.csv"})
    EXPECT_EQ(read_file(dir / "plan" / file), read_file(dir / "own" / file)) << file;
  // Each run writes the plan it replayed (drawn as plan.dot): simulate's own solve is
  // optimize's plan, and a plan read back is written out unchanged.
  for (const char* file : {"plan.yaml", "plan.dot"}) {
    EXPECT_EQ(read_file(dir / "own" / file), read_file(dir / "opt" / file)) << file;
    EXPECT_EQ(read_file(dir / "plan" / file), read_file(dir / "opt" / file)) << file;
  }
  EXPECT_NE(read_file(dir / "opt" / "plan.dot").find("digraph \"vgg5\""), std::string::npos);
  const auto optimized = nlohmann::json::parse(read_file(dir / "opt" / "summary.json"));
  const auto replayed = nlohmann::json::parse(read_file(dir / "plan" / "summary.json"));
  EXPECT_EQ(replayed["predicted_by"], "linkload");
  EXPECT_EQ(replayed["predicted_total_from"], "the plan file");
  EXPECT_DOUBLE_EQ(replayed["predicted_total_cycles"].get<double>(),
                   optimized["total_cost_cycles"].get<double>());
  EXPECT_EQ(replayed["total_cycles"],
            nlohmann::json::parse(read_file(dir / "own" / "summary.json"))["total_cycles"]);
  // Each summary names the build that wrote it, as `nocflow version` prints it.
  const std::string version = run_nocflow("version").output;
  EXPECT_EQ("nocflow " + optimized["nocflow"].get<std::string>() + "\n", version);
  EXPECT_EQ("nocflow " + replayed["nocflow"].get<std::string>() + "\n", version);
  // The plan records what it was priced for: on its own inputs no note, on others a note per
  // difference (the choices still replay).
  EXPECT_EQ(plan.output.find("note: the plan was priced"), std::string::npos) << plan.output;
  const CliRun other = run_nocflow(
      "simulate " + hw + "--batch 2 --set link.width_bytes=16 --plan " +
      (dir / "opt" / "plan.yaml").string() + " --quiet --out " + (dir / "other").string());
  ASSERT_EQ(other.exit_code, 0) << other.output;
  EXPECT_NE(other.output.find("note: the plan was priced for batch 1, this run is batch 2"),
            std::string::npos)
      << other.output;
  EXPECT_NE(
      other.output.find("note: the plan was priced for other hardware (link.width_bytes 32 -> "
                        "16): its predicted total does not apply"),
      std::string::npos)
      << other.output;
  // Keys the predicted cycles do not read (energy costs, the SRAM size) leave the total applying.
  const CliRun costs = run_nocflow("simulate " + hw + "--set energy.mac_pj=1 --set pe.sram_bytes=2MiB --plan " +
                                    (dir / "opt" / "plan.yaml").string() + " --quiet --out " +
                                   (dir / "costs").string());
  ASSERT_EQ(costs.exit_code, 0) << costs.output;
  EXPECT_EQ(costs.output.find("does not apply"), std::string::npos) << costs.output;
  // A plan file whose choices were edited since it was priced: the choices replay, the total no
  // longer applies (its choices_digest says so); an unedited one is not flagged.
  EXPECT_TRUE(replayed["predicted_total_does_not_apply"].empty());
  std::string text = read_file(dir / "opt" / "plan.yaml");
  const auto at = text.find("choice: ", text.find("name: conv2"));
  ASSERT_NE(at, std::string::npos);
  text.replace(at, text.find('\n', at) - at, "choice: INPP=16");
  std::ofstream(dir / "edited.yaml") << text;
  const CliRun edited = run_nocflow("simulate " + hw + "--quiet --plan " + (dir / "edited.yaml").string() +
                                    " --out " + (dir / "edited").string());
  ASSERT_EQ(edited.exit_code, 0) << edited.output;
  EXPECT_NE(edited.output.find("note: the plan's choices, PEs or stages differ from those it was "
                               "priced with"),
            std::string::npos)
      << edited.output;
  const auto e = nlohmann::json::parse(read_file(dir / "edited" / "summary.json"));
  EXPECT_EQ(e["predicted_total_does_not_apply"], nlohmann::json::array({"choices"}));
  EXPECT_NE(e["total_cycles"], replayed["total_cycles"]);
  // Its cost figures: a layer's compute cycles or an edge's cycles. The choices replay as
  // before; the total, made of those figures, no longer applies (its costs_digest says so).
  // (bytes, an edge's type and the energy too; and a layer's compute cycles in their 8th digit,
  // which the plan file writes).
  const std::vector<std::tuple<std::string, std::string, std::string>> edits{
      {"name: conv2", "compute_cycles: ", "7"},
      {"{src: ", "cycles: ", "7"},
      {"{src: ", "bytes: ", "7"},
      {"{src: ", "type: ", "ALL_TO_ALL"},
      {"totals:", "energy_pj: ", "7"},
      {"name: conv2", "compute_cycles: ", ""}};
  for (const auto& [anchor, key, value] : edits) {
    std::string costs = read_file(dir / "opt" / "plan.yaml");
    const std::size_t c = costs.find(key, costs.find(anchor)) + key.size();
    const std::size_t end = costs.find_first_of(",}\n", c);
    const std::string was = costs.substr(c, end - c);
    costs.replace(c, end - c, value.empty() ? was + ".0001" : value == was ? "NONE" : value);
    std::ofstream(dir / "costs.yaml") << costs;
    const CliRun cost =
        run_nocflow("simulate " + hw + "--quiet --plan " + (dir / "costs.yaml").string() +
                    " --out " + (dir / "costs_edited").string());
    ASSERT_EQ(cost.exit_code, 0) << key << value << cost.output;
    const auto ce = nlohmann::json::parse(read_file(dir / "costs_edited" / "summary.json"));
    EXPECT_EQ(ce["predicted_total_does_not_apply"], nlohmann::json::array({"costs"}))
        << key << value;
    EXPECT_EQ(ce["total_cycles"], replayed["total_cycles"]) << key << value;
  }
  // Keys the cost models do not read (the clock: predictions are in cycles; the allocators)
  // leave the prediction standing; keys they read (the SRAM port, the array shape) do not.
  const std::string replay =
      "simulate " + hw + "--quiet --plan " + (dir / "opt" / "plan.yaml").string();
  const CliRun clock =
      run_nocflow(replay + " --set clock.frequency_ghz=2 --set router.alloc_iterations=2 --out " +
                  (dir / "clock").string());
  ASSERT_EQ(clock.exit_code, 0) << clock.output;
  EXPECT_EQ(clock.output.find("note:"), std::string::npos) << clock.output;
  const CliRun pe = run_nocflow(
      replay +
      " --set pe.sram_bytes_per_cycle=8 --set pe.array_rows=32 --set pe.array_cols=8 --out " +
      (dir / "pe").string());
  ASSERT_EQ(pe.exit_code, 0) << pe.output;
  EXPECT_NE(pe.output.find(
                "(pe.sram_bytes_per_cycle 64 -> 8, pe.array_rows 16 -> 32, pe.array_cols 16 -> 8)"),
            std::string::npos)
      << pe.output;
  const double energy = optimized["energy_pj"].get<double>();
  EXPECT_NEAR(replayed["energy_pj"]["total"].get<double>(), energy, 1e-9 * energy);
  EXPECT_GT(replayed["energy_pj"]["noc"].get<double>(), 0);
  const std::string xbar = "--hw " + kSrc + "/configs/hw/crossbar16.yaml --network zoo:resnet18 ";
  ASSERT_EQ(
      run_nocflow("optimize " + xbar + "--cost-model linkload --out " + (dir / "xopt").string())
          .exit_code,
      0);
  const CliRun x =
      run_nocflow("simulate " + xbar + "--plan " + (dir / "xopt" / "plan.yaml").string() +
                  " --quiet --out " + (dir / "xsim").string());
  ASSERT_EQ(x.exit_code, 0) << x.output;
  const double xenergy =
      nlohmann::json::parse(read_file(dir / "xopt" / "summary.json"))["energy_pj"].get<double>();
  const auto xsim = nlohmann::json::parse(read_file(dir / "xsim" / "summary.json"))["energy_pj"];
  EXPECT_NEAR(xsim["total"].get<double>(), xenergy, 1e-9 * xenergy);
  EXPECT_GT(xsim["noc"].get<double>(), 0);
}

/// Rows of transfers.csv as (src -> dst, predicted paper, predicted linkload, bytes).
std::vector<std::tuple<std::string, double, double, std::int64_t>> predictions(const fs::path& csv) {
  std::vector<std::tuple<std::string, double, double, std::int64_t>> out;
  for (const auto& row : read_csv_rows(csv)) {
    const std::string& paper = row.at("predicted_paper_cycles");
    const std::string& linkload = row.at("predicted_linkload_cycles");
    if (paper.empty()) continue;
    for (const std::string& cycles : {paper, linkload})  // to 0.01 cycle, not 17 digits
      EXPECT_LE(cycles.find('.') == std::string::npos ? 0 : cycles.size() - cycles.find('.') - 1,
                2u)
          << cycles;
    out.emplace_back(row.at("src") + " -> " + row.at("dst"), std::stod(paper),
                     linkload.empty() ? -1 : std::stod(linkload), std::stoll(row.at("bytes")));
  }
  return out;
}

TEST(SimulateCli, SwinsWindowTensorsSplitBeyondQkvItsReplayMeetsThePredictionAndSaysWhetherItFits) {
  // swin_tiny's windows' q, k, v ([3, 4, 1, 49, 16] in its first stage) are 5-D: their view
  // takes the leading axes as N (box.h, view4), so they split over heads, tokens and features
  // too (not only BATCH over q, k and v: 3 PEs), and the network runs in 32 KiB per PE.
  const fs::path dir = fresh_dir("simulate_swin");
  const CliRun r = run_nocflow("simulate --hw " + kSrc + "/configs/hw/mesh4x4.yaml --network " +
                               kSrc + "/tests/optimizer/data/swin_tiny.onnx "
                               "--set pe.sram_bytes=32768 --quiet --out " + dir.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  int windows = 0;
  for (const auto& row : read_csv_rows(dir / "layers.csv"))
    if (row.at("layer").find("attn/Transpose_2") != std::string::npos) {
      EXPECT_GE(std::stoi(row.at("pes")), 14) << row.at("layer") << " " << row.at("choice");
      ++windows;
    }
  EXPECT_EQ(windows, 4);  // one per block: two stages of two
  const auto s = nlohmann::json::parse(read_file(dir / "summary.json"));
  EXPECT_LE(s.at("memory_plan").at("peak_bytes").get<std::int64_t>(), 32768);
  EXPECT_TRUE(s.at("memory_plan").at("fits_sram").get<bool>());
  EXPECT_EQ(s.at("memory_in_use").at("fits_sram").get<bool>(),
            s.at("memory_in_use").at("peak_bytes").get<std::int64_t>() <= 32768);
  const double simulated = s.at("total_cycles").get<double>();
  EXPECT_NEAR(s.at("predicted_total_cycles").get<double>(), simulated, 0.05 * simulated);
  // At 16 KiB every layer fits alone, but not the data live across layers: the run goes on,
  // says so, and its summary marks it.
  const CliRun small = run_nocflow("simulate --hw " + kSrc + "/configs/hw/mesh4x4.yaml --network " +
                                   kSrc + "/tests/optimizer/data/swin_tiny.onnx "
                                   "--set pe.sram_bytes=16384 --out " + (dir / "small").string());
  ASSERT_EQ(small.exit_code, 0) << small.output;
  EXPECT_NE(small.output.find("more than a PE's SRAM (pe.sram_bytes 16384): data of several layers "
                              "is live at once; the cycles assume it fits"),
            std::string::npos)
      << small.output;
  const auto t = nlohmann::json::parse(read_file(dir / "small" / "summary.json"));
  EXPECT_GT(t.at("memory_plan").at("peak_bytes").get<std::int64_t>(), 16384);
  EXPECT_FALSE(t.at("memory_plan").at("fits_sram").get<bool>());
}

// A 1x1 mesh is the one-PE baseline: every layer runs whole on PE 0, nothing crosses the
// network, and the run is its layers' compute one after another, as linkload predicts.
TEST(SimulateCli, AOnePeMeshRunsEveryLayerWholeAndMovesNothing) {
  const fs::path dir = fresh_dir("simulate_one_pe");
  const CliRun r = run_nocflow("simulate --hw " + kSrc + "/configs/hw/mesh4x4.yaml --set topology.rows=1 "
                               "--set topology.cols=1 --set pe.sram_bytes=64MiB --network zoo:vgg5 --quiet --out " +
                               dir.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("on mesh 1x1 (1 PE)"), std::string::npos) << r.output;
  // No table of zeros (it listed "the 6 longest" at 0 bytes, 0 cycles).
  EXPECT_NE(
      r.output.find("transfers        6 edges move nothing: every layer's input is where it runs"),
      std::string::npos)
      << r.output;
  const auto s = nlohmann::json::parse(read_file(dir / "summary.json"));
  EXPECT_EQ(s["messages"].get<long long>(), 0);
  EXPECT_EQ(s["energy_pj"]["noc"].get<double>(), 0);
  const long long total = s["total_cycles"].get<long long>();
  EXPECT_EQ(s["compute_cycles"].get<long long>(), total);
  EXPECT_DOUBLE_EQ(s["predicted_total_cycles"].get<double>(), static_cast<double>(total));
  long long compute = 0;
  for (const auto& row : read_csv_rows(dir / "layers.csv")) {
    EXPECT_EQ(row.at("pes"), "1") << row.at("layer");
    EXPECT_EQ(row.at("choice"), "SINGLE") << row.at("layer");  // no factor: the whole layer
    compute += std::stoll(row.at("compute_cycles"));
  }
  EXPECT_EQ(compute, total);
}

TEST(SimulateCli, CalibrationSetsThePredictionsOfTheTransferTable) {
  // The paper model's T = V h / B_NoC + latency: two calibrations with the same B_NoC differ
  // by the latency on every edge the paper model moves bytes on (T > 0 without latency), and
  // by nothing on the others.
  const fs::path dir = fresh_dir("simulate_cal");
  std::ofstream(dir / "lat0.yaml") << "paper:\n  bnoc_bytes_per_cycle: 64\n  latency_cycles: 0\n";
  std::ofstream(dir / "lat40.yaml") << "paper:\n  bnoc_bytes_per_cycle: 64\n  latency_cycles: 40\n";
  std::ofstream(dir / "contention.yaml") << "paper:\n  bnoc_bytes_per_cycle: 64\n  latency_cycles: 0\n"
                                            "linkload:\n  router_contention: {\"mesh 4x4\": 3}\n";
  const std::string args = "simulate --hw " + kSrc + "/configs/hw/mesh4x4.yaml --network zoo:vgg5 --mode barrier --quiet";
  for (const char* cal : {"lat0", "lat40", "contention"}) {
    const CliRun r = run_nocflow(args + " --calibration " + (dir / (std::string(cal) + ".yaml")).string() +
                                 " --out " + (dir / cal).string());
    ASSERT_EQ(r.exit_code, 0) << r.output;
  }
  const auto a = predictions(dir / "lat0" / "transfers.csv"), b = predictions(dir / "lat40" / "transfers.csv");
  ASSERT_EQ(a.size(), b.size());
  int moving = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const auto& [edge, paper0, linkload0, bytes] = a[i];
    EXPECT_EQ(edge, std::get<0>(b[i]));
    EXPECT_NEAR(std::get<1>(b[i]) - paper0, paper0 > 0 ? 40 : 0, 0.011) << edge;  // printed to 0.01
    EXPECT_EQ(std::get<2>(b[i]), linkload0) << edge;  // no linkload section: linkload as it was
    moving += paper0 > 0 && bytes > 0;
  }
  EXPECT_GT(moving, 0);
  // A linkload section changes linkload's column (router-bound edges), not paper's.
  const auto c = predictions(dir / "contention" / "transfers.csv");
  ASSERT_EQ(c.size(), a.size());
  int changed = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(std::get<1>(c[i]), std::get<1>(a[i])) << std::get<0>(a[i]);
    changed += std::get<2>(c[i]) != std::get<2>(a[i]);
  }
  EXPECT_GT(changed, 0);
  EXPECT_NE(read_file(dir / "contention" / "summary.json").find("contention.yaml"), std::string::npos);
  const CliRun bad = run_nocflow(args + " --calibration " + (dir / "missing.yaml").string() + " --out " + (dir / "c").string());
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  // A linkload section without this machine: refused before the run (the transfer table prices
  // every edge with linkload), also when the plan comes from a file.
  std::ofstream(dir / "other.yaml") << "paper:\n  bnoc_bytes_per_cycle: 64\n  latency_cycles: 0\n"
                                       "linkload:\n  router_contention: {\"mesh 8x8\": 3}\n";
  for (const std::string& plan : {std::string(), " --plan " + (dir / "lat0" / "plan.yaml").string()}) {
    const CliRun other = run_nocflow(args + plan + " --calibration " + (dir / "other.yaml").string() +
                                     " --out " + (dir / "o").string());
    EXPECT_EQ(other.exit_code, 2) << other.output;
    EXPECT_NE(other.output.find("no entry for 'mesh 4x4' (it has: mesh 8x8)"), std::string::npos)
        << other.output;
    EXPECT_EQ(other.output.find("total "), std::string::npos) << other.output;  // nothing ran
  }
}

// The transfer table marks the edges the seed's Type function calls NONE or LOCAL whose exact
// transfers move bytes between PEs (vgg5 on 4x4: the halos of its 2-D spatial splits), and only
// those, and explains the mark once.
TEST(SimulateCli, TheTransferTableMarksEdgesTheSeedCallsFreeThatMoveBytes) {
  const fs::path dir = fresh_dir("simulate_marks");
  const CliRun r = run_nocflow("simulate --hw " + kSrc + "/configs/hw/mesh4x4.yaml --network zoo:vgg5 --out " +
                               (dir / "o").string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::map<std::string, std::string> shown;  // "src -> dst" -> printed type
  int stars = 0;                             // in the table's rows and its footnote
  std::istringstream out(r.output);
  for (std::string line; std::getline(out, line);) {
    std::istringstream words(line);
    std::string src, arrow, dst, type;
    if (words >> src >> arrow >> dst >> type && arrow == "->") {
      shown[src + " -> " + dst] = type;
      stars += static_cast<int>(std::count(line.begin(), line.end(), '*'));
    }
    if (line.rfind("    * the seed's Type function", 0) == 0) ++stars;
  }
  int marked = 0;
  for (const auto& row : read_csv_rows(dir / "o" / "transfers.csv")) {
    const std::string edge = row.at("src") + " -> " + row.at("dst");
    if (!shown.count(edge)) continue;
    const bool free = row.at("type") == "NONE" || row.at("type") == "LOCAL";
    const bool moves = std::stoll(row.at("bytes")) > 0;
    EXPECT_EQ(shown[edge], row.at("type") + (free && moves ? "*" : "")) << edge;
    marked += free && moves;
  }
  EXPECT_GE(marked, 2);
  EXPECT_EQ(stars, marked + 1) << r.output;  // one per marked row, one footnote
}

}  // namespace
}  // namespace nocflow::testing
