// SPDX-License-Identifier: MIT
#include "sim/lower/lowering.h"

#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "noc/base/error.h"
#include "noc/base/format.h"
#include "optimizer/cost/cost_model.h"
#include "optimizer/cost/linkload_model.h"
#include "optimizer/cost/pe_model.h"
#include "optimizer/cost/round_robin_fluid.h"
#include "optimizer/plan/pipeline.h"
#include "sim/lower/collectives.h"
#include "sim/lower/workload_setup.h"

namespace nocflow::sim {
namespace {

/// What a plan that names other layers than the network simulated was most likely made with.
constexpr const char* kSameGraph =
    "; a plan fits the graph it was optimized for: give the --network, --passes and --train "
    "optimize was given";

namespace opt = optimizer;

opt::PeGrid grid_of(const HwSpec& hw) {
  return hw.topology.kind == "crossbar" ? opt::PeGrid{false, 1, hw.topology.ports}
                                        : opt::PeGrid{true, hw.topology.rows, hw.topology.cols};
}

/// Check a plan layer against its network layer and the hardware; build its placed form.
opt::PlacedLayer place_layer(const opt::Layer& layer, const opt::PlanLayer& pl, const HwSpec& hw) {
  const int pes = hw.topology.num_nodes();
  const std::string where = "plan layer '" + layer.name + "'";
  const opt::Choice& c = pl.choice;
  for (int d = 0; d < 5; ++d) {
    const auto dim = static_cast<opt::PartDim>(d);
    const int f = c.factor(dim);
    if (f == 1) continue;
    // Any factor up to the dimension cuts it into balanced blocks (placement.h); a relayout
    // takes only those whose blocks copy their own elements (Layer::factors).
    const auto& only = layer.factors[static_cast<std::size_t>(d)];
    if (f < 1 || !layer.legal.contains(dim) || f > opt::dim_size(layer, dim) ||
        (!only.empty() && std::find(only.begin(), only.end(), f) == only.end()))
      throw InputError(where + ": choice " + c.str() + " does not fit the layer (" +
                       std::string(opt::to_string(dim)) + " = " + std::to_string(f) + ", dimension " +
                       std::to_string(opt::dim_size(layer, dim)) + ")");
  }
  if (c.nodes() > pes)
    throw InputError(where + ": choice " + c.str() + " needs " + std::to_string(c.nodes()) +
                     " PEs, the hardware has " + std::to_string(pes));
  if (static_cast<int>(pl.pes.size()) != c.nodes())
    throw InputError(where + ": " + std::to_string(pl.pes.size()) + " PEs listed for " +
                     std::to_string(c.nodes()) + " grid nodes");
  std::set<int> seen;
  for (int pe : pl.pes) {
    if (pe < 0 || pe >= pes)
      throw InputError(where + ": PE " + std::to_string(pe) + " does not exist (" + std::to_string(pes) + " PEs)");
    if (!seen.insert(pe).second) throw InputError(where + ": PE " + std::to_string(pe) + " listed twice");
  }
  const double bytes = opt::layer_memory_bytes(layer, c);
  if (bytes > static_cast<double>(hw.pe.sram_bytes))
    throw InputError(where + ": needs " + std::to_string(static_cast<std::int64_t>(bytes)) +
                     " bytes per PE (weights, inputs and outputs of its share), but a PE's SRAM "
                     "holds " + std::to_string(hw.pe.sram_bytes) + " (pe.sram_bytes)");
  return {&layer, c, opt::Placement{pl.pes}};
}

/// Whether an edge sent directly is all grouped all-gathers: its transfers all within
/// all-gather groups (transfers.h, all_gather_groups: the OUTP peers of each spatial block), of
/// which there are at least two. Such groups interleave on the mesh (placement.h: OUTP peers are
/// strided; 16 groups of 16 on 16x16 each zigzag between columns c and 15 − c), and ring order
/// along the snake starts every member on a message across its row, so lowering sends them
/// nearest first: 16x16 GROUP_GATHER at 1 and 4 MiB takes 15,324 and 61,454 cycles instead of
/// 23,058 and 96,863, 8x8's 1-7 % less, 4x4's within 1 %. A whole-machine all-gather keeps
/// ring order, a permutation at every step: nearest first took 4x4's and 16x16's 18-26 %
/// longer (validate's SCATTER OFMP_W=16 -> OUTP=16 at 4 MiB: 223,066 cycles, not 177,160).
bool grouped_all_gathers(const opt::Workload& w, const opt::LayerEdge& edge,
                         const opt::PlacedLayer& producer, const opt::PlacedLayer& consumer,
                         const opt::PeGrid& grid, const std::vector<opt::Transfer>& transfers) {
  const std::vector<opt::RingGather> groups =
      opt::all_gather_groups(w, edge, producer, consumer, grid);
  if (groups.size() < 2) return false;
  const std::vector<int> group_of = opt::ring_index(groups, grid.num_pes());
  return std::all_of(transfers.begin(), transfers.end(),
                     [&](const opt::Transfer& t) { return opt::in_ring(t, group_of); });
}

/// Whether `nearest` (an edge's direct sends, each source's fewest hops first) ends sooner
/// than `ring` (the same sends in ring order) on an xy-routed mesh, by the round-robin fluid
/// (optimizer/cost/round_robin_fluid.h: each source's messages in the order given, `ni.channels`
/// at once), by more than two zero-load crossings of the mesh: the fluid has no router
/// pipelines, and within that it ranked the orders wrongly on validate's small 8x8 cases.
/// Where it does choose it was right on every one of validate's cases: 16x16 AFTER_REDUCE of 256
/// KiB (OFMP_W=8,INPP=32 -> OUTP=32,INPP=8, each column a chain of sends down and up) takes 4,897
/// cycles instead of 6,156, 8x8's whole-machine all-gathers of 1-4 MiB 3-11 % fewer; 4x4's and
/// 16x16's, which nearest first slows by up to 27 %, keep ring order (optimizer/README.md,
/// "Session 84: the fluid picks the send order").
bool nearest_ends_sooner(const std::vector<opt::Transfer>& ring,
                         const std::vector<opt::Transfer>& nearest, const HwSpec& hw,
                         const opt::LinkloadModel& loads) {
  if (hw.topology.kind != "mesh" || hw.router.routing != "xy" || ring.size() < 2) return false;
  const std::int64_t width = hw.link.width_bytes;
  auto fluid = [&](const std::vector<opt::Transfer>& sends) {
    std::vector<opt::FluidMessage> messages;
    messages.reserve(sends.size());
    for (const opt::Transfer& t : sends)
      messages.push_back({t.src, t.dst, std::max<std::int64_t>(1, (t.bytes + width - 1) / width)});
    return opt::round_robin_fluid_cycles(messages, hw.topology.rows, hw.topology.cols,
                                         hw.ni.channels);
  };
  const opt::HwDesc& desc = loads.hw();
  const double margin = 2.0 * (hw.topology.rows + hw.topology.cols - 2) *
                        (desc.router_pipeline_cycles + desc.link_latency_cycles);
  // No order ends before its busiest link (PE channels included) has carried its flits, cut
  // alike: where ring order ends within the margin of that, nearest first cannot gain enough,
  // and its run is skipped.
  const double ring_cycles = fluid(ring);
  return ring_cycles - loads.route(ring).max_link_flits > margin &&
         ring_cycles - fluid(nearest) > margin;
}

/// INPP groups of a placed layer: PEs sharing an output block, in INPP order.
struct InppGroup {
  std::vector<int> ring;         ///< the PEs, in INPP order
  std::int64_t block_bytes = 0;  ///< the output block its members reduce
};

std::vector<InppGroup> inpp_groups(const opt::PlacedLayer& pl) {
  std::vector<InppGroup> groups;
  const opt::Choice& c = pl.choice;
  const int f = c.factor(opt::PartDim::Inpp);
  for (int i = 0; i < c.nodes(); ++i) {
    opt::GridCoord g = opt::grid_coord(c, i);
    if (g[4] != 0) continue;
    // Its own block: with splits that do not divide, groups reduce blocks of other sizes.
    InppGroup& group = groups.emplace_back();
    group.block_bytes = opt::output_block(*pl.layer, c, g).volume() * pl.layer->elem_bytes;
    for (int m = 0; m < f; ++m) {
      g[4] = m;
      group.ring.push_back(pl.placement.pe[static_cast<std::size_t>(opt::grid_index(c, g))]);
    }
  }
  return groups;
}

}  // namespace

MicroBatched micro_batched(const opt::Workload& workload, const opt::Plan& plan) {
  if (!plan.pipelined()) throw InputError("micro-batches: the plan has no pipeline stages");
  std::map<std::string, const opt::PlanLayer*> by_name;
  for (const auto& pl : plan.layers) by_name[pl.name] = &pl;
  MicroBatched out;
  out.workload.graph = workload.graph;
  out.plan = plan;
  out.plan.layers.clear();
  out.plan.edges.clear();
  const int n = static_cast<int>(workload.layers.size());
  for (int m = 0; m < plan.micro_batches; ++m) {
    const std::string suffix = "@" + std::to_string(m);
    for (const opt::Layer& l : workload.layers) {
      auto it = by_name.find(l.name);
      if (it == by_name.end())
        throw InputError("the plan (for network " + plan.network + ") has no layer '" + l.name +
                         "'" + kSameGraph);
      opt::Layer copy = l;
      copy.name += suffix;
      out.workload.layers.push_back(std::move(copy));
      opt::PlanLayer pl = *it->second;
      pl.name += suffix;
      out.plan.layers.push_back(std::move(pl));
    }
    for (const opt::LayerEdge& e : workload.edges)
      out.workload.edges.push_back({e.src + m * n, e.dst + m * n, e.input});
    for (opt::PlanEdge e : plan.edges) {
      e.src += suffix;
      e.dst += suffix;
      out.plan.edges.push_back(std::move(e));
    }
  }
  return out;
}

Lowered lower_plan(const opt::Workload& workload, const opt::Plan& plan, const HwSpec& hw, ExecMode mode) {
  const int pes = hw.topology.num_nodes();
  if (plan.pes != pes)
    throw InputError("the plan is for " + std::to_string(plan.pes) + " PEs (" + plan.topology +
                     "), the hardware has " + std::to_string(pes));
  const opt::HwDesc desc = hw_desc_of(hw);
  // The same PE count on another shape is another machine: the plan's placements and
  // predictions were made for its own.
  if (!plan.topology.empty() && plan.topology != hw.topology.name())
    throw InputError("the plan is for " + plan.topology + ", the hardware is " +
                     hw.topology.name() + " (optimize for it, or simulate without --plan)");
  // A stage is a band of whole mesh rows (or crossbar ports): `units` of them.
  const int unit_pes = opt::pes_per_unit(desc);
  const std::string unit = desc.mesh() ? "mesh row" : "crossbar port";
  for (std::size_t s = 0; s < plan.stages.size(); ++s)
    if (const opt::PlanStage& st = plan.stages[s];
        st.first_pe % unit_pes != 0 || st.pes != st.units * unit_pes)
      throw InputError("the plan's stage " + std::to_string(s) + ": units " +
                       std::to_string(st.units) + ", first_pe " + std::to_string(st.first_pe) +
                       " and pes " + std::to_string(st.pes) + " are not " +
                       counted(st.units, unit) + " of " + hw.topology.name() + " (" +
                       std::to_string(unit_pes) + (unit_pes == 1 ? " PE" : " PEs") + " each)");
  std::map<std::string, const opt::PlanLayer*> by_name;
  for (const auto& pl : plan.layers) by_name[pl.name] = &pl;
  std::set<std::string> network_layers;
  Lowered out;
  out.resident_weights = plan.resident_weights;
  if (plan.pipelined()) out.micro_batches = plan.micro_batches;
  out.programs = ProgramSet(pes);
  for (const opt::Layer& l : workload.layers) {
    network_layers.insert(l.name);
    auto it = by_name.find(l.name);
    if (it == by_name.end())
      throw InputError("the plan (for network " + plan.network + ") has no layer '" + l.name +
                       "' of the network simulated (" +
                       (workload.graph ? workload.graph->name() : "?") + ")" + kSameGraph);
    out.layers.push_back(place_layer(l, *it->second, hw));
    out.programs.layer_names.push_back(l.name);
    out.compute_cycles.push_back(opt::pe_work(l, it->second->choice, desc).cycles);
  }
  for (const auto& pl : plan.layers)
    if (!network_layers.count(pl.name))
      throw InputError("plan layer '" + pl.name + "' is not a layer of the network simulated (" +
                       (workload.graph ? workload.graph->name() : "?") + ")" + kSameGraph);

  // Every transfer of every edge, with its tag, decided up front.
  const opt::PeGrid grid = grid_of(hw);
  const int num_layers = static_cast<int>(workload.layers.size());
  std::vector<std::vector<int>> incoming(num_layers), outgoing(num_layers);
  std::vector<std::vector<std::int64_t>> tags;
  std::vector<std::vector<int>> ring_of;  // per edge: opt::ring_index of its rings
  std::vector<std::vector<std::size_t>> send_order;  // per edge: its direct sends (below)
  // Each source sends in ring order starting with its successor on the snake, so that at any
  // moment the sources of an all-gather or all-to-all target different PEs (a permutation)
  // instead of all converging on the lowest-numbered one. An edge sends nearest first instead
  // (fewest hops, ties in ring order) when it is all grouped all-gathers (grouped_all_gathers)
  // or when the round-robin fluid says that ends sooner (nearest_ends_sooner).
  std::vector<int> snake_pos(pes);
  for (int i = 0; i < pes; ++i) snake_pos[opt::snake_pe(grid, i)] = i;
  auto ring_distance = [&](const opt::Transfer& t) {
    return (snake_pos[t.dst] - snake_pos[t.src] + pes) % pes;
  };
  // The edge's direct transfers (not in its rings, `ring_index`), by `key` (stable).
  auto ordered = [&](const std::vector<opt::Transfer>& ts, const std::vector<int>& ring_index,
                     auto key) {
    std::vector<std::size_t> order;
    for (std::size_t i = 0; i < ts.size(); ++i)
      if (!opt::in_ring(ts[i], ring_index)) order.push_back(i);
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return key(ts[a]) < key(ts[b]); });
    return order;
  };
  // nearest_ends_sooner, once per distinct list of sends in ring order: a network repeats its
  // edges (a ResNet's blocks, a pipeline's micro-batches), and resnet50's 16x16 greedy plan
  // spent a fifth of its replay in the fluid runs without this.
  std::map<std::vector<std::array<std::int64_t, 3>>, bool> sooner;
  const opt::LinkloadModel loads(desc);  // its route walking: the busiest link's flits
  auto nearest_sooner = [&](const std::vector<opt::Transfer>& ring,
                            const std::vector<opt::Transfer>& nearest) {
    std::vector<std::array<std::int64_t, 3>> key;
    key.reserve(ring.size());
    for (const opt::Transfer& t : ring) key.push_back({t.src, t.dst, t.bytes});
    auto [it, fresh] = sooner.try_emplace(std::move(key), false);
    if (fresh) it->second = nearest_ends_sooner(ring, nearest, hw, loads);
    return it->second;
  };
  auto picked = [](const std::vector<opt::Transfer>& ts, const std::vector<std::size_t>& order) {
    std::vector<opt::Transfer> sends;
    sends.reserve(order.size());
    for (std::size_t i : order) sends.push_back(ts[i]);
    return sends;
  };
  // Which all-gathers run as rings (lowering.all_gather), as linkload decides and prices it.
  std::optional<opt::LinkloadModel> rings_model;
  if (desc.all_gather != opt::HwDesc::AllGather::Direct) rings_model.emplace(desc);
  for (std::size_t e = 0; e < workload.edges.size(); ++e) {
    const opt::LayerEdge& edge = workload.edges[e];
    LoweredEdge le;
    le.src_layer = edge.src;
    le.dst_layer = edge.dst;
    le.src = workload.layers[edge.src].name;
    le.dst = workload.layers[edge.dst].name;
    const int src_stage = by_name[le.src]->stage, dst_stage = by_name[le.dst]->stage;
    le.stage_input = src_stage >= 0 && dst_stage >= 0 && src_stage != dst_stage;
    le.transfers = opt::edge_transfers(workload, edge, out.layers[edge.src], out.layers[edge.dst], grid);
    le.bytes = opt::total_bytes(le.transfers);
    if (rings_model)
      le.rings =
          rings_model->rings_to_run(workload, edge, out.layers[edge.src], out.layers[edge.dst]);
    ring_of.push_back(opt::ring_index(le.rings, pes));
    std::vector<std::size_t> order = ordered(le.transfers, ring_of.back(), ring_distance);
    std::vector<std::size_t> nearest =
        ordered(le.transfers, ring_of.back(), [&](const opt::Transfer& t) {
          return std::pair{grid.distance(t.src, t.dst), ring_distance(t)};
        });
    if (nearest != order &&
        ((le.rings.empty() && grouped_all_gathers(workload, edge, out.layers[edge.src],
                                                  out.layers[edge.dst], grid, le.transfers)) ||
         nearest_sooner(picked(le.transfers, order), picked(le.transfers, nearest))))
      order = std::move(nearest);
    send_order.push_back(std::move(order));
    std::vector<std::int64_t> t;
    for (std::size_t i = 0; i < le.transfers.size(); ++i) t.push_back(out.programs.new_tag());
    tags.push_back(t);
    out.edges.push_back(std::move(le));
    incoming[edge.dst].push_back(static_cast<int>(e));
    outgoing[edge.src].push_back(static_cast<int>(e));
  }

  ProgramSet& prog = out.programs;
  std::int64_t barrier = 0;
  auto sends = [&](int e) {
    const LoweredEdge& le = out.edges[e];
    for (std::size_t i : send_order[e]) {
      const opt::Transfer& t = le.transfers[i];
      prog.send(t.src, t.dst, le.src_layer, t.bytes, tags[e][i], e);
    }
  };
  auto rings = [&](int e) {  // the consumer's: they gather its input (layers.csv counts it so)
    const LoweredEdge& le = out.edges[e];
    for (const opt::RingGather& r : le.rings)
      ring_all_gather(prog, r.ring, r.chunk_bytes, le.dst_layer, e);
  };
  auto recvs_at = [&](int e, int pe, int layer) {
    const LoweredEdge& le = out.edges[e];
    for (std::size_t i = 0; i < le.transfers.size(); ++i) {
      const opt::Transfer& t = le.transfers[i];
      if ((pe < 0 || t.dst == pe) && !opt::in_ring(t, ring_of[e]))
        prog.recv(t.dst, t.src, layer, t.bytes, tags[e][i], e);
    }
  };

  for (int l = 0; l < num_layers; ++l) {
    const opt::PlacedLayer& pl = out.layers[l];
    for (int pe : pl.placement.pe) {
      if (mode == ExecMode::Dataflow)
        for (int e : incoming[l]) recvs_at(e, pe, l);
      prog.compute(pe, l, out.compute_cycles[l]);
    }
    if (mode == ExecMode::Barrier) prog.barrier_all(++barrier);
    if (pl.choice.factor(opt::PartDim::Inpp) > 1) {
      LoweredEdge red;
      red.src = red.dst = pl.layer->name;
      red.src_layer = red.dst_layer = l;
      red.reduction = true;
      red.transfers = opt::reduction_transfers(pl);
      red.bytes = opt::total_bytes(red.transfers);
      const int e = static_cast<int>(out.edges.size());
      out.edges.push_back(red);
      for (const InppGroup& group : inpp_groups(pl))
        ring_all_reduce(prog, group.ring, group.block_bytes, pl.layer->elem_bytes,
                        hw.pe.adds_per_cycle, l, e);
      if (mode == ExecMode::Barrier) prog.barrier_all(++barrier);
    }
    for (int e : outgoing[l]) {
      sends(e);
      if (mode == ExecMode::Barrier) {
        rings(e);
        recvs_at(e, -1, out.edges[e].dst_layer);
        prog.barrier_all(++barrier);
      }
    }
    if (mode == ExecMode::Dataflow)
      for (int e : outgoing[l]) rings(e);
  }
  // A reduction's programs send what its edge (transfers.csv, the models) says, pair by pair:
  // each group its own block's ring, around the ring the transfers name (every group sent the
  // first group's chunks once).
  std::map<std::tuple<int, int, int>, std::int64_t> sent;  // (edge, src, dst) -> bytes
  for (std::size_t p = 0; p < out.programs.pe.size(); ++p)
    for (const Step& s : out.programs.pe[p])
      if (s.kind == StepKind::Send && s.edge >= 0 &&
          out.edges[static_cast<std::size_t>(s.edge)].reduction)
        sent[{s.edge, static_cast<int>(p), s.peer}] += s.bytes;
  for (std::size_t e = 0; e < out.edges.size(); ++e)
    for (const opt::Transfer& t : out.edges[e].transfers)
      if (out.edges[e].reduction &&
          sent[{static_cast<int>(e), t.src, t.dst}] != t.bytes)  // each pair, and only those
        throw CheckError("lowering: " + out.edges[e].src + "'s INPP reduction sends " +
                         std::to_string(sent[{static_cast<int>(e), t.src, t.dst}]) +
                         " bytes from PE " + std::to_string(t.src) + " to PE " +
                         std::to_string(t.dst) + " where its transfers say " +
                         std::to_string(t.bytes));
  std::int64_t listed = 0, programs = 0;  // no pair beyond the transfers'
  for (const LoweredEdge& e : out.edges)
    if (e.reduction) listed += e.bytes;
  for (const auto& [key, bytes] : sent) programs += bytes;
  if (programs != listed)
    throw CheckError("lowering: the INPP reductions send " + std::to_string(programs) +
                     " bytes where their transfers say " + std::to_string(listed));
  return out;
}

}  // namespace nocflow::sim
