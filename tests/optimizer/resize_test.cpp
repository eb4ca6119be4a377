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
#include "optimizer/io/graph_file.h"
#include "optimizer/partition/region.h"
#include "optimizer/passes/autodiff.h"
#include "optimizer/passes/pass_manager.h"
#include "optimizer/report/layer_report.h"
#include "tests/optimizer/onnx_model.h"

namespace nocflow::optimizer {
namespace {

#define EXPECT_HAS(text, part) EXPECT_NE((text).find(part), std::string::npos) << (text)

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
    a.coordinate_mode = c.at("coordinate_transformation_mode").get<std::string>();
    a.nearest_mode = c.at("nearest_mode").get<std::string>();
    ResizeAxis axis{c.at("in").get<std::int64_t>(), c.at("out").get<std::int64_t>(), 1};
    axis.scale = c.at("scale").is_null() ? static_cast<double>(axis.out) / static_cast<double>(axis.in)
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
        EXPECT_EQ(resize_outputs(a, axis, {lo, hi}), readers) << what << " [" << lo << ", " << hi << ")";
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
  const ResizeAxis h{6, 12, 2};
  const IndexRange rows = resize_inputs(g.node(r).attrs, h, {0, 6});
  EXPECT_EQ(need.r[kH], (Range{rows.first, rows.second}));
  EXPECT_EQ(need.r[kH], (Range{0, 4}));  // output row 5 at input 2.25 reads rows 2 and 3
  EXPECT_EQ(need.r[kW], (Range{0, 6}));
  // nearest reads one row per output row: no halo at a block edge where the scale divides
  Graph n = resize_to_sizes("nearest").load("resize_nearest.onnx");
  run_passes(n, "default");
  EXPECT_EQ(op_cost(n, *n.find("resize")).vector_ops, 8 * 12 * 18);
  EXPECT_EQ(input_region(n, *n.find("resize"), 0, block, Range{0, 1}).r[kH], (Range{0, 3}));
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
  EXPECT_HAS(refusal(with_scales({1, 1, 2, 2}, "coordinate_transformation_mode",
                                 "tf_crop_and_resize")),
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
  EXPECT_HAS(refusal([](Model& m) {
               m.int64s("sz", {8, 8});
               Model::ints(m.node("Resize", {"x", "", "", "sz"}, "y", "resize"), "axes", {1, 2});
             },
                     18),
             "axes [1,2] are not supported");
  EXPECT_HAS(refusal([](Model& m) {
               m.floats("sc", {1, 1, 0.5f, 0.5f});
               auto* r = m.node("Resize", {"x", "", "sc"}, "y", "resize");
               attr_string(r, "mode", "linear");
               Model::int1(r, "antialias", 1);
             },
                     18),
             "antialias=1 is not supported");
  // opset 18's axes over H and W: two sizes
  EXPECT_EQ(refusal([](Model& m) {
              m.int64s("sz", {8, 6});
              Model::ints(m.node("Resize", {"x", "", "", "sz"}, "y", "resize"), "axes", {-2, -1});
            },
                    18),
            "(no InputError)");
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
  // dX rows [2, 4) take dY from the rows that read them (scanned here over every dY row).
  const OpAttrs& a = g.node(d).attrs;
  const ResizeAxis axis{6, 12, 2};
  IndexRange readers{12, 0};
  for (std::int64_t y = 0; y < 12; ++y)
    if (const IndexRange t = resize_taps(a, axis, y); t.first < 4 && t.second > 2)
      readers = {std::min(readers.first, y), y + 1};
  const Box block{{Range{0, 1}, Range{0, 8}, Range{2, 4}, Range{0, 6}}};
  const Box need = input_region(g, d, 0, block, Range{0, 1});
  EXPECT_EQ(need.r[kH], (Range{readers.first, readers.second}));
  EXPECT_EQ(need.r[kW], (Range{0, 12}));
  // The training graph reads back from its file as it was.
  const Graph back = parse_network_yaml(graph_yaml(g), "up.train.yaml");
  EXPECT_EQ(layer_table(back), layer_table(g));
  EXPECT_EQ(back.node(*back.find("up")).attrs, g.node(*g.find("up")).attrs);
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
