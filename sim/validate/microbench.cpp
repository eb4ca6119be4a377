// SPDX-License-Identifier: MIT
#include "sim/validate/microbench.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "noc/base/error.h"
#include "optimizer/cost/cost_model.h"
#include "optimizer/cost/linkload_model.h"
#include "optimizer/cost/paper_model.h"
#include "optimizer/frontend/load_network.h"
#include "optimizer/partition/choice.h"
#include "optimizer/partition/placement.h"
#include "optimizer/partition/transfers.h"
#include "sim/lower/lowering.h"
#include "sim/lower/workload_setup.h"
#include "sim/output/run_report.h"
#include "sim/run/child_process.h"
#include "sim/system/system.h"

namespace nocflow::sim {
namespace {

namespace opt = optimizer;
namespace fs = std::filesystem;

/// C x H x W with 2-byte elements and C*H*W*2 == bytes: H = W as large as the mesh's side
/// allows divisibility (a power of two), C the rest.
std::array<std::int64_t, 3> tensor_shape(std::int64_t bytes, int pes) {
  const std::int64_t elements = bytes / 2;
  std::int64_t side = 1;
  while (side * side * 4 <= elements && side < 64 && side < 4 * pes) side *= 2;
  return {elements / (side * side), side, side};
}

opt::Graph bench_graph(const std::array<std::int64_t, 3>& s, bool halo) {
  const fs::path file = fs::temp_directory_path() /
                        ("nocflow_bench_" + std::to_string(::getpid()) + ".yaml");
  {
    std::ofstream y(file);
    y << "name: bench\nelem_bytes: 2\ninput: [1, " << s[0] << ", " << s[1] << ", " << s[2] << "]\n"
      << "layers:\n  - {name: producer, op: conv, out: " << s[0] << ", kernel: 1}\n"
      << "  - {name: consumer, op: conv, out: " << s[0] << ", kernel: " << (halo ? 3 : 1)
      << ", pad: " << (halo ? 1 : 0) << "}\n";
  }
  opt::Graph g = opt::load_network(file.string());
  fs::remove(file);
  return g;
}

/// The pair to benchmark for a type (see the header): among the pairs the paper model calls
/// `type` that split the fewest dimensions, the one whose exact transfers move the most bytes
/// (for NONE the fewest; ties: enumeration order). Pairs using every PE first; then any (LOCAL needs choices that
/// differ only in INPP or BATCH, impossible at batch 1 with equal node counts).
std::optional<std::pair<opt::Choice, opt::Choice>> pick_pair(const opt::Workload& w, const std::string& type,
                                                             const opt::PeGrid& grid) {
  auto splits = [](const opt::Choice& c) {
    return static_cast<int>(std::count_if(c.f.begin(), c.f.end(), [](int f) { return f > 1; }));
  };
  for (bool exact : {true, false}) {
    const opt::ChoiceOptions options{grid.num_pes(), exact};
    std::vector<std::pair<opt::Choice, opt::Choice>> simplest;
    int fewest = 1 << 30;
    for (const opt::Choice& ci : opt::enumerate_choices(w.layers[0], options))
      for (const opt::Choice& cj : opt::enumerate_choices(w.layers[1], options)) {
        const bool match = type == "HALO" ? ci == cj && splits(ci) == 1 && ci.nodes() > 1 &&
                                                (ci.factor(opt::PartDim::OfmpH) > 1 || ci.factor(opt::PartDim::OfmpW) > 1)
                                          : opt::to_string(opt::redist_type(w.layers[0], ci, w.layers[1], cj)) == type;
        if (!match) continue;
        const int n = splits(ci) + splits(cj);
        if (n < fewest) simplest.clear(), fewest = n;
        if (n == fewest) simplest.push_back({ci, cj});
      }
    std::optional<std::pair<opt::Choice, opt::Choice>> best;
    std::int64_t most = 0;
    for (const auto& [ci, cj] : simplest) {
      const opt::PlacedLayer a{&w.layers[0], ci, opt::place(ci, grid)}, b{&w.layers[1], cj, opt::place(cj, grid)};
      const std::int64_t bytes = opt::total_bytes(opt::edge_transfers(w, w.edges[0], a, b, grid)) +
                                 (type == "ALL_REDUCE" ? opt::total_bytes(opt::reduction_transfers(a)) : 0);
      // NONE: the pair that really moves nothing (OUTP f -> OUTP f is also NONE to the seed but
      // is an all-gather; tests/optimizer/transfers_test.cpp documents that case).
      const std::int64_t score = type == "NONE" ? -bytes : bytes;
      if (score > most || !best) most = score, best = std::pair{ci, cj};
    }
    if (best) return best;
  }
  return std::nullopt;
}

std::string topology_name(const HwSpec& hw) {
  return hw.topology.kind == "crossbar" ? "crossbar " + std::to_string(hw.topology.ports)
                                        : "mesh " + std::to_string(hw.topology.rows) + "x" +
                                              std::to_string(hw.topology.cols);
}

}  // namespace

const std::vector<std::string>& bench_types() {
  static const std::vector<std::string> types = {"NONE", "LOCAL", "ALL_GATHER", "SCATTER",
                                                 "ALL_TO_ALL", "ALL_REDUCE", "HALO"};
  return types;
}

BenchResult run_bench(const HwSpec& hw, const BenchCase& bench) {
  BenchResult r;
  r.bench = bench;
  r.bench.topology = topology_name(hw);
  const int pes = hw.topology.num_nodes();
  const opt::Graph graph = bench_graph(tensor_shape(bench.tensor_bytes, pes), bench.type == "HALO");
  const opt::Workload w = opt::build_workload(graph);
  const auto pair = pick_pair(w, bench.type, hw_desc_of(hw).grid());
  if (!pair) return r;
  r.run = true;
  r.producer = pair->first.str();
  r.consumer = pair->second.str();

  // Both models on this edge; ALL_REDUCE is the producer's own reduction in the exact models.
  const opt::HwDesc desc = hw_desc_of(hw);
  const auto paper = opt::make_cost_model("paper", desc);
  const auto linkload = opt::make_cost_model("linkload", desc);
  r.paper_cycles = paper->edge_cost(w, w.edges[0], pair->first, pair->second).cycles;
  r.linkload_cycles = linkload->edge_cost(w, w.edges[0], pair->first, pair->second).cycles;

  opt::Plan plan;
  plan.network = "bench";
  plan.pes = pes;
  plan.topology = r.bench.topology;
  const opt::PeGrid grid = desc.grid();
  for (int l = 0; l < 2; ++l) {
    opt::PlanLayer pl;
    pl.name = w.layers[l].name;
    pl.op = w.layers[l].op;
    pl.choice = l == 0 ? pair->first : pair->second;
    pl.pes = opt::place(pl.choice, grid).pe;
    plan.layers.push_back(pl);
  }
  HwSpec big = hw;
  big.pe.sram_bytes = std::max<std::int64_t>(hw.pe.sram_bytes, std::int64_t{1} << 40);  // data fit is not the question
  const Lowered low = lower_plan(w, plan, big, ExecMode::Barrier);
  // The redistribution to measure: the edge, plus the producer's reduction for ALL_REDUCE.
  std::vector<int> measured = {0};
  for (std::size_t e = 1; e < low.edges.size(); ++e)
    if (low.edges[e].reduction && bench.type == "ALL_REDUCE") measured = {static_cast<int>(e)};
  for (int e : measured) r.bytes_moved += low.edges[e].bytes;
  if (bench.type == "ALL_REDUCE")  // linkload counts a layer's INPP reduction in its layer cost
    r.linkload_cycles = opt::LinkloadModel(desc).reduction_cost(w.layers[0], pair->first).cycles;

  const std::string out = run_in_child([&] {
    System sys("system", big, low.programs);
    const RunResult run = sys.run();
    noc::Cycle first = noc::kNever, last = 0;
    for (const Span& s : run.spans)
      if (std::find(measured.begin(), measured.end(), s.edge) != measured.end()) {
        first = std::min(first, s.start);
        last = std::max(last, s.end);
      }
    const noc::Cycle cycles = first == noc::kNever ? 0 : last - first;
    std::int64_t busiest = 0;
    for (const auto& l : run.links) busiest = std::max(busiest, l.flits);
    std::ostringstream o;
    o << cycles << " " << (cycles > 0 ? static_cast<double>(busiest) / static_cast<double>(cycles) : 0.0);
    return o.str();
  });
  std::istringstream in(out);
  in >> r.simulated_cycles >> r.max_link_utilisation;
  return r;
}

}  // namespace nocflow::sim
