// SPDX-License-Identifier: MIT
// Input regions of tensors beyond rank 4 (box.h, view4: the leading axes flattened into N, the
// last three as C, H, W) against a brute force (region_brute_force.h): Slice and its gradient,
// Concat, broadcasting element-wise operators.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/optimizer/region_brute_force.h"

namespace nocflow::optimizer {
namespace {

using namespace region_check;

// ---- Slice (ONNX) and its gradient ----

/// x of `shape` sliced along `axis` (as ONNX writes it) from `start` to `end` by `step`.
Graph slice_graph(const Shape& shape, std::int64_t axis, std::int64_t start, std::int64_t end,
                  std::int64_t step, const std::string& file) {
  Model m(shape);
  m.int64s("starts", {start});
  m.int64s("ends", {end});
  m.int64s("axes", {axis});
  m.int64s("steps", {step});
  m.node("Slice", {"x", "starts", "ends", "axes", "steps"}, "y", "slice");
  return m.load(file);
}

Reads slice_reads(std::size_t axis, std::int64_t offset, std::int64_t step) {
  return [=](Index o, Range) {
    o[axis] = offset + o[axis] * step;
    return std::vector<Index>{o};
  };
}

TEST(Rank5Region, ASliceOnALeadAxisWithAStepReadsItsRows) {
  const Graph g = slice_graph({2, 7, 2, 3, 4}, 1, 1, 7, 2, "r5_slice_lead.onnx");
  EXPECT_EQ(dims_of(g, "slice"), "BATCH,OUTP,OFMP_H,OFMP_W");
  EXPECT_GT(check_regions(g, "slice", 0, 1, slice_reads(1, 1, 2)), 0);
}

TEST(Rank5Region, ASliceOnTheFirstAxisWithAStepReadsItsRows) {
  const Graph g = slice_graph({5, 2, 2, 3, 4}, 0, 1, 5, 3, "r5_slice_first.onnx");
  EXPECT_GT(check_regions(g, "slice", 0, 1, slice_reads(0, 1, 3)), 0);
}

TEST(Rank5Region, ASliceOnOneOfTheLastThreeAxesWithAStepReadsItsRows) {
  const Graph g = slice_graph({2, 3, 2, 7, 4}, -2, 1, 6, 2, "r5_slice_h.onnx");
  EXPECT_GT(check_regions(g, "slice", 0, 1, slice_reads(3, 1, 2)), 0);
  const Graph c = slice_graph({2, 3, 5, 3, 4}, 2, 1, 5, 3, "r5_slice_c.onnx");
  EXPECT_GT(check_regions(c, "slice", 0, 1, slice_reads(2, 1, 3)), 0);
}

TEST(Rank5Region, ARank6SliceOnAMiddleLeadAxisReadsItsRows) {
  const Graph g = slice_graph({2, 5, 3, 2, 3, 2}, 1, 0, 5, 2, "r6_slice_lead.onnx");
  EXPECT_GT(check_regions(g, "slice", 0, 1, slice_reads(1, 0, 2)), 0);
  const Graph h = slice_graph({2, 2, 5, 2, 3, 2}, -4, 1, 5, 2, "r6_slice_lead2.onnx");
  EXPECT_GT(check_regions(h, "slice", 0, 1, slice_reads(2, 1, 2)), 0);
}

/// dX of a Slice of `x` along `axis` (negative allowed) at `offset` by `step`, from dY.
Graph slice_grad_graph(const Shape& x, std::int64_t axis, std::int64_t offset, std::int64_t step) {
  Shape dy = x;
  const auto k =
      static_cast<std::size_t>(axis < 0 ? axis + static_cast<std::int64_t>(x.size()) : axis);
  dy[k] = (x[k] - offset + step - 1) / step;
  Graph g("slice_grad");
  const NodeId d = add_dy(g, dy);
  OpAttrs a;
  a.grad_of = OpKind::Slice;
  a.axis = axis;
  a.offset = offset;
  a.step = step;
  a.shape = x;
  g.add_node(Node{"dx", OpKind::Grad, a, {}}, {d});
  infer_shapes(g);
  return g;
}

/// dX element `o` holds dY's row (o − offset) / step along the axis when it was taken, else 0.
Reads slice_grad_reads(std::size_t axis, std::int64_t offset, std::int64_t step) {
  return [=](Index o, Range) {
    const std::int64_t d = o[axis] - offset;
    if (d < 0 || d % step != 0) return std::vector<Index>{};
    o[axis] = d / step;
    return std::vector<Index>{o};
  };
}

TEST(Rank5Region, ASlicesGradientReadsTheRowsOfItsBlock) {
  EXPECT_GT(check_regions(slice_grad_graph({2, 7, 2, 3, 4}, 1, 1, 2), "dx", 0, 1,
                          slice_grad_reads(1, 1, 2)),
            0);
  EXPECT_GT(check_regions(slice_grad_graph({3, 2, 2, 3, 4}, 0, 1, 1), "dx", 0, 1,
                          slice_grad_reads(0, 1, 1)),
            0);
  EXPECT_GT(check_regions(slice_grad_graph({2, 3, 2, 7, 4}, -2, 2, 3), "dx", 0, 1,
                          slice_grad_reads(3, 2, 3)),
            0);
  EXPECT_GT(check_regions(slice_grad_graph({2, 5, 3, 2, 3, 2}, -5, 1, 2), "dx", 0, 1,
                          slice_grad_reads(1, 1, 2)),
            0);
}

// ---- Concat ----

/// x and z of `xs` and `zs` concatenated along `axis`.
Graph concat_graph(const Shape& xs, const Shape& zs, std::int64_t axis, const std::string& file) {
  Model m(xs);
  add_input(m, "z", zs);
  Model::int1(m.node("Concat", {"x", "z"}, "y", "concat"), "axis", axis);
  return m.load(file);
}

/// Input `input` of a Concat of inputs of `sizes` along `axis`.
Reads concat_reads(std::size_t axis, const std::vector<std::int64_t>& sizes, int input) {
  std::int64_t offset = 0;
  for (int i = 0; i < input; ++i) offset += sizes[static_cast<std::size_t>(i)];
  const std::int64_t size = sizes[static_cast<std::size_t>(input)];
  return [=](Index o, Range) {
    if (o[axis] < offset || o[axis] >= offset + size) return std::vector<Index>{};
    o[axis] -= offset;
    return std::vector<Index>{o};
  };
}

void check_concat(const Shape& xs, const Shape& zs, std::int64_t axis, const std::string& file) {
  const Graph g = concat_graph(xs, zs, axis, file);
  const auto k =
      static_cast<std::size_t>(axis < 0 ? axis + static_cast<std::int64_t>(xs.size()) : axis);
  for (int input = 0; input < 2; ++input)
    EXPECT_GT(check_regions(g, "concat", input, 1, concat_reads(k, {xs[k], zs[k]}, input)), 0)
        << file;
}

TEST(Rank5Region, AConcatOnTheFirstAxisReadsEachInputsRows) {
  check_concat({2, 3, 2, 3, 4}, {1, 3, 2, 3, 4}, 0, "r5_concat_0.onnx");
  check_concat({2, 2, 3, 2, 3, 2}, {1, 2, 3, 2, 3, 2}, 0, "r6_concat_0.onnx");
}

TEST(Rank5Region, AConcatOnAMiddleLeadAxisReadsEachInputsRows) {
  check_concat({2, 3, 2, 3, 4}, {2, 2, 2, 3, 4}, 1, "r5_concat_1.onnx");
  check_concat({2, 2, 3, 2, 3, 2}, {2, 2, 1, 2, 3, 2}, 2, "r6_concat_2.onnx");
  check_concat({2, 2, 3, 2, 3, 2}, {2, 3, 3, 2, 3, 2}, -5, "r6_concat_neg.onnx");
}

TEST(Rank5Region, AConcatOnOneOfTheLastThreeAxesReadsEachInputsRows) {
  check_concat({2, 3, 2, 3, 4}, {2, 3, 2, 2, 4}, -2, "r5_concat_h.onnx");
  check_concat({2, 3, 2, 3, 4}, {2, 3, 1, 3, 4}, 2, "r5_concat_c.onnx");
  check_concat({2, 2, 3, 2, 3, 2}, {2, 2, 3, 2, 3, 3}, 5, "r6_concat_w.onnx");
}

// ---- Broadcasting elementwise ----

/// x of `xs` plus z of `zs` (a second input), both read through broadcasting.
void check_add(const Shape& xs, const Shape& zs, const std::string& file) {
  Model m(xs);
  add_input(m, "z", zs);
  m.node("Add", {"x", "z"}, "y", "add");
  const Graph g = m.load(file);
  const Shape& out = g.node(*g.find("add")).output.shape;
  for (int input = 0; input < 2; ++input) {
    const Shape in = input == 0 ? xs : zs;
    EXPECT_GT(check_regions(g, "add", input, 1,
                            [&](const Index& o, Range) { return broadcast_reads(o, in, out); }),
              0)
        << file;
  }
}

TEST(Rank5Region, AnAddReadsItsOperandsThroughBroadcasting) {
  check_add({2, 3, 2, 3, 4}, {2, 3, 2, 3, 4}, "r5_add_same.onnx");
  check_add({2, 3, 2, 3, 4}, {2, 1, 2, 1, 4}, "r5_add_lead1.onnx");  // a lead axis of 1
  check_add({2, 3, 2, 3, 4}, {1, 3, 2, 3, 1}, "r5_add_first1.onnx");
  check_add({1, 3, 2, 3, 4}, {2, 1, 2, 3, 4}, "r5_add_both.onnx");  // each broadcasts one
  check_add({2, 2, 3, 2, 3, 2}, {3, 1, 3, 2}, "r6_add_rank4.onnx");
  check_add({2, 2, 3, 2, 3, 2}, {2, 1, 2, 3, 2}, "r6_add_rank5.onnx");
}

TEST(Rank5Region, AnAddOfALowerRankOperandReadsItsAxesAlignedOnTheRight) {
  // The operand's view puts its own axes on N, C, H: they are not the output's N, C, H even
  // where their sizes agree ([6, 2, 4]'s N is 6 as the output's windows, but holds its C).
  check_add({2, 3, 6, 2, 4}, {6, 2, 4}, "r5_add_rank3.onnx");
  check_add({1, 2, 4, 2, 4}, {2, 4}, "r5_add_rank2.onnx");
  check_add({1, 2, 3, 2, 4}, {4}, "r5_add_rank1.onnx");
  check_add({2, 3, 2, 3, 3}, {3, 3}, "r5_add_rank2_c.onnx");
}

// dY of `dy_shape` summed into the gradient of an operand of `operand` (broadcast to dY).
TEST(Rank5Region, AnAddsGradientSumsTheBroadcastAxesOfItsOutputGradient) {
  for (const auto& [dy_shape, operand] :
       std::vector<std::pair<Shape, Shape>>{{{2, 3, 2, 3, 4}, {2, 1, 2, 3, 4}},
                                            {{2, 3, 6, 2, 4}, {6, 2, 4}},
                                            {{1, 2, 4, 2, 4}, {2, 4}},
                                            {{2, 2, 3, 2, 3, 2}, {2, 3, 2, 3, 2}}}) {
    Graph g("add_grad");
    const NodeId d = add_dy(g, dy_shape);
    OpAttrs a;
    a.grad_of = OpKind::Add;
    a.grad_input = 1;
    a.shape = operand;
    g.add_node(Node{"da", OpKind::Grad, a, {}}, {d});
    infer_shapes(g);
    const Shape dy = dy_shape, out = operand;
    EXPECT_GT(check_regions(g, "da", 0, 1,
                            [&](const Index& o, Range) { return broadcast_reads(o, dy, out); }),
              0)
        << shape_str(dy_shape) << " into " << shape_str(operand);
  }
}

}  // namespace
}  // namespace nocflow::optimizer
