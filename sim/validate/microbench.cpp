// SPDX-License-Identifier: MIT
#include "sim/validate/microbench.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <map>
#include <optional>
#include <sstream>
#include <tuple>
#include <unordered_set>

#include "noc/base/error.h"
#include "noc/topology/topology.h"
#include "optimizer/cost/cost_model.h"
#include "optimizer/cost/linkload_model.h"
#include "optimizer/cost/paper_model.h"
#include "optimizer/cost/round_robin_fluid.h"
#include "optimizer/frontend/load_network.h"
#include "optimizer/partition/choice.h"
#include "optimizer/partition/placement.h"
#include "optimizer/partition/transfers.h"
#include "sim/lower/lowering.h"
#include "sim/lower/workload_setup.h"
#include "sim/output/output_file.h"
#include "sim/output/run_report.h"
#include "sim/run/child_process.h"
#include "sim/system/system.h"

namespace nocflow::sim {
namespace {

/// The side of a tensor of `bytes` on `pes` PEs: the largest power of two, at most 64 and
/// 4 x PEs, whose square a quarter of its elements fill.
std::int64_t tensor_side(std::int64_t bytes, int pes) {
  const std::int64_t elements = bytes / 2;
  std::int64_t side = 1;
  while (side * side * 4 <= elements && side < 64 && side < 4 * pes) side *= 2;
  return side;
}

bool whole_channels(std::int64_t bytes, int pes) {
  const std::int64_t side = tensor_side(bytes, pes);
  return bytes % (2 * side * side) == 0;
}

}  // namespace

std::array<std::int64_t, 3> tensor_shape(std::int64_t bytes, int pes) {
  const std::int64_t side = tensor_side(bytes, pes);
  if (!whole_channels(bytes, pes)) {  // it ran a smaller tensor under this size's name
    // The side grows with the size, so a multiple of this one's 2 side² B may not fit either:
    // name the nearest sizes that do.
    std::int64_t below = bytes - 1, above = bytes + 1;
    while (below > 0 && !whole_channels(below, pes)) --below;
    while (!whole_channels(above, pes)) ++above;
    throw InputError("--sizes: " + std::to_string(bytes) + " B is not C x " + std::to_string(side) +
                     " x " + std::to_string(side) + " elements of 2 bytes, the shape it takes on " +
                     std::to_string(pes) + " PEs (the side grows with the size): the nearest " +
                     "sizes that fit are " + (below > 0 ? std::to_string(below) + " B and " : "") +
                     std::to_string(above) + " B (powers of two always fit)");
  }
  return {bytes / 2 / (side * side), side, side};
}

namespace {

namespace opt = optimizer;
namespace fs = std::filesystem;

opt::Graph bench_graph(const std::array<std::int64_t, 3>& s, bool halo) {
  const fs::path file =
      fs::temp_directory_path() / ("nocflow_bench_" + std::to_string(::getpid()) + ".yaml");
  write_file(file, [&](std::ostream& y) {
    y << "name: bench\nelem_bytes: 2\ninput: [1, " << s[0] << ", " << s[1] << ", " << s[2] << "]\n"
      << "layers:\n  - {name: producer, op: conv, out: " << s[0] << ", kernel: 1}\n"
      << "  - {name: consumer, op: conv, out: " << s[0] << ", kernel: " << (halo ? 3 : 1)
      << ", pad: " << (halo ? 1 : 0) << "}\n";
  });
  opt::Graph g = opt::load_network(file.string());
  fs::remove(file);
  return g;
}

/// The pair to benchmark for a type (see the header): among the pairs the paper model calls
/// `type` that split the fewest dimensions, the one whose exact transfers move the most bytes
/// (for NONE the fewest; GROUP_GATHER: the most PEs, then the squarest, then the most bytes; ties:
/// enumeration order). Pairs using every PE first; then any (LOCAL needs choices that
/// differ only in INPP or BATCH, impossible at batch 1 with equal node counts).
std::optional<std::pair<opt::Choice, opt::Choice>> pick_pair(const opt::Workload& w,
                                                             const std::string& type,
                                                             const opt::PeGrid& grid) {
  auto splits = [](const opt::Choice& c) {
    return static_cast<int>(std::count_if(c.f.begin(), c.f.end(), [](int f) { return f > 1; }));
  };
  // AFTER_REDUCE is ALL_REDUCE's rule among the pairs whose edge after the reduction moves
  // bytes: ALL_REDUCE's own pair, where that edge moves any (the two rows then the two parts of
  // one edge), else the next such pair (INPP over every PE leaves the consumer nothing to fetch:
  // 15 of 35 AFTER_REDUCE cases measured nothing).
  const bool after = type == "AFTER_REDUCE";
  const std::string seed_type = after ? "ALL_REDUCE" : type;
  // The bytes the pair's transfers move: its edge's, and its INPP reduction's for ALL_REDUCE's
  // rule.
  auto moved = [&](const opt::Choice& ci, const opt::Choice& cj, bool reduction) {
    const opt::PlacedLayer a{&w.layers[0], ci, opt::place(ci, grid)},
        b{&w.layers[1], cj, opt::place(cj, grid)};
    return opt::total_bytes(opt::edge_transfers(w, w.edges[0], a, b, grid)) +
           (reduction ? opt::total_bytes(opt::reduction_transfers(a)) : 0);
  };
  for (bool exact : {true, false}) {
    const opt::ChoiceOptions options{grid.num_pes(), exact};
    std::vector<std::pair<opt::Choice, opt::Choice>> simplest;
    int fewest = 1 << 30;
    for (const opt::Choice& ci : opt::enumerate_choices(w.layers[0], options))
      for (const opt::Choice& cj : opt::enumerate_choices(w.layers[1], options)) {
        const bool h = ci.factor(opt::PartDim::OfmpH) > 1, wd = ci.factor(opt::PartDim::OfmpW) > 1;
        const bool k = ci.factor(opt::PartDim::Outp) > 1;
        const bool match =
            type == "HALO"      ? ci == cj && splits(ci) == 1 && ci.nodes() > 1 && (h || wd)
            : type == "HALO_2D" ? ci == cj && splits(ci) == 2 && h && wd
            : type == "GROUP_GATHER"
                ? ci == cj && splits(ci) == 2 && k && h
                : opt::to_string(opt::redist_type(w.layers[0], ci, w.layers[1], cj)) == seed_type;
        if (!match || (after && moved(ci, cj, false) == 0)) continue;
        const int n = splits(ci) + splits(cj);
        if (n < fewest) simplest.clear(), fewest = n;
        if (n == fewest) simplest.push_back({ci, cj});
      }
    std::optional<std::pair<opt::Choice, opt::Choice>> best;
    std::tuple<int, double, std::int64_t>
        most{};  // (GROUP_GATHER: PEs, how near OUTP is to OFMP_H; bytes)
    for (const auto& [ci, cj] : simplest) {
      const std::int64_t bytes = moved(ci, cj, seed_type == "ALL_REDUCE");
      // NONE: the pair that really moves nothing (OUTP f -> OUTP f is also NONE to the seed but
      // is an all-gather; tests/optimizer/transfers_test.cpp documents that case).
      // GROUP_GATHER: the most PEs, then as many groups as PEs per group (16 of 16 on 16x16),
      // as plans split a square machine.
      const bool grouped = type == "GROUP_GATHER";
      const double outp = ci.factor(opt::PartDim::Outp), rows = ci.factor(opt::PartDim::OfmpH);
      const double balance = grouped ? -std::abs(std::log2(outp / rows)) : 0;
      const std::tuple score{grouped ? ci.nodes() : 0, balance, type == "NONE" ? -bytes : bytes};
      if (score > most || !best) most = score, best = std::pair{ci, cj};
    }
    if (best) return best;
  }
  return std::nullopt;
}

/// The lowered programs reduced to the measured redistribution: its sends, receives and adds,
/// and every barrier (computes and other edges go, so that link counters see only this
/// redistribution; in barrier mode it starts right after a barrier either way). With
/// `solo` ≥ 0 only that PE sends (and adds), and only the receives of its messages remain.
ProgramSet measured_programs(const ProgramSet& all, const std::vector<int>& measured, int solo) {
  auto is_measured = [&](int edge) {
    return std::find(measured.begin(), measured.end(), edge) != measured.end();
  };
  std::unordered_set<std::int64_t> sent;  // tags of the kept sends
  for (std::size_t pe = 0; pe < all.pe.size(); ++pe)
    for (const Step& s : all.pe[pe])
      if (s.kind == StepKind::Send && is_measured(s.edge) &&
          (solo < 0 || static_cast<int>(pe) == solo))
        sent.insert(s.tag);
  ProgramSet out(static_cast<int>(all.pe.size()));
  out.layer_names = all.layer_names;
  out.next_tag = all.next_tag;
  for (std::size_t pe = 0; pe < all.pe.size(); ++pe)
    for (const Step& s : all.pe[pe]) {
      bool keep = false;
      switch (s.kind) {
        case StepKind::Barrier:
          keep = true;
          break;
        case StepKind::Send:
        case StepKind::Recv:
          keep = is_measured(s.edge) && sent.count(s.tag) > 0;
          break;
        case StepKind::Reduce:
          keep = is_measured(s.edge) && (solo < 0 || static_cast<int>(pe) == solo);
          break;
        case StepKind::Compute:
          keep = false;
          break;
      }
      if (keep) out.pe[pe].push_back(s);
    }
  return out;
}

struct Simulated {
  std::int64_t cycles = 0;               ///< first to last step of the measured redistribution
  std::int64_t flits = 0;                ///< flits injected
  std::int64_t busiest_router_link = 0;  ///< flits on the busiest router-to-router link
  std::int64_t busiest_endpoint = 0;     ///< flits on the busiest injection or ejection channel
  double endpoint_busy_share = 0;        ///< ... over its first to last flit (noc::busiest_links)
  std::int64_t router_vc_starved = 0;    ///< the busiest router link's VC-starved cycles
  double round_robin_fluid = -1;         ///< round_robin_fluid_cycles of its sends (-1: none)
  std::int64_t busiest_link() const { return std::max(busiest_router_link, busiest_endpoint); }
};

/// In a child process: runs `programs` and measures the redistribution `measured`, as the text
/// read_simulated reads.
std::string simulate_in_child(const HwSpec& hw, const ProgramSet& programs,
                              const std::vector<int>& measured) {
  System sys("system", hw, programs);
  const RunResult run = sys.run();
  noc::Cycle first = noc::kNever, last = 0;
  for (const Span& s : run.spans)
    if (std::find(measured.begin(), measured.end(), s.edge) != measured.end()) {
      first = std::min(first, s.start);
      last = std::max(last, s.end);
    }
  const noc::BusiestLinks busiest = noc::busiest_links(run.links);
  const noc::LinkLoad& endpoint = busiest.endpoint();
  std::ostringstream o;
  o << std::setprecision(17) << (first == noc::kNever ? 0 : last - first) << " " << run.flits
    << " " << busiest.router->flits << " " << endpoint.flits << " " << endpoint.busy_share() << " "
    << busiest.router->vc_starved;
  return o.str();
}

Simulated read_simulated(const std::string& text) {
  Simulated r;
  std::istringstream in(text);
  in >> r.cycles >> r.flits >> r.busiest_router_link >> r.busiest_endpoint >>
      r.endpoint_busy_share >> r.router_vc_starved;
  if (!(in >> r.round_robin_fluid)) r.round_robin_fluid = -1;
  return r;
}

/// The round-robin fluid run of a case's sends (optimizer/cost/round_robin_fluid.h), as text
/// for read_simulated; "" where it does not apply: not an xy mesh, no sends of a case that moves
/// bytes (ring rounds). A case that moves nothing takes no time (it counts as moving nothing).
std::string round_robin_fluid_text(const BenchResult& r, const HwSpec& hw) {
  if (hw.topology.kind != "mesh" || hw.router.routing != "xy") return "";
  if (r.sends.empty()) return r.bytes_moved == 0 ? " 0" : "";
  std::vector<opt::FluidMessage> messages;
  messages.reserve(r.sends.size());
  const std::int64_t width = hw.link.width_bytes;
  for (const noc::BatchMessage& m : r.sends)
    messages.push_back({m.src, m.dst, std::max<std::int64_t>(1, (m.bytes + width - 1) / width)});
  std::ostringstream o;
  o << std::setprecision(17)
    << opt::round_robin_fluid_cycles(messages, hw.topology.rows, hw.topology.cols, hw.ni.channels);
  return " " + o.str();
}

/// A case priced by the models and lowered, waiting for its two simulations: as is, and with
/// only its busiest sender sending (solo; none without a sender).
struct PreparedBench {
  BenchResult result;
  HwSpec hw;  ///< the machine, its SRAM unbounded: data fit is not the question
  std::vector<int> measured;
  ProgramSet all, solo;
  bool has_solo() const { return result.busiest_sender >= 0; }
};

/// Fills in what the two runs measured.
void record_runs(BenchResult& r, const Simulated& all, const Simulated* solo) {
  r.simulated_cycles = all.cycles;
  r.flits_moved = all.flits;
  r.max_link_utilisation =
      all.cycles > 0 ? static_cast<double>(all.busiest_link()) / static_cast<double>(all.cycles)
                     : 0;
  r.busiest_router_link_flits = all.busiest_router_link;
  r.busiest_endpoint_flits = all.busiest_endpoint;
  r.busiest_endpoint_busy_share = all.endpoint_busy_share;
  r.busiest_router_link_vc_starved = all.router_vc_starved;
  if (all.round_robin_fluid >= 0) r.round_robin_cycles = r.linkload_latency + all.round_robin_fluid;
  r.solo_cycles = solo ? solo->cycles : 0;
}

}  // namespace

const std::vector<std::string>& bench_types() {
  static const std::vector<std::string> types = {
      "NONE",       "LOCAL",        "ALL_GATHER", "SCATTER", "ALL_TO_ALL",
      "ALL_REDUCE", "AFTER_REDUCE", "HALO",       "HALO_2D", "GROUP_GATHER"};
  return types;
}

namespace {

PreparedBench prepare_bench(const HwSpec& hw, const BenchCase& bench) {
  PreparedBench prepared;
  BenchResult& r = prepared.result;
  r.bench = bench;
  r.bench.topology = hw.topology.name();
  const int pes = hw.topology.num_nodes();
  const opt::Graph graph =
      bench_graph(tensor_shape(bench.tensor_bytes, pes), bench.type.rfind("HALO", 0) == 0);
  const opt::Workload w = opt::build_workload(graph);
  const auto pair = pick_pair(w, bench.type, hw_desc_of(hw).grid());
  if (!pair) return prepared;
  r.run = true;
  r.producer = pair->first.str();
  r.consumer = pair->second.str();

  // Both models on this edge. ALL_REDUCE is the producer's own reduction in the exact models,
  // AFTER_REDUCE the edge that takes its reduced output to the consumer: the seed prices the
  // two as one ALL_REDUCE edge, in ALL_REDUCE's row, and AFTER_REDUCE's not at all.
  const opt::HwDesc desc = hw_desc_of(hw);
  const opt::PaperModel paper(desc);
  const opt::LinkloadModel linkload(desc);
  if (r.scores("paper")) {
    const opt::Cost paper_cost = paper.edge_cost(w, w.edges[0], pair->first, pair->second);
    r.paper_cycles = paper_cost.cycles;
    r.paper_bytes = paper_cost.bytes;
    r.paper_latency = paper_cost.bytes > 0 ? desc.paper_latency_cycles : 0;
  }

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
  HwSpec& big = prepared.hw;
  big = hw;
  big.pe.sram_bytes = std::max<std::int64_t>(hw.pe.sram_bytes, std::int64_t{1} << 40);
  const Lowered low = lower_plan(w, plan, big, ExecMode::Barrier);
  // The redistribution to measure: the edge, or for ALL_REDUCE the producer's reduction (not
  // the consumer's, when it has INPP too).
  std::vector<int>& measured = prepared.measured;
  measured = {0};
  for (std::size_t e = 1; e < low.edges.size(); ++e)
    if (low.edges[e].reduction && low.edges[e].src_layer == 0 && bench.type == "ALL_REDUCE")
      measured = {static_cast<int>(e)};
  for (int e : measured) r.bytes_moved += low.edges[e].bytes;
  // linkload's terms (for ALL_REDUCE its ring all-reduce: the rounds' hop latencies, and their
  // serialization plus the adds as the load term).
  r.linkload_hw = desc;
  auto ring_terms = [&](const opt::RingGatherTime& t) {
    r.linkload_latency = t.latency;
    r.linkload_links = t.round;
    r.rings = true;
  };
  if (bench.type == "ALL_REDUCE") {
    const opt::ReductionTime t = linkload.reduction_time(w.layers[0], pair->first);
    r.linkload_cycles = t.cycles();
    ring_terms(t);
  } else {
    r.linkload_cycles = linkload.edge_cost(w, w.edges[0], pair->first, pair->second).cycles;
    r.linkload_links = linkload.route(low.edges[0].transfers);
    r.linkload_latency = linkload.latency_cycles(r.linkload_links);
    const std::vector<int> ring_of = opt::ring_index(low.edges[0].rings, pes);
    const auto in_ring = [&](const opt::Transfer& t) { return opt::in_ring(t, ring_of); };
    // lowering.all_gather: ring (or auto's choice), every transfer in a ring: its rounds.
    if (!low.edges[0].rings.empty() &&
        std::all_of(low.edges[0].transfers.begin(), low.edges[0].transfers.end(), in_ring))
      ring_terms(linkload.ring_gather_time(low.edges[0].rings));
  }

  // The busiest sender, and the zero-load pipeline latency of its longest route.
  std::map<int, std::int64_t> sent;
  for (int e : measured)
    for (const opt::Transfer& t : low.edges[static_cast<std::size_t>(e)].transfers)
      sent[t.src] += t.bytes, ++r.messages;
  for (const auto& [pe, bytes] : sent)
    if (bytes > r.busiest_sender_bytes) r.busiest_sender = pe, r.busiest_sender_bytes = bytes;
  const noc::Topology topo = noc::Topology::build(hw.topology);
  int routers = 0;
  if (r.busiest_sender >= 0)
    for (const Step& s : low.programs.pe[static_cast<std::size_t>(r.busiest_sender)])
      if (s.kind == StepKind::Send &&
          std::find(measured.begin(), measured.end(), s.edge) != measured.end())
        routers = std::max(routers, topo.routers_on_path(r.busiest_sender, s.peer));
  if (routers > 0) r.hop_latency_cycles = optimizer::LinkloadModel::route_cycles(routers, desc);
  if (!r.rings)
    for (std::size_t pe = 0; pe < low.programs.pe.size(); ++pe)
      for (const Step& s : low.programs.pe[pe])
        if (s.kind == StepKind::Send && s.edge == measured.front())
          r.sends.push_back({static_cast<int>(pe), s.peer, s.bytes, 0});

  prepared.all = measured_programs(low.programs, measured, -1);
  if (r.busiest_sender >= 0)
    prepared.solo = measured_programs(low.programs, measured, r.busiest_sender);
  return prepared;
}

}  // namespace

std::vector<BenchResult> run_benches(const HwSpec& hw, const std::vector<BenchCase>& cases,
                                     int jobs,
                                     const std::function<void(const BenchResult&)>& done) {
  std::vector<PreparedBench> prepared;
  prepared.reserve(cases.size());
  for (const BenchCase& c : cases) prepared.push_back(prepare_bench(hw, c));
  // Two simulations per case that has a pair (the second: solo, when there is a sender).
  struct Run {
    std::size_t bench;
    bool solo;
  };
  std::vector<Run> runs;
  for (std::size_t i = 0; i < prepared.size(); ++i) {
    if (!prepared[i].result.run) continue;
    runs.push_back({i, false});
    if (prepared[i].has_solo()) runs.push_back({i, true});
  }
  std::vector<std::optional<Simulated>> all(prepared.size()), solo(prepared.size());
  auto finish = [&](std::size_t i) {
    PreparedBench& p = prepared[i];
    if (p.result.run) record_runs(p.result, *all[i], p.has_solo() ? &*solo[i] : nullptr);
    if (done) done(p.result);
  };
  // Cases without a pair are reported first; the others as their runs end.
  for (std::size_t i = 0; i < prepared.size(); ++i)
    if (!prepared[i].result.run) finish(i);
  std::optional<ChildResult> failed;  // the first run that failed: thrown once none is running
  run_in_children(
      runs.size(), jobs,
      [&](std::size_t k) {
        if (failed) return std::string();  // forked after a failure: nothing more to learn
        const PreparedBench& p = prepared[runs[k].bench];
        if (runs[k].solo) return simulate_in_child(p.hw, p.solo, p.measured);
        return simulate_in_child(p.hw, p.all, p.measured) + round_robin_fluid_text(p.result, p.hw);
      },
      [&](std::size_t k, const ChildResult& result) {
        if (failed) return;
        if (result.kind != ChildResult::Kind::Ok) {
          failed = result;
          return;
        }
        const std::size_t i = runs[k].bench;
        (runs[k].solo ? solo : all)[i] = read_simulated(result.text);
        if (all[i] && (solo[i] || !prepared[i].has_solo())) finish(i);
      });
  if (failed && failed->kind == ChildResult::Kind::InputError) throw InputError(failed->text);
  if (failed) throw CheckError(failed->text);
  std::vector<BenchResult> out;
  out.reserve(prepared.size());
  for (PreparedBench& p : prepared) out.push_back(std::move(p.result));
  return out;
}

}  // namespace nocflow::sim
