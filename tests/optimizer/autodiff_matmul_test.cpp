// SPDX-License-Identifier: MIT
// Autodiff of MatMul: a weight shared by every row (rank 2, or ones on its batch axes), its
// gradient's shape, and what a training graph holds of it.
#include <gtest/gtest.h>

#include "optimizer/frontend/network_yaml.h"
#include "optimizer/graph/op_cost.h"
#include "optimizer/passes/autodiff.h"

namespace nocflow::optimizer {
namespace {

// X [2, 8, 16] · W [16, 4] with W a trainable constant (a projection written as matmul): dX =
// dY · Wᵀ, and dW = Xᵀ · dY over the 16 rows flattened, each the forward MACs, shaped like W.
TEST(Autodiff, AMatMulWithASharedWeightGetsItsGradientOverEveryRow) {
  const Graph g = parse_network_yaml(
      "name: proj\ninputs:\n  x: [2, 8, 16]\nlayers:\n"
      "  - {name: h, op: fc, inputs: [x], out: 16}\n"
      "  - {name: w, op: constant, shape: [16, 4], trainable: true}\n"
      "  - {name: y, op: matmul, inputs: [h, w]}\n",
      "proj.yaml");
  const Graph t = training_graph(g);
  const std::int64_t forward = op_cost(g, *g.find("y")).macs;
  EXPECT_EQ(forward, 2 * 8 * 16 * 4);
  EXPECT_EQ(t.node(*t.find("y.wgrad")).output.shape, (Shape{16, 4}));
  EXPECT_EQ(op_cost(t, *t.find("y.wgrad")).macs, forward);
  EXPECT_EQ(t.node(*t.find("y.grad")).output.shape, (Shape{2, 8, 16}));
  EXPECT_EQ(op_cost(t, *t.find("y.grad")).macs, forward);
  EXPECT_EQ(t.input(*t.find("w.update"), 0), *t.find("y.wgrad"));
  EXPECT_EQ(t.node(*t.find("w.update")).attrs.params, 16 * 4);
  // The weights held: the forward ones once, and every input gradient's and update's copy, here
  // W's transpose for dX as a Conv's or Gemm's input gradient holds theirs: what each layer
  // holds, summed (it left W's transpose out).
  std::int64_t held = 0;
  for (NodeId id : t.node_ids())
    if (is_layer(t.node(id))) held += op_cost(t, id).weight_bytes;
  EXPECT_EQ(graph_totals(t).weight_bytes, held);
  // A weight two forward layers read counts once for them (its input gradients' copies each).
  const Graph shared = training_graph(
      parse_network_yaml("name: twice\ninputs:\n  x: [2, 8, 16]\nlayers:\n"
                         "  - {name: h, op: fc, inputs: [x], out: 16}\n"
                         "  - {name: w, op: constant, shape: [16, 16], trainable: true}\n"
                         "  - {name: y1, op: matmul, inputs: [h, w]}\n"
                         "  - {name: y2, op: matmul, inputs: [y1, w]}\n",
                         "twice.yaml"));
  std::int64_t each = 0;
  for (NodeId id : shared.node_ids())
    if (is_layer(shared.node(id))) each += op_cost(shared, id).weight_bytes;
  EXPECT_EQ(graph_totals(shared).weight_bytes, each - 16 * 16 * 4);
}

// A weight of the operand's rank with ones on its batch axes, [1, 16, 4], is shared by the
// batch as a rank-2 one: its gradient sums over the rows and takes its shape back (it was
// [2, 16, 4], twice the bytes, into an update holding 64 parameters).
TEST(Autodiff, AMatMulWeightBroadcastOverTheBatchGetsItsOwnShapeOfGradient) {
  const Graph g = parse_network_yaml(
      "name: proj\ninputs:\n  x: [2, 8, 16]\nlayers:\n"
      "  - {name: h, op: fc, inputs: [x], out: 16}\n"
      "  - {name: w, op: constant, shape: [1, 16, 4], trainable: true}\n"
      "  - {name: y, op: matmul, inputs: [h, w]}\n",
      "proj.yaml");
  const Graph t = training_graph(g);
  const NodeId update = *t.find("w.update");
  EXPECT_EQ(t.node(t.input(update, 0)).output.shape, (Shape{1, 16, 4}));
  EXPECT_EQ(t.node(update).output.shape, (Shape{1, 16, 4}));
  EXPECT_EQ(t.node(update).attrs.params, 16 * 4);
  EXPECT_EQ(op_cost(t, *t.find("y.wgrad")).macs, op_cost(g, *g.find("y")).macs);
  EXPECT_EQ(t.node(*t.find("y.grad")).output.shape, (Shape{2, 8, 16}));
}

}  // namespace
}  // namespace nocflow::optimizer
