// SPDX-License-Identifier: MIT
// Plan replay on hand-checkable cases (2x2 mesh, plans built in code). One process per test.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <sstream>
#include <variant>

#include "noc/base/error.h"
#include "optimizer/cost/linkload_model.h"
#include "optimizer/cost/pe_model.h"
#include "optimizer/frontend/load_network.h"
#include "optimizer/partition/placement.h"
#include "optimizer/passes/pass_manager.h"
#include "sim/config/hw_loader.h"
#include "sim/config/param.h"
#include "sim/lower/lowering.h"
#include "sim/lower/priced_inputs.h"
#include "sim/lower/workload_setup.h"
#include "sim/output/layer_stats.h"
#include "sim/system/system.h"

namespace nocflow::sim {
namespace {

namespace opt = optimizer;
const std::string kDir = std::string(NOCFLOW_SOURCE_DIR);

HwSpec mesh2x2() {
  return load_hw_config(kDir + "/configs/hw/mesh4x4.yaml", {"topology.rows=2", "topology.cols=2"});
}

opt::Plan plan_for(const opt::Workload& w, const std::vector<std::string>& choices) {
  opt::Plan plan;
  plan.network = "test";
  plan.pes = 4;
  plan.topology = "mesh 2x2";
  for (std::size_t l = 0; l < w.layers.size(); ++l) {
    opt::PlanLayer pl;
    pl.name = w.layers[l].name;
    pl.op = w.layers[l].op;
    pl.choice = opt::parse_choice(choices[l], "test");
    pl.pes = opt::place(pl.choice, opt::PeGrid{true, 2, 2}).pe;
    plan.layers.push_back(pl);
  }
  return plan;
}

std::int64_t sent_bytes(const RunResult& r, int edge) {
  std::int64_t b = 0;
  for (const Span& s : r.spans)
    if (s.kind == StepKind::Send && s.edge == edge) b += s.bytes;
  return b;
}

TEST(Replay, OutpLayerTakesItsComputePlusTheAllGatherTheNextLayerNeeds) {
  const opt::Graph g = opt::load_network(kDir + "/tests/sim/data/two_conv.yaml");
  const opt::Workload w = opt::build_workload(g);
  const HwSpec hw = mesh2x2();
  const Lowered low = lower_plan(w, plan_for(w, {"OUTP=4", "OUTP=4"}), hw, ExecMode::Dataflow);
  const std::int64_t c1 = opt::pe_work(w.layers[0], low.layers[0].choice, hw_desc_of(hw)).cycles;
  const std::int64_t c2 = opt::pe_work(w.layers[1], low.layers[1].choice, hw_desc_of(hw)).cycles;
  System sys("sys", hw, low.programs);
  const RunResult r = sys.run();
  const auto layers = layer_stats(r, low.programs.layer_names);

  // conv1: only compute. Its output, 64 channels x 8 x 8 x 2 bytes = 8 KiB, is split in 4
  // blocks of 2 KiB; every conv2 node needs all 64 channels: an all-gather of 3 x 2 KiB into
  // each node, 24 KiB in all.
  EXPECT_EQ(layers[0].end, c1);
  EXPECT_EQ(layers[0].compute, c1);
  EXPECT_EQ(low.edges[0].bytes, 4 * 3 * 2048);
  EXPECT_EQ(sent_bytes(r, 0), 4 * 3 * 2048);
  // The all-gather: each node's ejection port takes 3 x 64 flits of 32 bytes at one flit per
  // cycle, so at least 192 cycles after the first flit's zero-load latency (at most 3 routers
  // x 3 cycles + 2) and one more to hand the data to the PE. Sources send to their ring
  // successor first, so ejection ports are never shared early on; allow 4 cycles of
  // arbitration loss.
  const noc::Cycle gather = r.total_cycles - c1 - c2;
  EXPECT_GE(gather, 192);
  EXPECT_LE(gather, 192 + (3 * 3 + 2) + 1 + 4);
  // Exactly compute + all-gather + compute on the critical PE: nothing else in between.
  EXPECT_EQ(layers[1].end - layers[1].start, layers[1].compute + layers[1].communication + layers[1].idle);
  EXPECT_EQ(layers[1].compute, c2);
  EXPECT_EQ(r.total_cycles, c1 + layers[1].communication + c2);
}

// The same all-gather under lowering.all_gather: ring. Every PE sends 3 chunks of 2 KiB, each
// to its ring successor (0 -> 1 -> 3 -> 2 -> 0 on the 2x2), forwarding what it received, and
// receives 3; the consumer receives nothing directly. The rounds are the consumer's (layer 1):
// they gather its input, so layers.csv counts their waits as its communication.
struct RingGatherPlan {
  opt::Graph g = opt::load_network(kDir + "/tests/sim/data/two_conv.yaml");
  opt::Workload w = opt::build_workload(g);
  HwSpec hw = mesh2x2();
  RingGatherPlan() { hw.lowering.all_gather = "ring"; }
  RingGatherPlan(const RingGatherPlan&) = delete;  // w points into g

  Lowered lower(ExecMode mode) const {
    Lowered low = lower_plan(w, plan_for(w, {"OUTP=4", "OUTP=4"}), hw, mode);
    EXPECT_EQ(low.edges.at(0).rings.size(), 1u);
    const std::map<int, int> successor = {{0, 1}, {1, 3}, {3, 2}, {2, 0}};
    for (int pe = 0; pe < 4; ++pe) {
      int sends = 0;
      std::int64_t received = 0;
      for (const Step& s : low.programs.pe[static_cast<std::size_t>(pe)]) {
        if (s.edge != 0) continue;
        EXPECT_EQ(s.layer, 1);
        if (s.kind == StepKind::Send) {
          EXPECT_EQ(s.peer, successor.at(pe));
          EXPECT_EQ(s.bytes, 2048);
          ++sends;
        }
        if (s.kind == StepKind::Recv) received += s.bytes;
      }
      EXPECT_EQ(sends, 3) << "PE " << pe;
      EXPECT_EQ(received, 3 * 2048) << "PE " << pe;  // the 3 other members' chunks
    }
    return low;
  }
};

TEST(Replay, RingAllGatherSendsEveryChunkToTheRingSuccessor) {
  RingGatherPlan p;
  const Lowered low = p.lower(ExecMode::Barrier);
  EXPECT_EQ(low.edges[0].rings[0].ring, (std::vector<int>{0, 1, 3, 2}));
  EXPECT_EQ(low.edges[0].bytes, 4 * 3 * 2048);  // what each PE receives, as before
  System sys("sys", p.hw, low.programs);
  const RunResult r = sys.run();
  EXPECT_EQ(sent_bytes(r, 0), 4 * 3 * 2048);
  EXPECT_EQ(r.flit_hops, r.flits);  // every chunk to a mesh neighbour
  // The edge alone between barriers takes exactly linkload's rounds: 3 x (64 flits + one hop).
  noc::Cycle start = -1, end = 0;
  for (const Span& s : r.spans)
    if (s.edge == 0)
      start = start < 0 ? s.start : std::min(start, s.start), end = std::max(end, s.end);
  auto priced = [&](const HwSpec& hw) {
    return opt::LinkloadModel(hw_desc_of(hw))
        .edge_cost(p.w, p.w.edges[0], low.layers[0].choice, low.layers[1].choice)
        .cycles;
  };
  EXPECT_DOUBLE_EQ(static_cast<double>(end - start), priced(p.hw));
  HwSpec direct = p.hw;
  direct.lowering.all_gather = "direct";
  EXPECT_LT(priced(direct), priced(p.hw));  // direct messages differ: the ring is what was priced
}

// In dataflow mode too: the rings run right after the producer's compute and deliver every
// byte the consumer needs (its receives from the ring's members are not posted again).
TEST(Replay, RingAllGatherDeliversTheEdgeInDataflowMode) {
  RingGatherPlan p;
  const Lowered low = p.lower(ExecMode::Dataflow);
  System sys("sys", p.hw, low.programs);
  const RunResult r = sys.run();
  EXPECT_EQ(sent_bytes(r, 0), low.edges[0].bytes);
  EXPECT_EQ(r.flit_hops, r.flits);
}

TEST(Replay, InppReductionMovesTwiceTheBlockTimesGroupSizeMinusOne) {
  const opt::Graph g = opt::load_network(kDir + "/tests/sim/data/two_conv.yaml");
  const opt::Workload w = opt::build_workload(g);
  const HwSpec hw = mesh2x2();
  const Lowered low = lower_plan(w, plan_for(w, {"INPP=4", "SINGLE"}), hw, ExecMode::Dataflow);
  ASSERT_EQ(low.edges.size(), 2u);  // conv1 -> conv2, then conv1's reduction
  ASSERT_TRUE(low.edges[1].reduction);
  System sys("sys", hw, low.programs);
  const RunResult r = sys.run();
  // Each of the 4 PEs holds partial sums of the whole 8 KiB output: a ring all-reduce moves
  // 2 (f - 1) / f of it per member, 2 x 3 x 8 KiB in all; the result then sits on every member,
  // so the single conv2 node needs nothing.
  EXPECT_EQ(sent_bytes(r, 1), 2 * 3 * 8192);
  EXPECT_EQ(low.edges[1].bytes, 2 * 3 * 8192);
  EXPECT_EQ(low.edges[0].bytes, 0);
}

TEST(Replay, InppMembersOfAFusedLayerEachTakeTheWholeResidualAndApplyTheTail) {
  opt::Graph g = opt::load_network(kDir + "/tests/sim/data/conv_residual.yaml");
  opt::run_passes(g, "default");
  const opt::Workload w = opt::build_workload(g);
  ASSERT_EQ(w.layers.size(), 2u);
  ASSERT_EQ(w.layers[1].op, "Conv+Add+Relu");
  EXPECT_EQ(w.layers[1].tail_vector_ops, 2 * 64 * 8 * 8);  // the add and the ReLU
  const HwSpec hw = mesh2x2();
  const Lowered low = lower_plan(w, plan_for(w, {"SINGLE", "INPP=4"}), hw, ExecMode::Dataflow);
  std::int64_t activations = 0, reduced = 0;
  for (const LoweredEdge& e : low.edges) (e.reduction ? reduced : activations) += e.bytes;
  // conv1's 8 KiB output sits on PE 0, INPP member 0. Each other member reads its 16 of the 64
  // channels (2 KiB) and the whole residual (8 KiB); the members then all-reduce the 8 KiB
  // block, 2 x 3 x 8 KiB.
  EXPECT_EQ(activations, 3 * (2048 + 8192));
  EXPECT_EQ(reduced, 2 * 3 * 8192);
  // Every member applies the add and the ReLU to the whole block, 8,192 ops at 64 per cycle,
  // after its 65,536 MACs (16 channels fill the 16 columns of the array): 256 + 128 cycles,
  // more than the SRAM's (2 KiB weights + 10 KiB inputs + 8 KiB output) / 64 = 320.
  EXPECT_EQ(low.compute_cycles[1], 65'536 / 256 + 8'192 / 64);
  System sys("sys", hw, low.programs);
  const RunResult r = sys.run();
  std::int64_t sent = 0;
  for (std::size_t e = 0; e < low.edges.size(); ++e) sent += sent_bytes(r, static_cast<int>(e));
  EXPECT_EQ(sent, activations + reduced);
}

/// two_conv3x3.yaml with both layers split the same way, replayed with barriers on 2x2.
struct HaloRun {
  opt::Graph g = opt::load_network(kDir + "/tests/sim/data/two_conv3x3.yaml");
  opt::Workload w = opt::build_workload(g);
  HwSpec hw = mesh2x2();
  Lowered low;
  RunResult r;
  explicit HaloRun(const std::string& choice)
      : low(lower_plan(w, plan_for(w, {choice, choice}), hw, ExecMode::Barrier)) {
    System sys("sys", hw, low.programs);
    r = sys.run();
  }
  HaloRun(const HaloRun&) = delete;  // w points into g
};

TEST(Replay, HaloExchangeMovesExactlyTheHalo) {
  const HaloRun run("OFMP_H=4");
  // 8 rows in 4 strips of 2; a 3x3 kernel with pad 1 reads one row beyond each side: across
  // each of the 3 inner boundaries one row of 16 channels x 8 columns x 2 bytes, both ways.
  EXPECT_EQ(sent_bytes(run.r, 0), 3 * 2 * 16 * 8 * 2);
}

// Balanced blocks: OFMP_H 3 cuts the 8 rows 2, 3, 3, so two inner boundaries exchange a row
// each way; every node computes as long as the largest block (3 of 8 rows); a factor larger
// than its dimension is refused.
TEST(Replay, BalancedBlocksExchangeTheirHalosAndTakeTheLargestBlocksTime) {
  const HaloRun run("OFMP_H=3");
  EXPECT_EQ(sent_bytes(run.r, 0), 2 * 2 * 16 * 8 * 2);
  const opt::Layer& conv1 = run.w.layers[0];
  const opt::PeWork work = opt::pe_work(conv1, run.low.layers[0].choice, hw_desc_of(run.hw));
  EXPECT_EQ(work.macs, conv1.macs * 3 / 8);
  EXPECT_EQ(layer_stats(run.r, run.low.programs.layer_names)[0].compute, work.cycles);
  opt::Plan too_many = plan_for(run.w, {"SINGLE", "OFMP_W=4"});
  too_many.layers[1].choice.factor(opt::PartDim::OfmpW) = 9;
  try {
    lower_plan(run.w, too_many, run.hw, ExecMode::Barrier);
    FAIL() << "a factor of 9 on 8 columns was lowered";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("does not fit the layer"), std::string::npos) << e.what();
  }
}

TEST(Replay, RowsPlacementPutsHaloRowsOneHopApart) {
  // OFMP_H=2,OFMP_W=2 on 2x2: the snake puts node (1, 0) on PE 3, two hops below (0, 0);
  // PLACE=ROWS puts it on PE 2, one hop. Each 4x4 tile sends a 4-column row and a 4-row column
  // (16 channels x 4 x 2 bytes = 128 B: 1 hop each) and a corner (16 x 2 = 32 B: 2 hops).
  const opt::Graph g = opt::load_network(kDir + "/tests/sim/data/two_conv3x3.yaml");
  const opt::Workload w = opt::build_workload(g);
  const HwSpec hw = mesh2x2();
  const std::string choice = "OFMP_H=2,OFMP_W=2,PLACE=ROWS";
  const opt::Plan plan = plan_for(w, {choice, choice});
  ASSERT_EQ(plan.layers[0].pes, (std::vector<int>{0, 1, 2, 3}));
  const Lowered low = lower_plan(w, plan, hw, ExecMode::Barrier);
  const opt::PeGrid grid{true, 2, 2};
  std::int64_t flit_hops = 0, sends = 0;
  for (std::size_t pe = 0; pe < low.programs.pe.size(); ++pe)
    for (const Step& s : low.programs.pe[pe]) {
      if (s.kind != StepKind::Send || s.edge != 0) continue;
      const int hops = grid.distance(static_cast<int>(pe), s.peer);
      EXPECT_EQ(hops, s.bytes == 128 ? 1 : 2)
          << "PE " << pe << " -> " << s.peer << ", " << s.bytes << " B";
      flit_hops += (s.bytes + hw.link.width_bytes - 1) / hw.link.width_bytes * hops;
      ++sends;
    }
  EXPECT_EQ(sends, 4 * 3);
  System sys("sys", hw, low.programs);
  const RunResult r = sys.run();
  EXPECT_EQ(sent_bytes(r, 0), 4 * (128 + 128 + 32));
  EXPECT_EQ(flit_hops, 4 * (4 + 4 + 2));
  EXPECT_EQ(r.flit_hops, flit_hops);  // the edge is the only traffic
}

// A plan's priced_for lists exactly the config keys hw_desc_of reads: changing any listed key
// changes the cost models' view of the hardware, changing any other key leaves it as it was
// (so that a replay's "does not apply" note fires when, and only when, it should).
TEST(PricedFor, ListsExactlyTheKeysTheCostModelsRead) {
  auto view = [](const HwSpec& s) {
    const opt::HwDesc h = hw_desc_of(s);
    std::ostringstream o;
    o << h.topology.kind << ' ' << h.topology.rows << ' ' << h.topology.cols << ' '
      << h.topology.ports << ' ' << h.routing << ' ' << h.macs_per_cycle << ' ' << h.adds_per_cycle
      << ' ' << h.sram_bytes_per_cycle << ' ' << h.array_rows << ' ' << h.array_cols << ' '
      << h.link_bytes_per_cycle << ' ' << h.router_pipeline_cycles << ' ' << h.link_latency_cycles
      << ' ' << h.mac_pj << ' ' << h.hop_pj_per_byte << ' ' << h.sram_pj_per_byte << ' '
      << h.sram_bytes << ' ' << h.bnoc_bytes_per_cycle << ' ' << h.vc_buffer_flits << ' '
      << h.credit_loop_cycles << ' ' << h.vcs << ' ' << h.ni_channels << ' '
      << static_cast<int>(h.all_gather);
    return o.str();
  };
  for (const char* config : {"mesh4x4.yaml", "crossbar16.yaml"}) {
    const HwSpec base = load_hw_config(kDir + "/configs/hw/" + config, {});
    std::set<std::string> listed;
    for (const auto& [key, value] : priced_for(base)) listed.insert(key);
    int tried = 0;
    for (const Param& p : hw_params()) {
      if (p.applies && !p.applies(base)) continue;
      const ParamValue now = p.get(base);
      ParamValue other;  // another value the key accepts
      if (const auto* i = std::get_if<std::int64_t>(&now))
        other = *i + 1 <= p.max ? *i + 1 : *i - 1;
      else if (const auto* d = std::get_if<double>(&now))
        other = *d + 0.5 <= p.max ? *d + 0.5 : *d - 0.5;
      else if (const auto* b = std::get_if<bool>(&now))
        other = !*b;
      else if (!p.choices.empty())
        other =
            p.choices.front() != std::get<std::string>(now) ? p.choices.front() : p.choices.back();
      else
        continue;  // free text: no model reads one
      HwSpec changed = base;
      p.set(changed, other);
      EXPECT_EQ(view(changed) != view(base), listed.count(p.path) == 1)
          << config << ": " << p.path << " = " << format_value(other);
      ++tried;
    }
    EXPECT_GT(tried, static_cast<int>(listed.size())) << config;
  }
}

}  // namespace
}  // namespace nocflow::sim
