// SPDX-License-Identifier: MIT
// ConvTranspose: shapes and MACs against PyTorch (tiny_unet in torchvision_reference.json), the
// input rows each output block reads against a scan of every input row and tap, the network
// YAML key, what is refused, and its gradients.
#include <gtest/gtest.h>

#include <string>

#include "optimizer/frontend/network_yaml.h"
#include "optimizer/graph/op_cost.h"
#include "optimizer/partition/region.h"
#include "optimizer/partition/workload.h"
#include "optimizer/passes/autodiff.h"
#include "optimizer/passes/pass_manager.h"
#include "tests/optimizer/onnx_model.h"

namespace nocflow::optimizer {
namespace {

/// Input rows [lo, hi) whose taps land in output rows `out`: every row i and tap r with
/// i·stride − pad + r·dilation inside `out`, scanned.
Range scanned_rows(Range out, std::int64_t in, std::int64_t stride, std::int64_t kernel,
                   std::int64_t dilation, std::int64_t pad) {
  Range hit{in, 0};
  for (std::int64_t i = 0; i < in; ++i)
    for (std::int64_t r = 0; r < kernel; ++r)
      if (const std::int64_t o = i * stride - pad + r * dilation; o >= out.lo && o < out.hi)
        hit = {std::min(hit.lo, i), std::max(hit.hi, i + 1)};
  return hit.hi > hit.lo ? hit : Range{0, 0};
}

TEST(ConvTranspose, EachOutputBlockReadsTheInputRowsWhoseTapsLandInIt) {
  struct Case {
    std::int64_t in, stride, kernel, dilation, pad, output_padding, pad_end;
  };
  for (const Case c :
       {Case{16, 2, 3, 1, 1, 1, 1}, Case{32, 2, 2, 1, 0, 0, 0}, Case{64, 1, 3, 2, 2, 0, 2},
        Case{7, 3, 5, 1, 2, 2, 2}, Case{9, 2, 4, 3, 0, 1, 0}, Case{10, 2, 3, 2, 1, 1, 3}}) {
    const std::string what = "in " + std::to_string(c.in) + " stride " + std::to_string(c.stride) +
                             " kernel " + std::to_string(c.kernel) + " dilation " +
                             std::to_string(c.dilation) + " pad " + std::to_string(c.pad);
    Graph g = parse_network_yaml(
        "inputs:\n  x: [1, 8, " + std::to_string(c.in) +
            ", 4]\nlayers:\n"
            "  - {name: up, op: conv_transpose, out: 4, kernel: [" +
            std::to_string(c.kernel) + ", 1], stride: [" + std::to_string(c.stride) +
            ", 1], dilation: [" + std::to_string(c.dilation) + ", 1], pad: [" +
            std::to_string(c.pad) + ", 0, " + std::to_string(c.pad_end) + ", 0], " +
            "output_padding: [" + std::to_string(c.output_padding) + ", 0]}\n",
        "up.yaml");
    const NodeId up = *g.find("up");
    const std::int64_t out = g.node(up).output.shape[2];
    EXPECT_EQ(out, (c.in - 1) * c.stride - c.pad - c.pad_end + c.dilation * (c.kernel - 1) +
                       c.output_padding + 1)
        << what;
    for (std::int64_t lo = 0; lo < out; ++lo)
      for (std::int64_t hi = lo + 1; hi <= out; hi += 2) {
        const Box block{{Range{0, 1}, Range{0, 4}, Range{lo, hi}, Range{0, 4}}};
        const Box need = input_region(g, up, 0, block, Range{0, 8});
        EXPECT_EQ(need.r[kH], scanned_rows({lo, hi}, c.in, c.stride, c.kernel, c.dilation, c.pad))
            << what << " rows [" << lo << ", " << hi << ")";
      }
    // INPP slices the input channels: a quarter of the reduction reads a quarter of them.
    const Box all{{Range{0, 1}, Range{0, 4}, Range{0, out}, Range{0, 4}}};
    EXPECT_EQ(input_region(g, up, 0, all, Range{2, 4}).r[kC], (Range{2, 4})) << what;
    EXPECT_TRUE(legal_part_dims(g, up).contains(PartDim::Inpp)) << what;
  }
}

TEST(ConvTranspose, GroupedBlocksReadTheirGroupsChannels) {
  Graph g = parse_network_yaml(
      "inputs:\n  x: [1, 32, 8, 8]\nlayers:\n"
      "  - {name: up, op: conv_transpose, out: 16, kernel: 2, stride: 2, groups: 4}\n",
      "g.yaml");
  const NodeId up = *g.find("up");
  EXPECT_EQ(g.node(up).output.shape, (Shape{1, 16, 16, 16}));
  // 4 output and 8 input channels per group: outputs 4..8 read inputs 8..16
  const Box block{{Range{0, 1}, Range{4, 8}, Range{0, 16}, Range{0, 16}}};
  EXPECT_EQ(input_region(g, up, 0, block, Range{0, 8}).r[kC], (Range{8, 16}));
  EXPECT_EQ(op_cost(g, up).macs, 32 * 8 * 8 * 4 * 2 * 2);
  EXPECT_EQ(op_cost(g, up).params, 32 * 4 * 2 * 2 + 16);
  // INPP slices the input channels of a group: 8 here; a depthwise one has 1 and no INPP
  EXPECT_TRUE(legal_part_dims(g, up).contains(PartDim::Inpp));
  const Graph d = parse_network_yaml(
      "inputs:\n  x: [1, 8, 8, 8]\nlayers:\n"
      "  - {name: dw, op: conv_transpose, out: 16, kernel: 3, stride: 2, groups: 8}\n",
      "d.yaml");
  EXPECT_FALSE(legal_part_dims(d, *d.find("dw")).contains(PartDim::Inpp));
}

TEST(ConvTranspose, FusedWithItsActivationItKeepsItsWindowOnTheMacArray) {
  const std::string net =
      "inputs:\n  x: [1, 8, 8, 8]\nlayers:\n"
      "  - {name: up, op: conv_transpose, out: 16, kernel: 3, stride: 2, pad: 1, "
      "output_padding: 1}\n  - relu\n";
  Graph plain = parse_network_yaml(net, "u.yaml"), fused = parse_network_yaml(net, "u.yaml");
  run_passes(fused, "default");
  const Workload a = build_workload(plain), b = build_workload(fused);
  EXPECT_EQ(b.layers.size(), 1u);
  EXPECT_EQ(b.layers[0].kernel, a.layers[0].kernel);  // ⌈3 / 2⌉ taps per input per axis
  EXPECT_EQ(a.layers[0].kernel, (std::array<std::int64_t, 2>{2, 2}));
}

TEST(OnnxConvTranspose, WhatItCannotTransposeIsRefusedSayingWhy) {
  auto refusal = [](auto&& build) {
    Model m({1, 8, 4, 4});
    build(m);
    return m.import("convt_bad.onnx");
  };
  EXPECT_HAS(refusal([](Model& m) {
               m.weight("w", {8, 4, 3, 3});
               Model::ints(m.node("ConvTranspose", {"x", "w"}, "y", "up"), "output_shape", {9, 9});
             }),
             "output_shape is not supported");
  EXPECT_HAS(refusal([](Model& m) {
               m.weight("w", {8, 4, 3, 3});
               m.weight("b", {5});
               m.node("ConvTranspose", {"x", "w", "b"}, "y", "up");
             }),
             "bias [5] does not match the weight's 4 output channels");
  EXPECT_HAS(refusal([](Model& m) {
               m.weight("w", {8, 4, 3, 3});
               Model::int1(m.node("ConvTranspose", {"x", "w"}, "y", "up"), "group", 0);
             }),
             "group 0 must be at least 1");
  EXPECT_HAS(refusal([](Model& m) {
               m.weight("w", {8, 4, 3});
               m.node("ConvTranspose", {"x", "w"}, "y", "up");
             }),
             "only 2-D transposed convolutions");
  EXPECT_HAS(refusal([](Model& m) {
               m.weight("w", {8, 4, 3, 3});
               auto* n = m.node("ConvTranspose", {"x", "w"}, "y", "up");
               Model::ints(n, "strides", {2, 2});
               Model::ints(n, "output_padding", {2, 0});
             }),
             "output_padding 2 must be below the stride or the dilation");
}

TEST(ConvTranspose, ItsWindowOnTheMacArrayCountsTheTapsThatReachOneOutput) {
  // Output o meets the taps r with o = i·s − pad + r·d for some input i: counted by a scan,
  // the most over o, per (kernel, stride, dilation); the layer's window is that count. (The
  // input is wide enough for every tap of a window to land inside it.)
  for (std::int64_t k : {1, 2, 3, 5})
    for (std::int64_t s : {1, 2, 3, 4})
      for (std::int64_t d : {1, 2, 3}) {
        const std::string net =
            "inputs:\n  x: [1, 4, 32, 32]\nlayers:\n  - {op: conv_transpose, "
            "out: 4, kernel: " +
            std::to_string(k) + ", stride: " + std::to_string(s) +
            ", dilation: " + std::to_string(d) + "}\n";
        const Workload w = build_workload(parse_network_yaml(net, "t.yaml"));
        std::int64_t most = 0;
        for (std::int64_t o = 0; o < 32 * s + d * k; ++o) {
          std::int64_t taps = 0;
          for (std::int64_t r = 0; r < k; ++r)
            if (const std::int64_t x = o - r * d; x >= 0 && x % s == 0 && x / s < 32) ++taps;
          most = std::max(most, taps);
        }
        const std::string at =
            "k " + std::to_string(k) + " s " + std::to_string(s) + " d " + std::to_string(d);
        EXPECT_EQ(w.layers.at(0).kernel[0], most) << at;
        EXPECT_EQ(w.layers.at(0).kernel[1], most) << at;
      }
}

TEST(ConvTranspose, TrainsAsTheConvolutionFromItsOutputsSpaceToItsInputs) {
  // conv (8 channels, 9x9) → ConvTranspose 3x3 stride 2 pad 1 output_padding 1 (to 4 x 18x18)
  Graph g = parse_network_yaml(
      "inputs:\n  x: [1, 3, 9, 9]\nlayers:\n"
      "  - {name: conv, op: conv, out: 8, kernel: 3, pad: 1}\n"
      "  - {name: up, op: conv_transpose, out: 4, kernel: 3, stride: 2, pad: 1, "
      "output_padding: 1, groups: 2}\n",
      "t.yaml");
  const OpCost forward = op_cost(g, *g.find("up"));
  const TrainingOptions sgd;
  run_passes(g, "default", &sgd);
  const NodeId dx = *g.find("up.grad"), dw = *g.find("up.wgrad");
  EXPECT_EQ(g.node(dx).kind, OpKind::ConvTransposeGradInput);
  EXPECT_EQ(g.node(dx).output.shape, (Shape{1, 8, 9, 9}));
  EXPECT_EQ(op_cost(g, dx).macs, forward.macs);  // every dY value meets the same weights
  EXPECT_EQ(op_cost(g, dx).params, 0);           // counted once, at the forward layer
  EXPECT_EQ(g.node(dw).kind, OpKind::ConvGradWeight);
  EXPECT_EQ(g.node(dw).output.shape, (Shape{8, 2, 3, 3}));  // C × K/groups × kh × kw
  EXPECT_EQ(op_cost(g, dw).macs, forward.macs);
  // the bias gradient (a conv_transpose has a bias unless told, as in PyTorch): dY summed per
  // channel, one add per dY element
  EXPECT_EQ(op_cost(g, dw).vector_ops, 4 * 18 * 18);
  // dX row i reads dY rows i·2 − 1 + r (r < 3): rows [lo, hi) of dX those of a scan.
  for (std::int64_t lo = 0; lo < 9; ++lo)
    for (std::int64_t hi = lo + 1; hi <= 9; ++hi) {
      Range want{18, 0};
      for (std::int64_t i = lo; i < hi; ++i)
        for (std::int64_t r = 0; r < 3; ++r)
          if (const std::int64_t o = i * 2 - 1 + r; o >= 0 && o < 18)
            want = {std::min(want.lo, o), std::max(want.hi, o + 1)};
      const Box block{{Range{0, 1}, Range{4, 8}, Range{lo, hi}, Range{0, 9}}};
      const Box need = input_region(g, dx, 0, block, Range{0, 2});
      EXPECT_EQ(need.r[kH], want) << "[" << lo << ", " << hi << ")";
      EXPECT_EQ(need.r[kC], (Range{2, 4}));  // dX's second group reads dY's second group
    }
}

TEST(ConvTranspose, ItsBiasGradientIsCountedAsAConvolutionsIs) {
  // dW's layer sums dY per channel for the bias: the ConvTranspose's dY is 4 x 18 x 18, the
  // conv's 8 x 9 x 9; without a bias, nothing.
  for (const bool bias : {true, false}) {
    const std::string b = bias ? "true" : "false";
    Graph g = parse_network_yaml(
        "inputs:\n  x: [1, 3, 9, 9]\nlayers:\n"
        "  - {name: conv, op: conv, out: 8, kernel: 3, pad: 1, bias: " +
            b +
            "}\n"
            "  - {name: up, op: conv_transpose, out: 4, kernel: 3, stride: 2, pad: 1, "
            "output_padding: 1, bias: " +
            b + "}\n",
        "t.yaml");
    const std::int64_t params = op_cost(g, *g.find("up")).params;
    const TrainingOptions sgd;
    run_passes(g, "default", &sgd);
    EXPECT_EQ(op_cost(g, *g.find("up.wgrad")).vector_ops, bias ? 4 * 18 * 18 : 0) << b;
    EXPECT_EQ(op_cost(g, *g.find("conv.wgrad")).vector_ops, bias ? 8 * 9 * 9 : 0) << b;
    EXPECT_EQ(params, 8 * 4 * 3 * 3 + (bias ? 4 : 0)) << b;  // C × K × kh × kw, and the bias
  }
}

}  // namespace
}  // namespace nocflow::optimizer
