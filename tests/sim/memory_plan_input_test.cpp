// SPDX-License-Identifier: MIT
// A network input's buffer in the static memory plan (sim/lower/memory_plan.h): one per PE,
// holding what its readers there read of it, halos included, each element once.
#include <gtest/gtest.h>

#include <algorithm>

#include "optimizer/cost/cost_model.h"
#include "optimizer/frontend/load_network.h"
#include "optimizer/frontend/network_yaml.h"
#include "sim/lower/lowering.h"
#include "sim/lower/memory_plan.h"
#include "sim/lower/workload_setup.h"
#include "tests/sim/memory_plan_util.h"

namespace nocflow::sim {
namespace {

/// The PE's buffer of a network input (null without one).
const Buffer* input_buffer(const PeMemoryPlan& pe) {
  for (const Buffer& b : pe.buffers)
    if (b.kind == BufferKind::Input) return &b;
  return nullptr;
}

TEST(MemoryPlan, ANetworkInputBufferHoldsTheHaloItsFirstConvolutionReads) {
  // two_conv3x3.yaml (16 channels of 8x8, 3x3 convolutions, pad 1) under OFMP_H=2,OFMP_W=2 on
  // 2x2: each PE computes a 4x4 quarter and reads 5x5 of the input, its quarter and the row and
  // column beside it (the others are padding). No message brings that halo: the input buffer
  // holds it, 5 x 5 x 16 elements of 2 bytes, where conv1's share alone is 4 x 4 x 16.
  const opt::Graph g = opt::load_network(kDir + "/tests/sim/data/two_conv3x3.yaml");
  const opt::Workload w = opt::build_workload(g);
  const Lowered low = lower_plan(w, plan_2x2(w, {"OFMP_H=2,OFMP_W=2", "OFMP_H=2,OFMP_W=2"}),
                                 mesh2x2(), ExecMode::Dataflow);
  const opt::Choice c = opt::parse_choice("OFMP_H=2,OFMP_W=2", "test");
  ASSERT_EQ(opt::held_input_share(w.layers[0], 0, c), 4 * 4 * 16 * 2);
  const std::vector<PeMemoryPlan> memory = plan_memory(low, w);
  ASSERT_EQ(memory.size(), 4u);
  for (std::size_t p = 0; p < memory.size(); ++p) {
    const auto& bufs = memory[p].buffers;
    const Buffer* input = input_buffer(memory[p]);
    ASSERT_NE(input, nullptr) << "PE " << p;
    EXPECT_EQ(input->bytes, 5 * 5 * 16 * 2) << "PE " << p;
    // conv2's halo comes in messages, into its received buffer: 4 + 4 + 1 elements per channel.
    const auto got = std::find_if(bufs.begin(), bufs.end(),
                                  [](const Buffer& b) { return b.kind == BufferKind::Received; });
    ASSERT_NE(got, bufs.end()) << "PE " << p;
    EXPECT_EQ(got->bytes, (4 + 4 + 1) * 16 * 2) << "PE " << p;
  }
  // Under OFMP_W=4 each node computes 2 of the 8 columns and reads 3 (the first and last
  // nodes) or 4 of them, on whichever PE the placement puts it.
  const Lowered strips =
      lower_plan(w, plan_2x2(w, {"OFMP_W=4", "OFMP_W=4"}), mesh2x2(), ExecMode::Dataflow);
  const std::vector<PeMemoryPlan> strip_memory = plan_memory(strips, w);
  const std::vector<int>& pes = strips.layers[0].placement.pe;
  ASSERT_EQ(pes.size(), 4u);
  ASSERT_NE(pes[2], 2) << "the test's premise: a node placed on a PE of another number";
  for (int node = 0; node < 4; ++node) {
    const Buffer* input =
        input_buffer(strip_memory[static_cast<std::size_t>(pes[static_cast<std::size_t>(node)])]);
    ASSERT_NE(input, nullptr) << "node " << node;
    const int columns = 2 + (node > 0) + (node < 3);
    EXPECT_EQ(input->bytes, 8 * columns * 16 * 2) << "node " << node;
  }
}

TEST(MemoryPlan, ANetworkInputReadByTwoLayersIsOneBuffer) {
  const HwSpec hw = mesh2x2();
  const opt::Graph g =
      prepare_network(kDir + "/configs/networks/residual_block.yaml", 1, hw, "default");
  const opt::Workload w = opt::build_workload(g);
  const Lowered low =
      lower_plan(w, solve_plan(g, hw_desc_of(hw), "dp", "paper").plan, hw, ExecMode::Dataflow);
  std::vector<bool> fed(w.layers.size(), false);  // conv1 and proj are not: both read x
  for (const opt::LayerEdge& e : w.edges) fed[static_cast<std::size_t>(e.dst)] = true;
  ASSERT_EQ(std::count(fed.begin(), fed.end(), false), 2);
  for (const PeMemoryPlan& pe : plan_memory(low, w))
    EXPECT_LE(std::count_if(pe.buffers.begin(), pe.buffers.end(),
                            [](const Buffer& b) { return b.kind == BufferKind::Input; }),
              1);
}

// x · x: a block of the product reads its rows of the first operand and its columns of the
// second, two parts of one input that overlap; the buffer holds their union. [1, 8, 8] under
// OUTP=2,OFMP_H=2 on 2x2: 4 rows by 4 columns each, reading x's 4 rows (4 x 8) and 4 columns
// (8 x 4), which share a 4 x 4 corner: 32 + 32 − 16 elements of 4 bytes (the larger part alone
// gave 128 B, their sum 256).
TEST(MemoryPlan, ANetworkInputReadInTwoPartsHoldsTheirUnion) {
  const opt::Graph g = opt::parse_network_yaml(
      "inputs:\n  x: [1, 8, 8]\nlayers:\n  - {name: xx, op: matmul, inputs: [x, x]}\n", "xx.yaml");
  const opt::Workload w = opt::build_workload(g);
  const Lowered low =
      lower_plan(w, plan_2x2(w, {"OUTP=2,OFMP_H=2"}), mesh2x2(), ExecMode::Dataflow);
  const std::vector<PeMemoryPlan> memory = plan_memory(low, w);
  ASSERT_EQ(memory.size(), 4u);
  for (std::size_t p = 0; p < memory.size(); ++p) {
    const Buffer* input = input_buffer(memory[p]);
    ASSERT_NE(input, nullptr) << "PE " << p;
    EXPECT_EQ(input->bytes, (32 + 32 - 16) * 4) << "PE " << p;
  }
}

}  // namespace
}  // namespace nocflow::sim
