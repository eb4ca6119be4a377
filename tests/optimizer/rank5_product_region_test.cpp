// SPDX-License-Identifier: MIT
// Input regions of tensors beyond rank 4 against a brute force (region_brute_force.h):
// Softmax, LayerNorm and ReduceMean over their axes, MatMul and Gemm with their gradients, and
// the partition dimensions of ranks up to 4 that views beyond rank 4 must not change.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/optimizer/region_brute_force.h"

namespace nocflow::optimizer {
namespace {

using namespace region_check;

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
    m.m.mutable_opset_import(0)->set_version(17);  // LayerNormalization's first
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
