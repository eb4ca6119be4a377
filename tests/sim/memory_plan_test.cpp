// SPDX-License-Identifier: MIT
// Static memory planning of lowered plans (sim/lower/memory_plan.h): packing by hand, the
// buffers of a two-layer plan by hand, and the plan's invariants on resnet18 in both modes.
#include "sim/lower/memory_plan.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "optimizer/frontend/load_network.h"
#include "optimizer/partition/placement.h"
#include "sim/config/hw_loader.h"
#include "sim/lower/lowering.h"
#include "sim/lower/workload_setup.h"

namespace nocflow::sim {
namespace {

namespace opt = optimizer;
const std::string kDir = std::string(NOCFLOW_SOURCE_DIR);

TEST(MemoryPlan, PackingReusesTheMemoryOfBuffersThatAreNotLiveTogether) {
  PeMemoryPlan plan;
  plan.buffers = {{BufferKind::Output, 0, -1, 100, 0, 2},   // A
                  {BufferKind::Received, 1, 0, 60, 1, 3},   // B, live with A and C
                  {BufferKind::Output, 1, -1, 50, 3, 5},    // C, live with B and D
                  {BufferKind::Weights, 2, -1, 40, 4, 4}};  // D, live with C
  pack(plan);
  // By decreasing size, lowest free offset: A at 0, B above A, C below B (A is gone by step
  // 3), D above C (B is gone by step 4).
  EXPECT_EQ(plan.buffers[0].offset, 0);
  EXPECT_EQ(plan.buffers[1].offset, 100);
  EXPECT_EQ(plan.buffers[2].offset, 0);
  EXPECT_EQ(plan.buffers[3].offset, 50);
  EXPECT_EQ(plan.peak_bytes, 160);
  EXPECT_EQ(plan.live_peak_bytes, 160);  // steps 1-2: A and B
  EXPECT_EQ(plan.no_reuse_bytes, 250);
}

HwSpec mesh2x2() {
  return load_hw_config(kDir + "/configs/hw/mesh4x4.yaml", {"topology.rows=2", "topology.cols=2"});
}

TEST(MemoryPlan, AnOutpPairHoldsItsBlockUntilTheConsumerHasComputed) {
  const opt::Graph g = opt::load_network(kDir + "/tests/sim/data/two_conv.yaml");
  const opt::Workload w = opt::build_workload(g);
  opt::Plan plan;
  plan.pes = 4;
  plan.topology = "mesh 2x2";
  for (const opt::Layer& l : w.layers) {
    const opt::Choice c = opt::parse_choice("OUTP=4", "test");
    plan.layers.push_back({l.name, l.op, c, opt::place(c, opt::PeGrid{true, 2, 2}).pe, 0, 0});
  }
  const Lowered low = lower_plan(w, plan, mesh2x2(), ExecMode::Dataflow);
  const std::vector<PeMemoryPlan> memory = plan_memory(low, w);
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
    EXPECT_EQ(input.bytes, conv1.input_bytes);  // OUTP: every node reads the whole input
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
