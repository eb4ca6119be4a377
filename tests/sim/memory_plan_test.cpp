// SPDX-License-Identifier: MIT
// Static memory planning of lowered plans (sim/lower/memory_plan.h): packing by hand, the
// buffers of a two-layer plan by hand, and the plan's invariants on resnet18 in both modes;
// and the order in which the lowering sends a layer's blocks.
#include "sim/lower/memory_plan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "optimizer/cost/cost_model.h"
#include "optimizer/frontend/load_network.h"
#include "optimizer/frontend/network_yaml.h"
#include "optimizer/partition/placement.h"
#include "optimizer/passes/pass_manager.h"
#include "sim/config/hw_loader.h"
#include "sim/lower/lowering.h"
#include "sim/lower/workload_setup.h"
#include "tests/sim/memory_plan_util.h"

namespace nocflow::sim {
namespace {

/// Each buffer's offset after pack(), in the plan's order.
std::vector<std::int64_t> offsets(const PeMemoryPlan& plan) {
  std::vector<std::int64_t> out;
  for (const Buffer& b : plan.buffers) out.push_back(b.offset);
  return out;
}

TEST(MemoryPlan, PackingReusesTheMemoryOfBuffersThatAreNotLiveTogether) {
  PeMemoryPlan plan;
  plan.buffers = {{BufferKind::Output, 0, -1, 100, 0, 2},   // A
                  {BufferKind::Received, 1, 0, 60, 1, 3},   // B, live with A and C
                  {BufferKind::Output, 1, -1, 50, 3, 5},    // C, live with B and D
                  {BufferKind::Weights, 2, -1, 40, 4, 4}};  // D, live with C
  pack(plan);
  // By decreasing size, lowest free offset: A at 0, B above A, C below B (A is gone by step
  // 3), D above C (B is gone by step 4).
  EXPECT_EQ(offsets(plan), (std::vector<std::int64_t>{0, 100, 0, 50}));
  EXPECT_EQ(plan.peak_bytes, 160);
  EXPECT_EQ(plan.live_peak_bytes, 160);  // steps 1-2: A and B
  EXPECT_EQ(plan.no_reuse_bytes, 250);
}

TEST(MemoryPlan, BuffersOfOneSizeArePlacedInOrderOfTheirFirstStep) {
  // Four of 100 bytes: B (step 0) at 0, D (0-1) above it, A (1-3) in B's place, C (2-3) in D's:
  // 200 bytes, the live peak. Taken latest first, they would need 300.
  PeMemoryPlan plan;
  plan.buffers = {{BufferKind::Output, 0, -1, 100, 1, 3},   // A
                  {BufferKind::Output, 1, -1, 100, 0, 0},   // B
                  {BufferKind::Output, 2, -1, 100, 2, 3},   // C
                  {BufferKind::Output, 3, -1, 100, 0, 1}};  // D
  pack(plan);
  EXPECT_EQ(offsets(plan), (std::vector<std::int64_t>{0, 0, 100, 100}));
  EXPECT_EQ(plan.peak_bytes, 200);
  EXPECT_EQ(plan.live_peak_bytes, 200);
}

TEST(MemoryPlan, ABufferTakesAGapThatFitsItExactly) {
  PeMemoryPlan plan;
  plan.buffers = {{BufferKind::Output, 0, -1, 100, 0, 1},   // A
                  {BufferKind::Received, 1, 0, 100, 0, 3},  // B, live with A and C
                  {BufferKind::Output, 1, -1, 100, 2, 3}};  // C, live with B only
  pack(plan);
  const Buffer &a = plan.buffers[0], &b = plan.buffers[1], &c = plan.buffers[2];
  // Equal sizes go by start (A, then B, then C): A at 0, B above it; C overlaps B only, and
  // the gap below B, where A was, is exactly C's size: C takes A's offset.
  EXPECT_EQ(a.offset, 0);
  EXPECT_EQ(b.offset, a.offset + a.bytes);
  ASSERT_EQ(c.bytes, b.offset) << "the test's premise: an exact fit";
  EXPECT_EQ(c.offset, a.offset);
  EXPECT_EQ(plan.peak_bytes, b.offset + b.bytes);
  EXPECT_EQ(plan.live_peak_bytes, a.bytes + b.bytes);  // steps 0-1: A and B (2-3: B and C)
}

/// tests/sim/data/two_conv.yaml under two choices on the 2x2 mesh, lowered for dataflow, and
/// its memory plan.
struct TwoConv {
  opt::Graph graph = opt::load_network(kDir + "/tests/sim/data/two_conv.yaml");
  opt::Workload workload = opt::build_workload(graph);
  Lowered low;
  std::vector<PeMemoryPlan> memory;
  explicit TwoConv(const std::vector<std::string>& choices)
      : low(lower_plan(workload, plan_2x2(workload, choices), mesh2x2(), ExecMode::Dataflow)),
        memory(plan_memory(low, workload)) {}
};

TEST(MemoryPlan, AnOutpPairHoldsItsBlockUntilTheConsumerHasComputed) {
  const TwoConv t({"OUTP=4", "OUTP=4"});
  const opt::Workload& w = t.workload;
  const std::vector<PeMemoryPlan>& memory = t.memory;
  ASSERT_EQ(memory.size(), 4u);
  // Every PE: 0 compute conv1, 1-3 send its 2 KiB block to the 3 others, 4-6 receive theirs,
  // 7 compute conv2.
  const opt::Layer &conv1 = w.layers[0], &conv2 = w.layers[1];
  for (const PeMemoryPlan& pe : memory) {
    auto find = [&](BufferKind kind, int layer) {
      auto it = std::find_if(pe.buffers.begin(), pe.buffers.end(),
                             [&](const Buffer& b) { return b.kind == kind && b.layer == layer; });
      EXPECT_NE(it, pe.buffers.end()) << to_string(kind) << " " << layer;
      return it == pe.buffers.end() ? Buffer{} : *it;
    };
    ASSERT_EQ(pe.buffers.size(), 6u);
    const Buffer input = find(BufferKind::Input, 0), w1 = find(BufferKind::Weights, 0),
                 out1 = find(BufferKind::Output, 0), got = find(BufferKind::Received, 1),
                 w2 = find(BufferKind::Weights, 1), out2 = find(BufferKind::Output, 1);
    EXPECT_EQ(input.bytes, conv1.input_bytes());  // OUTP: every node reads the whole input
    EXPECT_EQ(w1.bytes, conv1.weight_bytes / 4);
    EXPECT_EQ(out1.bytes, 2048);
    EXPECT_EQ(got.bytes, 3 * 2048);
    EXPECT_EQ(w2.bytes, conv2.weight_bytes / 4);
    EXPECT_EQ(out2.bytes, 2048);
    EXPECT_EQ(std::make_pair(input.first, input.last), std::make_pair(0, 0));
    EXPECT_EQ(std::make_pair(out1.first, out1.last), std::make_pair(0, 7));  // read in place
    EXPECT_EQ(std::make_pair(got.first, got.last), std::make_pair(4, 7));
    EXPECT_EQ(std::make_pair(out2.first, out2.last), std::make_pair(7, 7));
    // Step 0 holds the input, conv1's weights and its output; step 7 conv1's block, the three
    // received ones, conv2's weights and its output.
    const std::int64_t at0 = input.bytes + w1.bytes + out1.bytes;
    const std::int64_t at7 = out1.bytes + got.bytes + w2.bytes + out2.bytes;
    EXPECT_EQ(pe.live_peak_bytes, std::max(at0, at7));
    EXPECT_EQ(pe.no_reuse_bytes, at0 + got.bytes + w2.bytes + out2.bytes);
    EXPECT_GE(pe.peak_bytes, pe.live_peak_bytes);
  }
}

// A PE holds whole elements: a convolution's 10 weights of 2 bytes (8 and a bias of 2) under
// OUTP=2,INPP=2 are 2.5 elements per node, spread evenly (layer_shares, the PE model's SRAM
// traffic: 5 bytes), but 3 held (6 bytes), in the memory plan and the SRAM check alike.
TEST(MemoryPlan, AWeightsShareIsWholeElementsAsTheSramCheckCountsIt) {
  const opt::Graph g = opt::parse_network_yaml(
      "name: odd\nelem_bytes: 2\ninput: [1, 4, 8, 8]\n"
      "layers:\n  - {name: conv, op: conv, out: 2, kernel: 1}\n",
      "odd.yaml");
  const opt::Workload w = opt::build_workload(g);
  ASSERT_EQ(w.layers.size(), 1u);
  const opt::Layer& conv = w.layers[0];
  ASSERT_EQ(conv.weight_bytes, 20);
  const opt::Choice c = opt::parse_choice("OUTP=2,INPP=2", "test");
  EXPECT_EQ(opt::layer_shares(conv, c).weights, 5.0);
  const opt::LayerShares held = opt::held_shares(conv, c);
  EXPECT_EQ(held.weights, 6.0);
  EXPECT_EQ(held.input, 256.0);   // 4 channels of 8x8 in two halves, INPP's
  EXPECT_EQ(held.output, 128.0);  // 2 channels of 8x8, one per OUTP node
  EXPECT_EQ(opt::held_input_share(conv, 0, c), 256);
  EXPECT_EQ(opt::layer_memory_bytes(conv, c), 6 + 256 + 128);
  const Lowered low = lower_plan(w, plan_2x2(w, {"OUTP=2,INPP=2"}), mesh2x2(), ExecMode::Dataflow);
  const std::vector<PeMemoryPlan> memory = plan_memory(low, w);
  ASSERT_EQ(memory.size(), 4u);
  for (const PeMemoryPlan& pe : memory) {
    std::int64_t held_at_compute = 0;
    for (const Buffer& b : pe.buffers) {
      if (b.kind == BufferKind::Weights) {
        EXPECT_EQ(b.bytes, 6);
      }
      if (b.kind == BufferKind::Weights || b.kind == BufferKind::Input ||
          b.kind == BufferKind::Output)
        held_at_compute += b.bytes;
    }
    EXPECT_EQ(held_at_compute, opt::layer_memory_bytes(conv, c));
  }
}

TEST(Lowering, EachSourceSendsInSnakeOrderStartingWithItsSuccessor) {
  // conv1 OUTP=4 -> conv2 OFMP_H=4: every PE sends its channels of each row block to the 3
  // others. The lowering orders each source's sends by distance along the snake (the ring the
  // PEs form on the mesh, opt::snake_pe), nearest successor first.
  const TwoConv t({"OUTP=4", "OFMP_H=4"});
  const int pes = 4;
  const opt::PeGrid grid{true, 2, 2};
  std::vector<int> snake(pes), pos(pes);
  for (int i = 0; i < pes; ++i) {
    snake[i] = opt::snake_pe(grid, i);
    pos[snake[i]] = i;
  }
  ASSERT_EQ(t.low.edges.size(), 1u);
  for (int pe = 0; pe < pes; ++pe) {
    std::vector<int> sent;
    for (const Step& s : t.low.programs.pe[static_cast<std::size_t>(pe)])
      if (s.kind == StepKind::Send && s.edge == 0) sent.push_back(s.peer);
    ASSERT_EQ(sent.size(), static_cast<std::size_t>(pes - 1))
        << "PE " << pe << " sends to all others";
    std::vector<int> expected;  // PE 0 on the 2x2 snake 0, 1, 3, 2: to 1, 3, 2
    for (int k = 1; k < pes; ++k) expected.push_back(snake[(pos[pe] + k) % pes]);
    EXPECT_EQ(sent, expected) << "PE " << pe;
  }
}

// Each PE's sends of edge 0 of tests/sim/data/two_conv.yaml on the 4x4 mesh under `choices`,
// in program order, and each PE's snake position.
struct Sends4x4 {
  opt::PeGrid grid{true, 4, 4};
  std::vector<int> snake_pos = std::vector<int>(16);
  std::vector<std::vector<int>> peers = std::vector<std::vector<int>>(16);
  opt::Graph graph = opt::load_network(kDir + "/tests/sim/data/two_conv.yaml");
  explicit Sends4x4(const std::vector<std::string>& choices) {
    const opt::Workload w = opt::build_workload(graph);
    const Lowered low = lower_plan(w, plan_on(grid, w, choices),
                                   load_hw_config(kDir + "/configs/hw/mesh4x4.yaml"),
                                   ExecMode::Dataflow);
    for (int i = 0; i < 16; ++i) snake_pos[opt::snake_pe(grid, i)] = i;
    for (int pe = 0; pe < 16; ++pe)
      for (const Step& s : low.programs.pe[static_cast<std::size_t>(pe)])
        if (s.kind == StepKind::Send && s.edge == 0) peers[pe].push_back(s.peer);
  }
  int ring_distance(int from, int to) const { return (snake_pos[to] - snake_pos[from] + 16) % 16; }
};

TEST(Lowering, GroupedAllGathersSendNearestFirst) {
  // OUTP=4,OFMP_H=4 on both sides of the 4x4 mesh: each row block's 4 OUTP peers (one per
  // mesh row, strided by 4 along the snake, zigzagging between columns c and 3 - c) gather its
  // channels, 4 groups at once. Each PE sends to its 3 peers fewest hops first, ties in ring
  // order (ring order alone would start PE 0 on PE 7, 4 hops away, before PE 8, 2 hops).
  const Sends4x4 grouped({"OUTP=4,OFMP_H=4", "OUTP=4,OFMP_H=4"});
  int reordered = 0;
  for (int pe = 0; pe < 16; ++pe) {
    const std::vector<int>& sent = grouped.peers[pe];
    ASSERT_EQ(sent.size(), 3u) << "PE " << pe;
    std::vector<int> expected = sent;
    std::sort(expected.begin(), expected.end(), [&](int a, int b) {
      return std::pair{grouped.grid.distance(pe, a), grouped.ring_distance(pe, a)} <
             std::pair{grouped.grid.distance(pe, b), grouped.ring_distance(pe, b)};
    });
    EXPECT_EQ(sent, expected) << "PE " << pe;
    std::vector<int> ring = sent;
    std::sort(ring.begin(), ring.end(), [&](int a, int b) {
      return grouped.ring_distance(pe, a) < grouped.ring_distance(pe, b);
    });
    reordered += sent != ring;
  }
  EXPECT_GT(reordered, 0);
  // One all-gather of every PE (OUTP=16 on both sides: each PE needs all channels): ring order,
  // a permutation at every step.
  const Sends4x4 whole({"OUTP=16", "OUTP=16"});
  for (int pe = 0; pe < 16; ++pe) {
    ASSERT_EQ(whole.peers[pe].size(), 15u) << "PE " << pe;
    for (std::size_t k = 0; k < 15; ++k)
      EXPECT_EQ(whole.ring_distance(pe, whole.peers[pe][k]), static_cast<int>(k) + 1)
          << "PE " << pe;
  }
}

TEST(MemoryPlan, AnInppRingAllReduceNeedsOneChunkAndKeepsTheOutputToTheEnd) {
  const TwoConv t({"INPP=4", "SINGLE"});
  const Lowered& low = t.low;
  const std::vector<PeMemoryPlan>& memory = t.memory;
  // conv1's 8 KiB of partial sums on every PE, reduced in 2 x 3 rounds of 2 KiB chunks.
  for (std::size_t p = 0; p < memory.size(); ++p) {
    const Program& prog = low.programs.pe[p];
    int first = -1, last = -1;
    for (int i = 0; i < static_cast<int>(prog.size()); ++i)
      if (prog[static_cast<std::size_t>(i)].edge == 1) {
        if (first < 0) first = i;
        last = i;
      }
    int chunks = 0;
    for (const Buffer& b : memory[p].buffers)
      if (b.kind == BufferKind::Chunk) {
        ++chunks;
        EXPECT_EQ(b.bytes, 2048);
        EXPECT_EQ(b.first, first);
        EXPECT_EQ(b.last, last);
      } else if (b.kind == BufferKind::Output && b.layer == 0) {
        EXPECT_EQ(b.bytes, 8192);
        EXPECT_GE(b.last, last);
      } else if (b.kind == BufferKind::Output && b.layer == 1) {
        EXPECT_EQ(b.last, static_cast<int>(prog.size()) - 1);  // the network's output
      }
    EXPECT_EQ(chunks, 1) << "PE " << p;
  }
}

// 7 rows in OFMP_H=2 are blocks of 3 and 4 rows: each INPP group reduces its own block (every
// group sent the first's 3-row chunks, and transfers.csv said otherwise).
TEST(MemoryPlan, InppGroupsOfUnevenBlocksEachReduceTheirOwn) {
  const opt::Graph g = opt::parse_network_yaml(
      "input: [1, 16, 7, 7]\nlayers:\n  - {op: conv, out: 16, kernel: 1}\n"
      "  - {op: conv, out: 16, kernel: 1}\n",
      "uneven.yaml");
  const opt::Workload w = opt::build_workload(g);
  const Lowered low =
      lower_plan(w, plan_2x2(w, {"OFMP_H=2,INPP=2", "SINGLE"}), mesh2x2(), ExecMode::Dataflow);
  // 16 x 3 x 7 and 16 x 4 x 7 floats, in chunks of half: 672 and 896 bytes, each member
  // sending 2 (f − 1) = 2 of them.
  std::multiset<std::int64_t> chunks;
  for (const PeMemoryPlan& pe : plan_memory(low, w))
    for (const Buffer& b : pe.buffers)
      if (b.kind == BufferKind::Chunk) chunks.insert(b.bytes);
  EXPECT_EQ(chunks, (std::multiset<std::int64_t>{672, 672, 896, 896}));
  std::int64_t sent = 0;
  const LoweredEdge* reduction = nullptr;
  for (const LoweredEdge& e : low.edges)
    if (e.reduction) reduction = &e;
  ASSERT_NE(reduction, nullptr);
  for (const Program& prog : low.programs.pe)
    for (const Step& s : prog)
      if (s.kind == StepKind::Send && s.edge == static_cast<int>(reduction - low.edges.data()))
        sent += s.bytes;
  EXPECT_EQ(sent, 2 * 2 * (672 + 896));
  EXPECT_EQ(reduction->bytes, sent);
}

TEST(MemoryPlan, AFusedInppLayerKeepsWhatItReadsUntilItsAllReduceEnds) {
  // conv1 (SINGLE, PE 0) -> conv2+add+relu (INPP=4): the tail adds conv1's block after the
  // all-reduce, so each member keeps it, received or (PE 0) its own, to its last reduction step.
  opt::Graph g = opt::load_network(kDir + "/tests/sim/data/conv_residual.yaml");
  opt::run_passes(g, "default");
  const opt::Workload w = opt::build_workload(g);
  const Lowered low =
      lower_plan(w, plan_2x2(w, {"SINGLE", "INPP=4"}), mesh2x2(), ExecMode::Dataflow);
  const std::vector<PeMemoryPlan> memory = plan_memory(low, w);
  for (std::size_t p = 0; p < memory.size(); ++p) {
    const Program& prog = low.programs.pe[p];
    int reduced = -1, kept = 0;
    for (int i = 0; i < static_cast<int>(prog.size()); ++i) {
      const Step& s = prog[static_cast<std::size_t>(i)];
      if (s.edge >= 0 && low.edges[static_cast<std::size_t>(s.edge)].reduction) reduced = i;
    }
    ASSERT_GT(reduced, 0) << "PE " << p;
    for (const Buffer& b : memory[p].buffers)
      if (b.kind == BufferKind::Received || (b.kind == BufferKind::Output && b.layer == 0)) {
        ++kept;
        EXPECT_EQ(b.last, reduced) << "PE " << p << ", " << to_string(b.kind);
      }
    EXPECT_GE(kept, 1) << "PE " << p;
  }
}

// A training step: the weight gradient of the first convolution reads the network input X, so
// X stays until it has computed; an update writes the new weights over the old ones, in place:
// it holds its weights (and state) at its step and no output buffer.
TEST(MemoryPlan, ATrainingStepKeepsTheInputForItsWeightGradientAndWritesUpdatesBack) {
  const HwSpec hw = mesh2x2();
  const opt::Graph g = prepare_network("zoo:vgg5", 1, hw, "default", "sgd");
  const opt::Workload w = opt::build_workload(g);
  const Lowered low =
      lower_plan(w, solve_plan(g, hw_desc_of(hw), "dp", "paper").plan, hw, ExecMode::Dataflow);
  int wgrad = -1, updates = 0;
  for (std::size_t l = 0; l < w.layers.size(); ++l) {
    if (w.layers[l].name == "conv1.wgrad") wgrad = static_cast<int>(l);
    updates += g.node(w.layers[l].id).kind == opt::OpKind::WeightUpdate;
  }
  ASSERT_GE(wgrad, 0);
  ASSERT_EQ(updates, 5);
  int checked = 0, update_outputs = 0, update_weights = 0;
  const std::vector<PeMemoryPlan> memory = plan_memory(low, w);
  for (std::size_t p = 0; p < memory.size(); ++p) {
    const Program& prog = low.programs.pe[p];
    for (int i = 0; i < static_cast<int>(prog.size()); ++i) {
      const Step& s = prog[static_cast<std::size_t>(i)];
      if (s.kind != StepKind::Compute || s.layer != wgrad) continue;
      ++checked;
      EXPECT_TRUE(std::any_of(memory[p].buffers.begin(), memory[p].buffers.end(), [&](const Buffer& b) {
        return b.kind == BufferKind::Input && b.first == 0 && b.last >= i;
      })) << "PE " << p << " step " << i;
    }
    for (const Buffer& b : memory[p].buffers) {
      if (g.node(w.layers[static_cast<std::size_t>(b.layer)].id).kind != opt::OpKind::WeightUpdate)
        continue;
      update_outputs += b.kind == BufferKind::Output;
      if (b.kind != BufferKind::Weights) continue;
      ++update_weights;
      EXPECT_EQ(b.first, b.last) << "PE " << p << " " << w.layers[static_cast<std::size_t>(b.layer)].name;
    }
  }
  EXPECT_GT(checked, 0);
  EXPECT_EQ(update_outputs, 0);
  EXPECT_GT(update_weights, 0);
  // The SRAM check counts the same: an update's weights and input (its gradient), not its output.
  for (std::size_t l = 0; l < w.layers.size(); ++l) {
    if (!w.layers[l].weights_like_output) continue;
    const opt::Choice& c = low.layers[l].choice;
    const opt::LayerShares shares = opt::layer_shares(w.layers[l], c);
    EXPECT_GT(shares.output, 0) << w.layers[l].name;
    EXPECT_DOUBLE_EQ(opt::layer_memory_bytes(w.layers[l], c), shares.weights + shares.input)
        << w.layers[l].name;
    EXPECT_DOUBLE_EQ(opt::activation_share(w.layers[l], shares), shares.input) << w.layers[l].name;
  }
}

TEST(MemoryPlan, NoTwoLiveBuffersShareAnAddressOnResnet18) {
  const HwSpec hw = load_hw_config(kDir + "/configs/hw/mesh4x4.yaml", {});
  const opt::Graph g = prepare_network("zoo:resnet18", 1, hw, "default");
  const opt::Workload w = opt::build_workload(g);
  const opt::Plan plan = solve_plan(g, hw_desc_of(hw), "dp", "paper").plan;
  for (ExecMode mode : {ExecMode::Dataflow, ExecMode::Barrier}) {
    const Lowered low = lower_plan(w, plan, hw, mode);
    const std::vector<PeMemoryPlan> memory = plan_memory(low, w);
    for (std::size_t p = 0; p < memory.size(); ++p) {
      const PeMemoryPlan& pe = memory[p];
      std::int64_t received = 0, program_received = 0;
      for (const Buffer& b : pe.buffers)
        if (b.kind == BufferKind::Received) received += b.bytes;
      for (const Step& s : low.programs.pe[p])
        if (s.kind == StepKind::Recv && !low.edges[static_cast<std::size_t>(s.edge)].reduction)
          program_received += s.bytes;
      EXPECT_EQ(received, program_received) << "PE " << p;
      EXPECT_LE(pe.live_peak_bytes, pe.peak_bytes) << "PE " << p;
      EXPECT_LE(pe.peak_bytes, pe.no_reuse_bytes) << "PE " << p;
      // Every step finds the buffers it uses live: a compute its weights (when it has any),
      // its output, what it received and its producers' blocks on this PE (read in place); a
      // send its layer's output; a receive its buffer; a reduction step its layer's output and,
      // receiving, its chunk.
      auto live = [&](BufferKind kind, int layer, int edge, int step) {
        return std::any_of(pe.buffers.begin(), pe.buffers.end(), [&](const Buffer& b) {
          return b.kind == kind && b.layer == layer && (edge < 0 || b.edge == edge) &&
                 b.first <= step && step <= b.last;
        });
      };
      const Program& prog = low.programs.pe[p];
      std::vector<bool> computes(w.layers.size(), false);
      for (const Step& s : prog) {
        if (s.kind == StepKind::Compute) computes[static_cast<std::size_t>(s.layer)] = true;
      }
      for (int i = 0; i < static_cast<int>(prog.size()); ++i) {
        const Step& s = prog[static_cast<std::size_t>(i)];
        const std::string at = "PE " + std::to_string(p) + " step " + std::to_string(i);
        const bool reduction = s.edge >= 0 && low.edges[static_cast<std::size_t>(s.edge)].reduction;
        if (s.kind == StepKind::Compute) {
          EXPECT_TRUE(live(BufferKind::Output, s.layer, -1, i)) << at;
          if (w.layers[static_cast<std::size_t>(s.layer)].weight_bytes > 0) {
            EXPECT_TRUE(live(BufferKind::Weights, s.layer, -1, i)) << at;
          }
          for (const Buffer& b : pe.buffers) {
            if (b.kind == BufferKind::Received && b.layer == s.layer) {
              EXPECT_TRUE(b.first <= i && i <= b.last) << at;
            }
          }
          for (const LoweredEdge& e : low.edges) {
            if (!e.reduction && e.dst_layer == s.layer &&
                computes[static_cast<std::size_t>(e.src_layer)]) {
              EXPECT_TRUE(live(BufferKind::Output, e.src_layer, -1, i)) << at;
            }
          }
        } else if (reduction) {
          EXPECT_TRUE(live(BufferKind::Output, s.layer, -1, i)) << at;
          if (s.kind == StepKind::Recv) {
            EXPECT_TRUE(live(BufferKind::Chunk, s.layer, s.edge, i)) << at;
          }
        } else if (s.kind == StepKind::Send) {
          EXPECT_TRUE(live(BufferKind::Output, s.layer, -1, i)) << at;
        } else if (s.kind == StepKind::Recv) {
          EXPECT_TRUE(live(BufferKind::Received, s.layer, s.edge, i)) << at;
        }
      }
      for (std::size_t i = 0; i < pe.buffers.size(); ++i)
        for (std::size_t j = i + 1; j < pe.buffers.size(); ++j) {
          const Buffer &a = pe.buffers[i], &b = pe.buffers[j];
          const bool together = a.first <= b.last && b.first <= a.last;
          const bool apart = a.offset + a.bytes <= b.offset || b.offset + b.bytes <= a.offset;
          ASSERT_TRUE(!together || apart) << "PE " << p << ": buffers " << i << " and " << j;
        }
    }
  }
}

}  // namespace
}  // namespace nocflow::sim
