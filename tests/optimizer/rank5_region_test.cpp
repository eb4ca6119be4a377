// SPDX-License-Identifier: MIT
// Input regions of tensors beyond rank 4 (box.h, view4: the leading axes flattened into N, the
// last three as C, H, W) against a brute force: for every split a layer offers (each legal
// dimension alone and each pair of them, by every divisor; INPP by every divisor of the
// reduction), each output block's region must hold every input element the block reads. The
// elements read are written out per operator here, from ONNX's semantics, not from region.cpp.
#include <gtest/gtest.h>

#include <exception>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "optimizer/graph/op_cost.h"
#include "optimizer/graph/shape_inference.h"
#include "optimizer/partition/choice.h"
#include "optimizer/partition/region.h"
#include "tests/optimizer/onnx_model.h"
#include "tests/optimizer/view_index.h"

namespace nocflow::optimizer {
namespace {


/// Every index with axis k in `ranges[k]`.
void for_each_index(const std::vector<Range>& ranges, const std::function<void(const Index&)>& f) {
  Index i(ranges.size());
  std::function<void(std::size_t)> walk = [&](std::size_t k) {
    if (k == ranges.size()) return f(i);
    for (i[k] = ranges[k].lo; i[k] < ranges[k].hi; ++i[k]) walk(k + 1);
  };
  walk(0);
}

std::string str(const Index& i) {
  std::ostringstream s;
  for (std::size_t k = 0; k < i.size(); ++k) s << (k ? "," : "[") << i[k];
  s << "]";
  return s.str();
}

std::string str(const Box& b) {
  std::ostringstream s;
  for (int a = 0; a < 4; ++a) s << (a ? " " : "") << "[" << b.r[a].lo << "," << b.r[a].hi << ")";
  return s.str();
}

/// The input elements output element `o` reads, for the reduction indices in `red`.
using Reads = std::function<std::vector<Index>(const Index& o, Range red)>;

/// The elements of an operand of shape `in` that output element `o` (of shape `out`) meets
/// under broadcasting, both ways: axes aligned on the right, an operand's axis of 1 read at 0,
/// and every row of an operand's axis that is 1 (or absent) in the output (a gradient's sum).
std::vector<Index> broadcast_reads(const Index& o, const Shape& in, const Shape& out) {
  const std::size_t rank = std::max(in.size(), out.size());
  std::vector<Range> r;
  for (std::size_t k = rank - in.size(); k < rank; ++k) {
    const std::int64_t d_in = in[k - (rank - in.size())];
    const bool in_out = k >= rank - out.size();
    const std::int64_t d_out = in_out ? out[k - (rank - out.size())] : 1;
    const std::int64_t at = in_out ? o[k - (rank - out.size())] : 0;
    if (d_in == d_out)
      r.push_back({at, at + 1});
    else if (d_in == 1)
      r.push_back({0, 1});
    else
      r.push_back({0, d_in});  // summed over
  }
  std::vector<Index> all;
  for_each_index(r, [&](const Index& i) { all.push_back(i); });
  return all;
}

/// `o` with axis `axis` over `rows` (a softmax's, a reduction's or a product's inner axis).
std::vector<Index> along(Index o, std::size_t axis, Range rows) {
  std::vector<Index> all;
  for (o[axis] = rows.lo; o[axis] < rows.hi; ++o[axis]) all.push_back(o);
  return all;
}

/// Checks the region of input `input` of node `name` for every block of every split, and
/// returns how many blocks it checked. `reduction`: the INPP extent (1: none).
int check_regions(const Graph& g, const std::string& name, int input, std::int64_t reduction,
                  const Reads& reads) {
  const NodeId id = *g.find(name);
  const Shape& out = g.node(id).output.shape;
  const Shape& in = g.node(g.input(id, input)).output.shape;
  const Dims4 o = view4(out);
  const PartDimSet legal = legal_part_dims(g, id);
  struct Split {
    PartDim dim;
    std::int64_t factor;
  };
  std::vector<Split> splits;
  for (PartDim d : kAllPartDims) {
    if (!legal.contains(d)) continue;
    const std::int64_t n = d == PartDim::Inpp ? reduction : o[static_cast<std::size_t>(d)];
    for (std::int64_t f : divisors(n))
      if (f > 1) splits.push_back({d, f});
  }
  int blocks = 0, failed = 0;  // the first failing block is reported, the others counted
  // The blocks of splits `chosen`, each at position `at`.
  auto check = [&](const std::vector<Split>& chosen, const std::vector<std::int64_t>& at) {
    Box block = full_box(o);
    Range red{0, reduction};
    for (std::size_t k = 0; k < chosen.size(); ++k) {
      const PartDim d = chosen[k].dim;
      const std::int64_t n = d == PartDim::Inpp ? reduction : o[static_cast<std::size_t>(d)];
      const std::int64_t size = n / chosen[k].factor;
      const Range r{at[k] * size, (at[k] + 1) * size};
      if (d == PartDim::Inpp)
        red = r;
      else
        block.r[static_cast<std::size_t>(d)] = r;
    }
    ++blocks;
    Box region;
    try {
      region = input_region(g, id, input, block, red);
    } catch (const std::exception& e) {  // a region leaving its input
      if (failed++ == 0) ADD_FAILURE() << name << " input " << input << ": " << e.what();
      return;
    }
    std::vector<Range> view_ranges(block.r.begin(), block.r.end());
    bool missed = false;
    for_each_index(view_ranges, [&](const Index& v) {
      const Index oi = tensor_index({v[0], v[1], v[2], v[3]}, out);
      for (const Index& ii : reads(oi, red)) {
        const ViewIndex iv = view_index(ii, in);
        bool held = true;
        for (int a = 0; a < 4; ++a)
          held = held && region.r[a].lo <= iv[a] && iv[a] < region.r[a].hi;
        if (!held && !missed && failed++ == 0)
          ADD_FAILURE() << name << " input " << input << " " << shape_str(in) << ": block "
                        << str(block) << " reduction [" << red.lo << "," << red.hi << ") of output "
                        << shape_str(out) << ": element " << str(oi) << " reads " << str(ii)
                        << ", outside the region " << str(region);
        missed = missed || !held;
      }
    });
  };
  for (const Split& s : splits)
    for (std::int64_t k = 0; k < s.factor; ++k) check({s}, {k});
  for (std::size_t i = 0; i < splits.size(); ++i)
    for (std::size_t j = i + 1; j < splits.size(); ++j) {
      if (splits[i].dim == splits[j].dim) continue;
      for (std::int64_t a = 0; a < splits[i].factor; ++a)
        for (std::int64_t b = 0; b < splits[j].factor; ++b) check({splits[i], splits[j]}, {a, b});
    }
  EXPECT_EQ(failed, 0) << name << " input " << input << ": blocks missing elements, of " << blocks;
  return blocks;
}

/// A second graph input (Model has one, "x").
void add_input(Model& m, const std::string& name, const Shape& shape) {
  auto* in = m.g->add_input();
  in->set_name(name);
  in->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  auto* s = in->mutable_type()->mutable_tensor_type()->mutable_shape();
  for (auto d : shape) s->add_dim()->set_dim_value(d);
}

std::string dims_of(const Graph& g, const std::string& name) {
  return legal_part_dims(g, *g.find(name)).str();
}

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

/// An output gradient `dy` of shape `s`, a gradient node's input.
NodeId add_dy(Graph& g, const Shape& s) {
  OpAttrs in;
  in.shape = s;
  return g.add_node(Node{"dy", OpKind::Input, in, {}});
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

// ---- Softmax and ReduceMean ----

void check_softmax(const Shape& xs, std::int64_t axis, const std::string& file) {
  Model m(xs);
  Model::int1(m.node("Softmax", {"x"}, "y", "softmax"), "axis", axis);
  const Graph g = m.load(file);
  const auto k =
      static_cast<std::size_t>(axis < 0 ? axis + static_cast<std::int64_t>(xs.size()) : axis);
  EXPECT_GT(check_regions(g, "softmax", 0, 1,
                          [&](const Index& o, Range) {
                            return along(o, k, {0, xs[k]});
                          }),
            0)
      << file;
}

TEST(Rank5Region, ASoftmaxReadsItsWholeAxis) {
  check_softmax({2, 3, 2, 3, 4}, -1, "r5_softmax_last.onnx");
  check_softmax({2, 2, 3, 2, 3, 4}, 5, "r6_softmax_last.onnx");
  check_softmax({2, 3, 2, 3, 4}, 2, "r5_softmax_c.onnx");
  // Over an axis inside the flattened lead: BATCH must not split it.
  check_softmax({2, 3, 2, 3, 4}, 1, "r5_softmax_lead.onnx");
  check_softmax({2, 2, 3, 2, 3, 2}, -5, "r6_softmax_lead.onnx");
}

TEST(Rank5Region, ALayerNormReadsEveryAxisFromItsFirstNormalisedOne) {
  for (const std::int64_t axis : {-1, -3, 1}) {  // W; C, H, W; from inside the lead on
    const Shape xs{2, 3, 2, 3, 4};
    Model m(xs);
    const auto first = static_cast<std::size_t>(axis < 0 ? axis + 5 : axis);
    m.weight("scale", Shape(xs.begin() + static_cast<std::ptrdiff_t>(first), xs.end()));
    Model::int1(m.node("LayerNormalization", {"x", "scale"}, "y", "norm"), "axis", axis);
    const Graph g = m.load("r5_layernorm.onnx");
    if (axis == 1) {  // axes 1-4: the lead too, so nothing splits
      EXPECT_EQ(dims_of(g, "norm"), "-");
      continue;
    }
    EXPECT_GT(check_regions(g, "norm", 0, 1,
                            [&](const Index& o, Range) {
                              std::vector<Range> r;
                              for (std::size_t k = 0; k < xs.size(); ++k)
                                r.push_back(k < first ? Range{o[k], o[k] + 1} : Range{0, xs[k]});
                              std::vector<Index> all;
                              for_each_index(r, [&](const Index& i) { all.push_back(i); });
                              return all;
                            }),
              0)
        << axis;
  }
}

TEST(Rank5Region, AReduceMeanOverALeadAxisReadsItsWholeAxis) {
  for (const bool keep : {true, false}) {
    Model m({2, 3, 2, 3, 4});
    auto* n = m.node("ReduceMean", {"x"}, "y", "mean");
    Model::ints(n, "axes", {1});
    Model::int1(n, "keepdims", keep ? 1 : 0);
    const Graph g = m.load(keep ? "r5_mean_keep.onnx" : "r5_mean.onnx");
    EXPECT_GT(check_regions(g, "mean", 0, 1,
                            [&](Index o, Range) {
                              if (!keep) o.insert(o.begin() + 1, 0);
                              return along(o, 1, {0, 3});
                            }),
              0)
        << keep;
  }
}

// ---- Products ----

/// x of `xs` times z of `zs` (MatMul, batch axes broadcast).
void check_matmul(const Shape& xs, const Shape& zs, const std::string& file) {
  Model m(xs);
  add_input(m, "z", zs);
  m.node("MatMul", {"x", "z"}, "y", "matmul");
  const Graph g = m.load(file);
  const Shape out = g.node(*g.find("matmul")).output.shape;
  const std::size_t r = out.size();
  const Shape batch(out.begin(), out.end() - 2);
  for (int input = 0; input < 2; ++input) {
    const Shape in = input == 0 ? xs : zs;
    const Shape in_batch(in.begin(), in.end() - 2);
    EXPECT_GT(check_regions(g, "matmul", input, xs.back(),
                            [&](const Index& o, Range red) {
                              // A[.., s, k] or B[.., k, e] for k in the reduction slice.
                              const Index ob(o.begin(), o.end() - 2);
                              std::vector<Index> all;
                              for (const Index& b : broadcast_reads(ob, in_batch, batch)) {
                                std::vector<Range> at;
                                for (std::int64_t v : b) at.push_back({v, v + 1});
                                at.push_back(input == 0 ? Range{o[r - 2], o[r - 2] + 1} : red);
                                at.push_back(input == 0 ? red : Range{o[r - 1], o[r - 1] + 1});
                                for_each_index(at, [&](const Index& i) { all.push_back(i); });
                              }
                              return all;
                            }),
              0)
        << file << " input " << input;
  }
}

TEST(Rank5Region, AMatMulReadsItsRowsColumnsAndReductionSlice) {
  check_matmul({2, 3, 2, 3, 4}, {2, 3, 2, 4, 5}, "r5_matmul.onnx");
  check_matmul({2, 2, 3, 2, 3, 2}, {2, 2, 3, 2, 2, 3}, "r6_matmul.onnx");
}

TEST(Rank5Region, AMatMulReadsABroadcastOperandsBatch) {
  check_matmul({2, 3, 2, 3, 4}, {2, 1, 2, 4, 5}, "r5_matmul_b1.onnx");  // a lead axis of 1
  check_matmul({2, 3, 2, 3, 4}, {1, 3, 2, 4, 5}, "r5_matmul_b0.onnx");
  check_matmul({2, 3, 2, 3, 4}, {2, 3, 1, 4, 5}, "r5_matmul_h1.onnx");  // the heads
  check_matmul({2, 3, 4}, {1, 4, 5}, "r3_matmul_b.onnx");               // ranks 3 and 4 as well
  check_matmul({2, 3, 3, 4}, {1, 3, 4, 5}, "r4_matmul_b.onnx");
}

/// A Gemm over x's last axis, its input gradient and its weight gradient, built directly.
Graph gemm_graph(const Shape& xs, std::int64_t out_features) {
  Graph g("gemm");
  OpAttrs x;
  x.shape = xs;
  const NodeId xi = g.add_node(Node{"x", OpKind::Input, x, {}});
  Shape ys = xs;
  ys.back() = out_features;
  OpAttrs dy;
  dy.shape = ys;
  const NodeId dyi = g.add_node(Node{"dy", OpKind::Input, dy, {}});
  OpAttrs a;
  a.out_channels = out_features;
  a.in_channels = xs.back();
  g.add_node(Node{"gemm", OpKind::Gemm, a, {}}, {xi});
  g.add_node(Node{"dx", OpKind::GemmGradInput, a, {}}, {dyi});
  g.add_node(Node{"dw", OpKind::GemmGradWeight, a, {}}, {xi, dyi});
  infer_shapes(g);
  return g;
}

TEST(Rank5Region, AGemmAndItsGradientsReadTheirSlices) {
  for (const Shape& xs : {Shape{2, 3, 2, 3, 4}, Shape{2, 2, 3, 2, 3, 2}, Shape{3, 2, 3, 4}}) {
    const Graph g = gemm_graph(xs, 5);
    const std::size_t last = xs.size() - 1;
    // y[.., o] and dx[.., i]: the same positions, the reduction slice of the features.
    EXPECT_GT(check_regions(g, "gemm", 0, xs.back(),
                            [&](const Index& o, Range red) { return along(o, last, red); }),
              0)
        << shape_str(xs);
    EXPECT_GT(check_regions(g, "dx", 0, 5,
                            [&](const Index& o, Range red) { return along(o, last, red); }),
              0)
        << shape_str(xs);
    // dW[o, i]: x[b, .., i] and dy[b, .., o] for the batch slice b of the reduction, every
    // position between.
    for (int input = 0; input < 2; ++input) {
      Shape in = xs;
      if (input == 1) in.back() = 5;
      EXPECT_GT(check_regions(g, "dw", input, xs[0],
                              [&](const Index& o, Range red) {
                                std::vector<Range> r;
                                r.push_back(red);
                                for (std::size_t k = 1; k < last; ++k) r.push_back({0, in[k]});
                                const std::int64_t f = o[input == 0 ? 1 : 0];
                                r.push_back({f, f + 1});
                                std::vector<Index> all;
                                for_each_index(r, [&](const Index& i) { all.push_back(i); });
                                return all;
                              }),
                0)
          << shape_str(xs) << " input " << input;
    }
  }
}

// ---- Partition dimensions of ranks up to 4, as before views beyond rank 4 changed ----

TEST(Rank5Region, AWeightGradientSplitsItsInputFeaturesByOutp) {
  // dW [out, in] is rank 2: its excluded kernel axes 2 and 3 do not exist, so OUTP (in) stays.
  const Graph g = gemm_graph({8, 6}, 4);
  EXPECT_EQ(dims_of(g, "dw"), "BATCH,OUTP,INPP");
}

TEST(Rank5Region, AReduceMeanThatDropsItsAxesKeepsTheOutputsOwnDimensions) {
  // [2, 8, 3, 3] averaged over axes 2, 3 without keeping them: [2, 8], whose C (axis 1) is
  // not a reduced axis.
  Model m({2, 8, 3, 3});
  auto* n = m.node("ReduceMean", {"x"}, "y", "mean");
  Model::ints(n, "axes", {2, 3});
  Model::int1(n, "keepdims", 0);
  const Graph g = m.load("r4_mean_drop.onnx");
  EXPECT_EQ(dims_of(g, "mean"), "BATCH,OUTP");
  EXPECT_GT(check_regions(g, "mean", 0, 1,
                          [&](Index o, Range) {
                            std::vector<Index> all;
                            for_each_index({{o[0], o[0] + 1}, {o[1], o[1] + 1}, {0, 3}, {0, 3}},
                                           [&](const Index& i) { all.push_back(i); });
                            return all;
                          }),
            0);
}

}  // namespace
}  // namespace nocflow::optimizer
