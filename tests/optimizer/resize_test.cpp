// SPDX-License-Identifier: MIT
// Resize: which input rows each output row reads, against what PyTorch's interpolate reads
// (tests/optimizer/data/resize_reference.json, written by scripts/export_onnx.py); ONNX import
// with scales or with sizes from shape arithmetic; what is refused; the network YAML key;
// training through it.
#include "optimizer/graph/resize.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "optimizer/frontend/network_yaml.h"
#include "optimizer/graph/op_cost.h"
#include "optimizer/graph/shape_inference.h"
#include "optimizer/io/graph_file.h"
#include "optimizer/partition/region.h"
#include "optimizer/passes/autodiff.h"
#include "optimizer/passes/pass_manager.h"
#include "optimizer/report/layer_report.h"
#include "tests/optimizer/onnx_model.h"

namespace nocflow::optimizer {
namespace {

const std::string kData = std::string(NOCFLOW_SOURCE_DIR) + "/tests/optimizer/data/";

void attr_string(onnx::NodeProto* n, const std::string& name, const std::string& value) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(value);
}

/// Each case: PyTorch's interpolate along one axis, the Resize attributes it exports, and per
/// output row the input rows its value depends on (the nonzero entries of its gradient).
TEST(Resize, ReadsTheRowsPyTorchsInterpolateReads) {
  std::ifstream in(kData + "resize_reference.json");
  const auto cases = nlohmann::json::parse(in);
  ASSERT_GE(cases.size(), 10u);
  int exact = 0, interpolated = 0;  // interpolating rows whose taps all weigh something
  for (const auto& c : cases) {
    const std::string what = c.at("torch").dump();
    OpAttrs a;
    a.mode = c.at("mode").get<std::string>();
    a.coordinate_transformation_mode = c.at("coordinate_transformation_mode").get<std::string>();
    a.nearest_mode = c.at("nearest_mode").get<std::string>();
    ResizeAxis axis{c.at("in").get<std::int64_t>(), c.at("out").get<std::int64_t>(), 1};
    axis.scale = c.at("scale").is_null()
                     ? static_cast<double>(axis.out) / static_cast<double>(axis.in)
                     : c.at("scale").get<double>();
    const auto taps = c.at("taps").get<std::vector<std::vector<std::int64_t>>>();
    ASSERT_EQ(static_cast<std::int64_t>(taps.size()), axis.out) << what;
    for (std::int64_t x = 0; x < axis.out; ++x) {
      const IndexRange got = resize_taps(a, axis, x);
      const auto& want = taps[static_cast<std::size_t>(x)];
      if (a.mode == "nearest") {
        EXPECT_EQ(got, (IndexRange{want[0], want[1]})) << what << " row " << x;
      } else {  // every tap, also one that weighs nothing (PyTorch's gradient leaves it out)
        EXPECT_LE(got.first, want[0]) << what << " row " << x;
        EXPECT_GE(got.second, want[1]) << what << " row " << x;
        EXPECT_LE(got.second - got.first, a.mode == "linear" ? 2 : 4) << what << " row " << x;
        exact += got == IndexRange{want[0], want[1]};
        ++interpolated;
      }
    }
    // A block of outputs reads the union of their taps; a block of inputs is read by the
    // outputs whose taps reach into it (found by bisection, checked here by scanning).
    for (std::int64_t lo = 0; lo < axis.out; ++lo)
      for (std::int64_t hi = lo + 1; hi <= axis.out; hi += 3) {
        IndexRange u{axis.in, 0};
        for (std::int64_t x = lo; x < hi; ++x) {
          const IndexRange t = resize_taps(a, axis, x);
          u = {std::min(u.first, t.first), std::max(u.second, t.second)};
        }
        EXPECT_EQ(resize_inputs(a, axis, {lo, hi}), u) << what;
      }
    for (std::int64_t lo = 0; lo < axis.in; ++lo)
      for (std::int64_t hi = lo + 1; hi <= axis.in; ++hi) {
        IndexRange readers{0, 0};
        for (std::int64_t x = 0; x < axis.out; ++x) {
          const IndexRange t = resize_taps(a, axis, x);
          if (t.second <= lo || t.first >= hi) continue;
          readers = readers.second > readers.first ? IndexRange{readers.first, x + 1}
                                                   : IndexRange{x, x + 1};
        }
        EXPECT_EQ(resize_outputs(a, axis, {lo, hi}), readers)
            << what << " [" << lo << ", " << hi << ")";
      }
  }
  // Rows landing on an input index (weightless taps) are the exception.
  EXPECT_GT(exact, interpolated * 9 / 10) << exact << " of " << interpolated;
}

/// conv (8 channels, 6x6) → Resize to sizes Concat(Shape(c)[0:2], [12, 18]), as torchvision's
/// segmentation heads export F.interpolate(size=...).
Model resize_to_sizes(const std::string& mode) {
  Model m({1, 4, 6, 6});
  m.weight("w", {8, 4, 3, 3});
  Model::ints(m.node("Conv", {"x", "w"}, "c", "conv"), "pads", {1, 1, 1, 1});
  m.node("Shape", {"c"}, "s", "shape");
  m.int64s("st", {0});
  m.int64s("en", {2});
  m.node("Slice", {"s", "st", "en"}, "nc", "slice");
  m.int64s("hw", {12, 18});
  Model::int1(m.node("Concat", {"nc", "hw"}, "sizes", "concat"), "axis", 0);
  attr_string(m.node("Resize", {"c", "", "", "sizes"}, "y", "resize"), "mode", mode);
  return m;
}

TEST(OnnxResize, SizesFromShapeArithmeticFoldIntoTheNode) {
  Graph g = resize_to_sizes("linear").load("resize_sizes.onnx");
  run_passes(g, "default");
  const NodeId r = *g.find("resize");
  EXPECT_EQ(g.inputs(r).size(), 1u);  // the sizes folded, the shape arithmetic gone
  EXPECT_EQ(g.node(r).attrs.shape, (Shape{12, 18}));
  EXPECT_EQ(g.node(r).attrs.scales, (std::vector<double>{2, 3}));
  EXPECT_EQ(g.node(r).output.shape, (Shape{1, 8, 12, 18}));
  EXPECT_EQ(op_cost(g, r).vector_ops, 8 * 12 * 18 * 4);  // bilinear: 2 x 2 taps
  // The top half of the output reads the rows its taps reach, every column.
  const Box block{{Range{0, 1}, Range{0, 8}, Range{0, 6}, Range{0, 18}}};
  const Box need = input_region(g, r, 0, block, Range{0, 1});
  EXPECT_EQ(need.r[kH], (Range{0, 4}));  // output row 5 at input 2.25 reads rows 2 and 3
  EXPECT_EQ(need.r[kW], (Range{0, 6}));
  // nearest reads one row per output row: no halo at a block edge where the scale divides
  Graph n = resize_to_sizes("nearest").load("resize_nearest.onnx");
  run_passes(n, "default");
  EXPECT_EQ(op_cost(n, *n.find("resize")).vector_ops, 8 * 12 * 18);
  EXPECT_EQ(input_region(n, *n.find("resize"), 0, block, Range{0, 1}).r[kH], (Range{0, 3}));
  // Differentiated before constant folding, the shape arithmetic gets no gradient.
  Graph t = resize_to_sizes("linear").load("resize_train.onnx");
  const TrainingOptions sgd;
  run_passes(t, "none", &sgd);
  EXPECT_TRUE(t.find("resize.grad").has_value());
  EXPECT_FALSE(t.find("resize.grad0").has_value());
}

TEST(OnnxResize, ScalesAreTakenAsTheyAreGiven) {
  Model m({1, 3, 5, 5});
  m.floats("sc", {1, 1, 2.5f, 2});
  auto* r = m.node("Resize", {"x", "", "sc"}, "y", "resize");
  attr_string(r, "coordinate_transformation_mode", "asymmetric");
  attr_string(r, "nearest_mode", "floor");
  const Graph g = m.load("resize_scales.onnx");
  const Node& n = g.node(*g.find("resize"));
  EXPECT_EQ(n.output.shape, (Shape{1, 3, 12, 10}));  // ⌊5 x 2.5⌋
  EXPECT_EQ(n.attrs.scales, (std::vector<double>{2.5, 2}));
  EXPECT_EQ(n.attrs.mode, "nearest");  // ONNX's default
  // The output size in single precision, as ONNX and onnxruntime: ⌊10 x 0.7f⌋ = 7 (in double
  // 6.99999988 would give 6); PyTorch's interpolate(scale_factor=0.7) also gives 7.
  Model s({1, 1, 10, 10});
  s.floats("sc", {1, 1, 0.7f, 2.3f});
  s.node("Resize", {"x", "", "sc"}, "y", "resize");
  const Graph sg = s.load("resize_float.onnx");
  EXPECT_EQ(sg.node(*sg.find("resize")).output.shape, (Shape{1, 1, 7, 23}));
  // Opset 11 passes empty tensors for the region of interest and the sizes it does not use.
  Model e({1, 3, 4, 4});
  e.m.mutable_opset_import(0)->set_version(11);
  e.floats("roi", {});
  e.floats("sc", {1, 1, 2, 1.5f});
  e.int64s("sz", {});
  e.node("Resize", {"x", "roi", "sc", "sz"}, "y", "resize");
  const Graph eg = e.load("resize_opset11.onnx");
  EXPECT_EQ(eg.node(*eg.find("resize")).output.shape, (Shape{1, 3, 8, 6}));
}

TEST(OnnxResize, WhatItCannotResizeIsRefusedSayingWhy) {
  auto refusal = [](auto&& build, int opset = 13) {
    Model m({1, 3, 4, 4});
    m.m.mutable_opset_import(0)->set_version(opset);
    build(m);
    return m.import("resize_bad.onnx");
  };
  auto with_scales = [](std::vector<float> s, const char* key = "", const char* value = "") {
    return [=](Model& m) {
      m.floats("sc", s);
      auto* r = m.node("Resize", {"x", "", "sc"}, "y", "resize");
      if (*key) attr_string(r, key, value);
    };
  };
  EXPECT_HAS(
      refusal(with_scales({1, 1, 2, 2}, "coordinate_transformation_mode", "tf_crop_and_resize")),
      "'tf_crop_and_resize' (a region of interest) is not supported");
  EXPECT_HAS(refusal(with_scales({1, 1, 2, 2}, "mode", "area")),
             "mode 'area' is not supported (nearest, linear, cubic)");
  EXPECT_HAS(refusal(with_scales({1, 2, 2, 2})), "scales resize N or C");
  EXPECT_HAS(refusal(with_scales({2, 2})), "scales must be 4 floats");
  EXPECT_HAS(refusal(with_scales({1, 1, 2, 2}), 10), "before opset 11");
  EXPECT_HAS(refusal([](Model& m) { m.node("Resize", {"x"}, "y", "resize"); }),
             "needs scales or sizes");
  EXPECT_HAS(refusal([](Model& m) {
               m.floats("sc", {1, 1, 2, 2});
               m.int64s("sz", {1, 3, 8, 8});
               m.node("Resize", {"x", "", "sc", "sz"}, "y", "resize");
             }),
             "gives both scales and sizes");
  EXPECT_HAS(refusal([](Model& m) {
               m.int64s("sz", {1, 6, 8, 8});
               m.node("Resize", {"x", "", "", "sz"}, "y", "resize");
             }),
             "sizes [1,6,8,8] resize N or C of [1,3,4,4]");
  EXPECT_HAS(
      refusal(
          [](Model& m) {
            m.int64s("sz", {8, 8});
            Model::ints(m.node("Resize", {"x", "", "", "sz"}, "y", "resize"), "axes", {1, 2});
          },
          18),
      "axes [1,2] are not supported");
  EXPECT_HAS(refusal(
                 [](Model& m) {
                   m.floats("sc", {1, 1, 0.5f, 0.5f});
                   auto* r = m.node("Resize", {"x", "", "sc"}, "y", "resize");
                   attr_string(r, "mode", "linear");
                   Model::int1(r, "antialias", 1);
                 },
                 18),
             "antialias=1 is not supported");
  EXPECT_HAS(refusal([](Model& m) {
               m.int64s("sc", {1, 1, 2, 2});
               m.node("Resize", {"x", "", "sc"}, "y", "resize");
             }),
             "scales must be floats, not integers");
  // opset 18's axes over H and W: two sizes
  Model m({1, 3, 4, 4});
  m.m.mutable_opset_import(0)->set_version(18);
  m.int64s("sz", {8, 6});
  Model::ints(m.node("Resize", {"x", "", "", "sz"}, "y", "resize"), "axes", {-2, -1});
  const Graph g = m.load("resize_axes.onnx");
  EXPECT_EQ(g.node(*g.find("resize")).output.shape, (Shape{1, 3, 8, 6}));
}

/// Rows worked out by hand from the ONNX specification's formulas, for the transformations and
/// roundings PyTorch does not export.
TEST(Resize, EveryTransformationAndRoundingAsTheOnnxSpecificationWritesThem) {
  auto row = [](const char* coordinates, const char* mode, const char* rounding, ResizeAxis axis,
                std::int64_t x) {
    OpAttrs a;
    a.coordinate_transformation_mode = coordinates;
    a.mode = mode;
    a.nearest_mode = rounding;
    return resize_taps(a, axis, x);
  };
  // asymmetric x / 2: output 1 sits at 0.5, a tie
  EXPECT_EQ(row("asymmetric", "nearest", "round_prefer_floor", {4, 8, 2}, 1), (IndexRange{0, 1}));
  EXPECT_EQ(row("asymmetric", "nearest", "round_prefer_ceil", {4, 8, 2}, 1), (IndexRange{1, 2}));
  EXPECT_EQ(row("asymmetric", "nearest", "ceil", {4, 8, 2}, 1), (IndexRange{1, 2}));
  EXPECT_EQ(row("asymmetric", "nearest", "floor", {4, 8, 2}, 3), (IndexRange{1, 2}));
  // half_pixel (x + 0.5) / 2 − 0.5: output 0 at −0.25 rounds to 0; output 7 at 3.25 to 3
  EXPECT_EQ(row("half_pixel", "nearest", "round_prefer_ceil", {4, 8, 2}, 0), (IndexRange{0, 1}));
  EXPECT_EQ(row("half_pixel", "linear", "floor", {4, 8, 2}, 7), (IndexRange{3, 4}));
  // tf_half_pixel_for_nn (x + 0.5) / s, even at scale 1: output 1 at 1.5 rounds up to 2
  EXPECT_EQ(row("tf_half_pixel_for_nn", "nearest", "ceil", {4, 4, 1}, 1), (IndexRange{2, 3}));
  EXPECT_EQ(row("tf_half_pixel_for_nn", "linear", "floor", {4, 4, 1}, 1), (IndexRange{1, 3}));
  // pytorch_half_pixel maps a one-element output to 0; half_pixel to (0.5) x 10 − 0.5 = 4.5
  EXPECT_EQ(row("pytorch_half_pixel", "nearest", "floor", {10, 1, 0.1}, 0), (IndexRange{0, 1}));
  EXPECT_EQ(row("half_pixel", "nearest", "floor", {10, 1, 0.1}, 0), (IndexRange{4, 5}));
  // half_pixel_symmetric, 10 → ⌊3.5⌋ = 3 at 0.35: offset 5 (1 − 3 / 3.5) = 5/7, so output 0
  // sits at 5/7 + 0.5 / 0.35 − 0.5 = 1.64 and output 2 at 7.36
  EXPECT_EQ(row("half_pixel_symmetric", "nearest", "round_prefer_floor", {10, 3, 0.35}, 0),
            (IndexRange{2, 3}));
  EXPECT_EQ(row("half_pixel_symmetric", "cubic", "floor", {10, 3, 0.35}, 2), (IndexRange{6, 10}));
  // align_corners x (in − 1) / (out − 1): output 3 of 7 → 16 at 1.2
  EXPECT_EQ(row("align_corners", "cubic", "floor", {7, 16, 16.0 / 7}, 3), (IndexRange{0, 4}));
}

TEST(Resize, TrainsByAddingEachOutputGradientBackOntoTheRowsItRead) {
  Graph g = parse_network_yaml(
      "name: up\ninputs:\n  x: [1, 4, 6, 6]\nlayers:\n"
      "  - {name: conv, op: conv, out: 8, kernel: 3, pad: 1}\n"
      "  - {name: up, op: resize, scales: 2, mode: linear, coordinate_transformation_mode: "
      "align_corners}\n",
      "up.yaml");
  EXPECT_EQ(g.node(*g.find("up")).output.shape, (Shape{1, 8, 12, 12}));
  const TrainingOptions sgd;
  run_passes(g, "default", &sgd);
  // Per-pixel classes: the loss's softmax runs over C, which is not split.
  const PartDimSet loss = legal_part_dims(g, *g.find("up.loss_grad"));
  EXPECT_FALSE(loss.contains(PartDim::Outp));
  EXPECT_TRUE(loss.contains(PartDim::OfmpH) && loss.contains(PartDim::OfmpW));
  const NodeId d = *g.find("up.grad");
  EXPECT_EQ(g.node(d).kind, OpKind::Grad);
  EXPECT_EQ(g.node(d).attrs.grad_of, OpKind::Resize);
  EXPECT_EQ(g.node(d).output.shape, (Shape{1, 8, 6, 6}));
  EXPECT_EQ(op_cost(g, d).vector_ops, 8 * 12 * 12 * 4);
  // dX rows [2, 4) take dY from the rows that read them: dY row y sits at y x 5 / 11, so rows
  // 3 (1.36, reading 1 and 2) to 8 (3.64, reading 3 and 4).
  const Box block{{Range{0, 1}, Range{0, 8}, Range{2, 4}, Range{0, 6}}};
  const Box need = input_region(g, d, 0, block, Range{0, 1});
  EXPECT_EQ(need.r[kH], (Range{3, 9}));
  EXPECT_EQ(need.r[kW], (Range{0, 12}));
  // The training graph reads back from its file as it was.
  const Graph back = parse_network_yaml(graph_yaml(g), "up.train.yaml");
  EXPECT_EQ(layer_table(back), layer_table(g));
  EXPECT_EQ(back.node(*back.find("up")).attrs, g.node(*g.find("up")).attrs);
}

TEST(Resize, SizesAndScalesThatDisagreeAreRefused) {
  const Tensor x{{1, 2, 6, 6}, 4, std::nullopt};
  OpAttrs a;
  a.shape = {12, 12};
  a.scales = {2, 2};
  EXPECT_EQ(infer_output(OpKind::Resize, a, {&x}).shape, (Shape{1, 2, 12, 12}));
  a.scales = {2, 1e-300};  // a graph file's, say
  EXPECT_HAS(nocflow::testing::error_of([&] { infer_output(OpKind::Resize, a, {&x}); }),
             "sizes [12,12] and scales disagree on input [1,2,6,6]");
  // The gradient's dY must be what the forward Resize makes of dX.
  OpAttrs g;
  g.grad_of = OpKind::Resize;
  g.shape = {1, 2, 6, 6};
  g.scales = {2, 2};
  const Tensor dy{{1, 2, 12, 12}, 4, std::nullopt}, tall{{1, 2, 13, 12}, 4, std::nullopt};
  EXPECT_EQ(infer_output(OpKind::Grad, g, {&dy}).shape, (Shape{1, 2, 6, 6}));
  EXPECT_HAS(nocflow::testing::error_of([&] { infer_output(OpKind::Grad, g, {&tall}); }),
             "disagree");
}

TEST(NetworkYaml, ResizeNeedsSizesOrScalesAndAKnownMode) {
  auto error = [](const std::string& layer) {
    return nocflow::testing::error_of([&] {
      parse_network_yaml("inputs:\n  x: [1, 2, 4, 4]\nlayers:\n  - " + layer + "\n", "r.yaml");
    });
  };
  EXPECT_HAS(error("{op: resize}"), "needs either 'sizes' or 'scales'");
  EXPECT_HAS(error("{op: resize, sizes: 8, scales: 2}"), "needs either 'sizes' or 'scales'");
  EXPECT_HAS(error("{op: resize, scales: [2, 2, 2]}"), "expected one value or [h, w]");
  EXPECT_HAS(error("{op: resize, scales: 2, mode: bilinear}"),
             "r.yaml:4:5: layers[0]: Resize mode 'bilinear' is not supported");
  EXPECT_HAS(error("{op: resize, scales: 0}"), "scales must be positive");
  const Graph g = parse_network_yaml(
      "inputs:\n  x: [1, 2, 4, 4]\nlayers:\n  - {name: r, op: resize, sizes: [6, 10]}\n", "r.yaml");
  EXPECT_EQ(g.node(*g.find("r")).output.shape, (Shape{1, 2, 6, 10}));
  EXPECT_EQ(g.node(*g.find("r")).attrs.scales, (std::vector<double>{1.5, 2.5}));
}

}  // namespace
}  // namespace nocflow::optimizer
