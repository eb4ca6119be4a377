// SPDX-License-Identifier: MIT
// What a Swin transformer's ONNX export needs beyond a ViT's: shape arithmetic on the Shape of
// activations (the pad to a multiple of the window), and an attention mask computed from
// compile-time tensors of any rank (ConstantOfShape, Range, ScatterND, Equal, Not, Where),
// all folded while importing. torchvision's swin_t is measured in the README.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "optimizer/cost/cost_model.h"
#include "optimizer/graph/op_cost.h"
#include "optimizer/partition/region.h"
#include "optimizer/partition/workload.h"
#include "optimizer/passes/autodiff.h"
#include "optimizer/passes/pass_manager.h"
#include "tests/optimizer/make_choice.h"
#include "tests/optimizer/onnx_model.h"

namespace nocflow::optimizer {
namespace {

const std::string kData = std::string(NOCFLOW_SOURCE_DIR) + "/tests/optimizer/data/";

/// ConstantOfShape(`shape`) filled with `value` of ONNX type `dtype` (INT64 or FLOAT).
void constant_of_shape(Model& m, const std::string& shape, const std::string& out, double value,
                       int dtype) {
  auto* a = m.node("ConstantOfShape", {shape}, out, out)->add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  a->mutable_t()->set_data_type(dtype);
  a->mutable_t()->add_dims(1);
  if (dtype == onnx::TensorProto::FLOAT)
    a->mutable_t()->add_float_data(static_cast<float>(value));
  else
    a->mutable_t()->add_int64_data(static_cast<std::int64_t>(value));
}

/// A rank-0 float Constant node (a float initializer would be a learned parameter).
void float_scalar(Model& m, const std::string& name, float value) {
  auto* a = m.node("Constant", {}, name, name)->add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  a->mutable_t()->set_data_type(onnx::TensorProto::FLOAT);
  a->mutable_t()->add_float_data(value);
}

TEST(OnnxSwin, PadsComputedFromAnActivationsShapeFoldIntoTheConvolution) {
  // torchvision's Swin pads H and W up to a multiple of the window: (w - H % w) % w, H read by
  // Shape and Gather from a tensor of run time (here a Relu's output).
  const std::int64_t h = 6, w = 5, window = 4;
  Model m({1, 3, h, w});
  m.node("Relu", {"x"}, "r", "relu");
  m.node("Shape", {"r"}, "shape", "shape");
  m.int64_scalar("two", 2);
  m.int64_scalar("three", 3);
  m.int64_scalar("window", window);
  Model::int1(m.node("Gather", {"shape", "two"}, "h", "gather_h"), "axis", 0);
  Model::int1(m.node("Gather", {"shape", "three"}, "w", "gather_w"), "axis", 0);
  for (const std::string side : {"h", "w"}) {
    m.node("Mod", {side, "window"}, side + "_rest", side + "_mod");
    m.node("Sub", {"window", side + "_rest"}, side + "_short", side + "_sub");
    m.node("Mod", {side + "_short", "window"}, side + "_pad", side + "_mod2");
    m.int64s(side + "_axis", {0});
    m.node("Unsqueeze", {side + "_pad", side + "_axis"}, side + "_pad_1d", side + "_unsqueeze");
  }
  m.int64s("zeros", {0, 0, 0, 0, 0, 0});
  Model::int1(m.node("Concat", {"zeros", "h_pad_1d", "w_pad_1d"}, "pads", "concat"), "axis", 0);
  m.node("Pad", {"r", "pads"}, "rp", "pad");
  m.weight("k", {4, 3, 3, 3});
  m.node("Conv", {"rp", "k"}, "y", "conv");
  const Graph g = m.load("swin_pad.onnx");
  const std::int64_t pad_h = (window - h % window) % window, pad_w = (window - w % window) % window;
  const Node& conv = g.node(*g.find("conv"));
  EXPECT_EQ(conv.attrs.pads, (std::array<std::int64_t, 4>{0, 0, pad_h, pad_w}));
  EXPECT_EQ(conv.output.shape, (Shape{1, 4, h + pad_h - 2, w + pad_w - 2}));
  EXPECT_EQ(g.num_nodes(), 3u);  // input, Relu, Conv: the arithmetic is gone
}

TEST(OnnxSwin, AConstantOfTheShapeOfAnActivationIsACompileTimeTensor) {
  Model m({1, 4, 8});
  m.node("Relu", {"x"}, "r", "relu");
  m.node("Shape", {"r"}, "s", "shape");
  constant_of_shape(m, "s", "ones", 1.0, onnx::TensorProto::FLOAT);
  m.node("Add", {"r", "ones"}, "y", "add");
  const Graph g = m.load("swin_constant_of_shape.onnx");
  const NodeId ones = g.input(*g.find("add"), 1);
  EXPECT_EQ(g.node(ones).kind, OpKind::Constant);
  EXPECT_EQ(g.node(ones).output.shape, (Shape{1, 4, 8}));
  EXPECT_EQ(g.node(ones).attrs.float_data, std::vector<double>(32, 1.0));
  EXPECT_FALSE(g.node(ones).attrs.trainable);
}

/// torchvision's shifted-window mask, exported as PyTorch 1.13 does at opset 13, on an
/// `size` x `size` map of `window` x `window` windows shifted by `shift`: zeros, each of the 9
/// regions [h_slices x w_slices] written its number by ScatterND at indices built from Range,
/// the map cut into windows, and 0 where two tokens of a window share a region, -100 elsewhere.
/// Added to the attention scores `x` ([windows, tokens, tokens]).
Model mask_model(std::int64_t size, std::int64_t window, std::int64_t shift) {
  const std::int64_t windows = (size / window) * (size / window), tokens = window * window;
  Model m({windows, tokens, tokens});
  m.int64s("map_shape", {size, size});
  constant_of_shape(m, "map_shape", "map0", 0.0, onnx::TensorProto::FLOAT);
  m.int64_scalar("zero", 0);
  m.int64_scalar("one", 1);
  m.int64s("minus_one", {-1});
  m.int64s("column", {-1, 1});
  const std::int64_t bounds[] = {0, size - window, size - shift, size};
  int region = 0;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j, ++region) {
      const std::string r = "r" + std::to_string(region) + "_";
      m.int64_scalar(r + "h0", bounds[i]);
      m.int64_scalar(r + "h1", bounds[i + 1]);
      m.int64_scalar(r + "w0", bounds[j]);
      m.int64_scalar(r + "w1", bounds[j + 1]);
      m.node("Range", {r + "h0", r + "h1", "one"}, r + "rows", r + "range_h");
      m.node("Range", {r + "w0", r + "w1", "one"}, r + "cols", r + "range_w");
      m.node("Reshape", {r + "rows", "column"}, r + "rows_2d", r + "reshape");
      m.node("Add", {r + "rows_2d", r + "cols"}, r + "grid", r + "add");  // [rows, cols]
      m.node("Shape", {r + "grid"}, r + "grid_shape", r + "shape");
      m.node("Expand", {r + "rows_2d", r + "grid_shape"}, r + "i", r + "expand_h");
      m.node("Expand", {r + "cols", r + "grid_shape"}, r + "j", r + "expand_w");
      m.node("Unsqueeze", {r + "i", "minus_one"}, r + "i1", r + "unsqueeze_h");
      m.node("Unsqueeze", {r + "j", "minus_one"}, r + "j1", r + "unsqueeze_w");
      Model::int1(m.node("Concat", {r + "i1", r + "j1"}, r + "indices", r + "concat"), "axis", -1);
      constant_of_shape(m, r + "grid_shape", r + "updates", region, onnx::TensorProto::FLOAT);
      const std::string before = region == 0 ? "map0" : "r" + std::to_string(region - 1) + "_map";
      m.node("ScatterND", {before, r + "indices", r + "updates"}, r + "map", r + "scatter");
    }
  const std::int64_t per_side = size / window;
  m.int64s("blocks", {per_side, window, per_side, window});
  m.node("Reshape", {"r8_map", "blocks"}, "blocked", "blocked");
  Model::ints(m.node("Transpose", {"blocked"}, "windows", "windows"), "perm", {0, 2, 1, 3});
  m.int64s("flat", {windows, tokens});
  m.node("Reshape", {"windows", "flat"}, "ids", "ids");
  m.int64s("axis1", {1});
  m.int64s("axis2", {2});
  m.node("Unsqueeze", {"ids", "axis1"}, "ids_row", "ids_row");
  m.node("Unsqueeze", {"ids", "axis2"}, "ids_col", "ids_col");
  m.node("Sub", {"ids_row", "ids_col"}, "diff", "diff");  // [windows, tokens, tokens]
  float_scalar(m, "f0", 0.0f);
  float_scalar(m, "f100", -100.0f);
  m.node("Equal", {"diff", "f0"}, "same", "same");
  m.node("Not", {"same"}, "other", "other");
  m.node("Where", {"other", "f100", "diff"}, "masked", "where_other");
  m.node("Where", {"same", "f0", "masked"}, "mask", "where_same");
  m.node("Add", {"x", "mask"}, "y", "add_mask");
  return m;
}

TEST(OnnxSwin, TheShiftedWindowMaskIsComputedWhileImporting) {
  const std::int64_t size = 8, window = 4, shift = 2;
  Model m = mask_model(size, window, shift);
  const Graph g = m.load("swin_mask.onnx");
  const NodeId add = *g.find("add_mask");
  const Node& mask = g.node(g.input(add, 1));
  ASSERT_EQ(mask.kind, OpKind::Constant);
  const std::int64_t windows = 4, tokens = window * window;
  ASSERT_EQ(mask.output.shape, (Shape{windows, tokens, tokens}));
  EXPECT_EQ(g.node(add).output.shape, (Shape{windows, tokens, tokens}));
  // The mask as torchvision's shifted_window_attention computes it: the region of each pixel,
  // then per window, -100 between tokens of different regions.
  auto band = [&](std::int64_t p) { return p < size - window ? 0 : p < size - shift ? 1 : 2; };
  std::vector<double> expected;
  for (std::int64_t wh = 0; wh < size / window; ++wh)
    for (std::int64_t ww = 0; ww < size / window; ++ww)
      for (std::int64_t a = 0; a < tokens; ++a)
        for (std::int64_t b = 0; b < tokens; ++b) {
          auto region = [&](std::int64_t t) {
            return band(wh * window + t / window) * 3 + band(ww * window + t % window);
          };
          expected.push_back(region(a) == region(b) ? 0.0 : -100.0);
        }
  EXPECT_EQ(mask.attrs.float_data, expected);
  EXPECT_FALSE(mask.attrs.trainable);
  // Nothing of the arithmetic is left: the input, the mask and the Add.
  EXPECT_EQ(g.num_nodes(), 3u);
}

TEST(OnnxSwin, ALargeMaskKeepsItsShapeButNotItsValuesInTheGraph) {
  // 28 x 28 in 7 x 7 windows: 16 x 49 x 49 = 38,416 values, more than a graph constant holds.
  Model m = mask_model(28, 7, 3);
  const Graph g = m.load("swin_mask_large.onnx");
  const Node& mask = g.node(g.input(*g.find("add_mask"), 1));
  ASSERT_EQ(mask.kind, OpKind::Constant);
  EXPECT_EQ(mask.output.shape, (Shape{16, 49, 49}));
  EXPECT_TRUE(mask.attrs.float_data.empty());
  EXPECT_EQ(mask.output.bytes(), 16 * 49 * 49 * 4);  // read by the Add as a float32 tensor
  // Not a parameter, but the Add holds it with its weights: as much of it as of its input x,
  // which has its shape (the part its block reads; preloaded, so no layer sends it).
  const Workload w = build_workload(g);
  ASSERT_EQ(w.layers.size(), 1u);
  EXPECT_EQ(w.layers[0].weight_bytes, 0);
  const double bytes = static_cast<double>(mask.output.bytes());
  const Choice whole = make({}), part = make({{PartDim::Batch, 4}, {PartDim::OfmpH, 7}});
  EXPECT_DOUBLE_EQ(layer_shares(w.layers[0], whole).weights, bytes);
  EXPECT_DOUBLE_EQ(layer_shares(w.layers[0], part).weights, bytes / 28);
  for (const Choice& c : {whole, part})
    EXPECT_DOUBLE_EQ(layer_shares(w.layers[0], c).weights, layer_shares(w.layers[0], c).input);
}

TEST(OnnxSwin, CompileTimeOperatorsOfTensorsOfRunTimeAreRefusedNamingTheNode) {
  {
    Model m({1, 4, 8});
    m.int64_scalar("one", 1);
    m.node("ReduceMean", {"x"}, "mean", "mean");
    m.node("Range", {"one", "mean", "one"}, "y", "range");
    EXPECT_HAS(m.import("swin_range_runtime.onnx"),
               "node 'range' (Range): is supported only on compile-time tensors");
  }
  {
    Model m({1, 4, 8});
    m.weight("other", {1, 4, 8});
    m.node("Equal", {"x", "other"}, "same", "equal");
    m.node("Not", {"same"}, "y", "not");
    EXPECT_HAS(m.import("swin_not_runtime.onnx"),
               "node 'not' (Not): is supported only on compile-time tensors");
  }
  {
    Model m({2, 3});
    m.int64s("index", {0, 0, 2, 2});
    m.int64s("pairs", {2, 2});
    m.node("Reshape", {"index", "pairs"}, "indices", "indices");
    m.node("ScatterND", {"x", "indices", "x"}, "y", "scatter");
    EXPECT_HAS(m.import("swin_scatter_runtime.onnx"),
               "node 'scatter' (ScatterND): is supported only on compile-time tensors");
  }
  {
    Model m({2, 3});
    m.int64s("shape", {2, 3});
    constant_of_shape(m, "shape", "zeros", 0.0, onnx::TensorProto::FLOAT);
    m.int64s("index", {0, 3});
    m.int64s("pair", {1, 2});
    m.node("Reshape", {"index", "pair"}, "indices", "indices");
    m.int64s("one_shape", {1});
    constant_of_shape(m, "one_shape", "update", 1.0, onnx::TensorProto::FLOAT);
    m.node("ScatterND", {"zeros", "indices", "update"}, "mask", "scatter");
    m.node("Add", {"x", "mask"}, "y", "add");
    EXPECT_HAS(m.import("swin_scatter_range.onnx"),
               "node 'scatter' (ScatterND): index 3 out of range for axis 1 of [2,3]");
  }
}

TEST(OnnxSwin, ADropoutsUnreadMaskOutputIsLeftOut) {
  // F.dropout(training=True) exports Dropout(x, ratio, training_mode) with a mask output.
  Model m({1, 4, 8});
  float_scalar(m, "ratio", 0.0f);
  auto* d = m.node("Dropout", {"x", "ratio"}, "y", "dropout");
  d->add_output("mask");
  EXPECT_EQ(count_kind(m.load("swin_dropout.onnx"), OpKind::Dropout), 1);
  Model read({1, 4, 8});
  float_scalar(read, "ratio", 0.0f);
  read.node("Dropout", {"x", "ratio"}, "d", "dropout")->add_output("mask");
  Model::int1(read.node("Cast", {"mask"}, "y", "cast"), "to", onnx::TensorProto::FLOAT);
  EXPECT_HAS(read.import("swin_dropout_mask.onnx"),
             "tensor 'mask' used by node 'cast' is an output of node 'dropout'");
}

TEST(OnnxSwin, ABatchNormsUnreadTrainingOutputsAreLeftOut) {
  // A training-mode export (PyTorch's TrainingMode.TRAINING keeps batch norms, which eval mode
  // folds into the convolutions) gives BatchNormalization its running mean and variance as
  // outputs (opset 13: four more).
  auto model = [](Model& m, const char* out) {
    for (const char* p : {"s", "b", "mean", "var"}) m.weight(p, {4});
    auto* bn = m.node("BatchNormalization", {"x", "s", "b", "mean", "var"}, out, "bn");
    for (const char* o : {"running_mean", "running_var", "saved_mean", "saved_var"})
      bn->add_output(o);
  };
  Model m({1, 4, 8, 8});
  model(m, "y");
  EXPECT_EQ(count_kind(m.load("bn_training.onnx"), OpKind::BatchNorm), 1);
  Model read({1, 4, 8, 8});
  model(read, "d");
  read.node("Relu", {"running_mean"}, "y", "reads_stats");
  EXPECT_HAS(read.import("bn_training_read.onnx"),
             "tensor 'running_mean' used by node 'reads_stats' is an output of node 'bn'");
}

TEST(OnnxSwin, TorchvisionsSwinDesignLoadsWithPyTorchsMacs) {
  // scripts/export_onnx.py's swin_tiny: torchvision's SwinTransformer at 56 x 56, embedding 16,
  // depths [2, 2], heads [1, 2], 7 x 7 windows: a shifted block with its mask, patch merging
  // (strided Slices), a stage in one window. MACs and parameters counted by PyTorch's hooks.
  std::ifstream in(kData + "torchvision_reference.json");
  const auto ref = nlohmann::json::parse(in).at("swin_tiny");
  Graph g = load_network(kData + "swin_tiny.onnx");
  run_passes(g, "default");
  EXPECT_EQ(g.node(g.outputs().at(0)).output.shape, (Shape{1, 1000}));
  const GraphTotals t = graph_totals(g);
  EXPECT_EQ(t.macs, ref.at("macs").get<std::int64_t>());
  // The export stores each block's relative position bias expanded from its table of
  // (2·7 − 1)² rows per head to the 49 × 49 pairs of tokens that index it.
  const std::int64_t heads = 1 * 2 + 2 * 2;
  EXPECT_EQ(t.params, ref.at("params").get<std::int64_t>() + heads * (49 * 49 - 13 * 13));
}

TEST(OnnxSwin, AStridedSlicesGradientPutsEachRowBackInItsPlace) {
  // x[:, 1::2] of 8 channels trained: dX channel c holds dY channel (c − 1) / 2 when c is odd.
  Model m({1, 8, 2, 2});
  m.weight("w", {1, 8, 2, 2});  // so that the slice's input has a gradient
  m.node("Mul", {"x", "w"}, "xw", "scale");
  m.int64s("s", {1});
  m.int64s("e", {8});
  m.int64s("ax", {1});
  m.int64s("st", {2});
  m.node("Slice", {"xw", "s", "e", "ax", "st"}, "y", "slice");
  Graph g = m.load("swin_slice_grad.onnx");
  run_passes(g, "default");
  const Graph train = training_graph(g, {});
  NodeId grad = 0;  // the one Grad of a Slice
  for (NodeId id : train.node_ids())
    if (train.node(id).kind == OpKind::Grad && train.node(id).attrs.grad_of == OpKind::Slice)
      grad = id;
  ASSERT_EQ(train.node(grad).kind, OpKind::Grad);
  ASSERT_EQ(train.node(grad).output.shape, (Shape{1, 8, 2, 2}));
  auto dy_channels = [&](std::int64_t lo, std::int64_t hi) {  // the dY channels dX [lo, hi) reads
    const Box block{{Range{0, 1}, Range{lo, hi}, Range{0, 2}, Range{0, 2}}};
    return input_region(train, grad, 0, block, Range{0, 1}).r[1];
  };
  for (std::int64_t lo = 0; lo < 8; ++lo)
    for (std::int64_t hi = lo + 1; hi <= 8; ++hi) {
      std::int64_t first = 4, last = -1;  // of the odd channels in [lo, hi)
      for (std::int64_t c = lo; c < hi; ++c)
        if (c % 2 == 1) first = std::min(first, (c - 1) / 2), last = std::max(last, (c - 1) / 2);
      const Range r = dy_channels(lo, hi);
      if (last < 0)
        EXPECT_TRUE(r.empty()) << lo << ".." << hi;
      else
        EXPECT_EQ(r, (Range{first, last + 1})) << lo << ".." << hi;
    }
}

/// A rank-0 Constant node of ONNX integer type `dtype` (INT64 or INT32).
void int_scalar(Model& m, const std::string& name, std::int64_t value, int dtype) {
  auto* a = m.node("Constant", {}, name, name)->add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  a->mutable_t()->set_data_type(dtype);
  if (dtype == onnx::TensorProto::INT32)
    a->mutable_t()->add_int32_data(static_cast<std::int32_t>(value));
  else
    a->mutable_t()->add_int64_data(value);
}

/// The float values of compile-time tensor `name` as the Add reading it holds them: Cast to
/// float, added to the input `x` (of its shape).
std::vector<double> folded(Model& m, const std::string& name, const std::string& file) {
  auto* cast = m.node("Cast", {name}, name + "_f", name + "_cast");
  Model::int1(cast, "to", onnx::TensorProto::FLOAT);
  m.node("Add", {"x", name + "_f"}, "y", "add");
  const Graph g = m.load(file);
  return g.node(g.input(*g.find("add"), 1)).attrs.float_data;
}

// Found by a review of the import's folding: each case folded to a wrong value or shape.
TEST(OnnxSwin, RangesCountAndRoundAsOnnxDoes) {
  {  // near INT64_MAX the span passes a double's precision: 5 elements, not 0
    Model m({5});
    int_scalar(m, "start", std::int64_t{1} << 62, onnx::TensorProto::INT64);
    int_scalar(m, "limit", (std::int64_t{1} << 62) + 5, onnx::TensorProto::INT64);
    int_scalar(m, "one", 1, onnx::TensorProto::INT64);
    m.node("Range", {"start", "limit", "one"}, "r", "range");
    EXPECT_EQ(folded(m, "r", "range_big.onnx").size(), 5u);
  }
  {  // 1000 elements up to INT64_MAX (counted in double: 1024), downwards alike
    Model m({1000});
    int_scalar(m, "start", INT64_MAX - 1000, onnx::TensorProto::INT64);
    int_scalar(m, "limit", INT64_MAX, onnx::TensorProto::INT64);
    int_scalar(m, "one", 1, onnx::TensorProto::INT64);
    m.node("Range", {"start", "limit", "one"}, "r", "range");
    EXPECT_EQ(folded(m, "r", "range_top.onnx").size(), 1000u);
  }
  {  // float32 steps: 0.1f * 3 rounds to 0.3f as float32 arithmetic does
    Model m({10});
    float_scalar(m, "start", 0.0f);
    float_scalar(m, "limit", 1.0f);
    float_scalar(m, "delta", 0.1f);
    float_scalar(m, "third", 0.3f);
    m.node("Range", {"start", "limit", "delta"}, "r", "range");
    m.node("Equal", {"r", "third"}, "eq", "equal");
    const std::vector<double> eq = folded(m, "eq", "range_float.onnx");
    ASSERT_EQ(eq.size(), 10u);
    for (std::size_t i = 0; i < eq.size(); ++i)
      EXPECT_EQ(eq[i], i == 3 ? 1.0 : 0.0) << i;  // numpy: arange(0, 1, 0.1, float32) == 0.3f
  }
}

TEST(OnnxSwin, Int32ArithmeticWrapsAt32Bits) {
  Model m({1});
  int_scalar(m, "max", INT32_MAX, onnx::TensorProto::INT32);
  int_scalar(m, "one", 1, onnx::TensorProto::INT32);
  m.node("Add", {"max", "one"}, "sum", "sum");
  m.node("Unsqueeze", {"sum", "axes"}, "s", "unsqueeze");
  m.int64s("axes", {0});
  EXPECT_EQ(folded(m, "s", "int32_wrap.onnx"), (std::vector<double>{INT32_MIN}));
}

TEST(OnnxSwin, ASliceWithAHugeStepTakesOneRow) {
  Model m({1, 8, 4, 4});
  m.int64s("starts", {0});
  m.int64s("ends", {8});
  m.int64s("axes", {1});
  m.int64s("steps", {INT64_MAX});
  m.node("Slice", {"x", "starts", "ends", "axes", "steps"}, "y", "slice");
  const Graph g = m.load("slice_huge_step.onnx");
  EXPECT_EQ(g.node(*g.find("slice")).output.shape, (Shape{1, 1, 4, 4}));
}

TEST(OnnxSwin, ASliceBeyondRank4ReadsOnlyWhatItTakes) {
  // [1,4,6,2,2] sliced to rows 1..2 of axis 1, inside the view's N (axes 0-1, 4 rows): an
  // output block of its N reads those rows of the input's N, and nothing more.
  Model m({1, 4, 6, 2, 2});
  m.int64s("starts", {1});
  m.int64s("ends", {3});
  m.int64s("axes", {1});
  m.node("Slice", {"x", "starts", "ends", "axes"}, "y", "slice");
  const Graph g = m.load("slice_rank5.onnx");
  const NodeId slice = *g.find("slice");
  Box out = full_box(view4(g.node(slice).output.shape));
  ASSERT_EQ(out.r[kN].hi, 2);
  const Box all = input_region(g, slice, 0, out, Range{0, 1});
  EXPECT_EQ(all.r[kN], (Range{1, 3}));
  EXPECT_EQ(all.volume(), out.volume());
  out.r[kN] = {1, 2};  // the second row taken
  EXPECT_EQ(input_region(g, slice, 0, out, Range{0, 1}).r[kN], (Range{2, 3}));
}

TEST(OnnxSwin, AWindowTensorSplitsByWindowsHeadsTokensAndFeatures) {
  // Beyond rank 4 the leading axes are the view's N: the windows' q, k, v as [3, 8, 2, 9, 4]
  // (q/k/v, windows, heads, tokens, features) split BATCH over the 24 windows of q, k and v,
  // and OUTP, OFMP_H, OFMP_W over heads, tokens and features, as a 4-D tensor would.
  Model m({3, 8, 2, 9, 4});
  m.node("Relu", {"x"}, "y", "relu");
  const Graph g = m.load("relu_rank5.onnx");
  const NodeId relu = *g.find("relu");
  EXPECT_EQ(view4(g.node(relu).output.shape), (Dims4{24, 2, 9, 4}));
  EXPECT_EQ(legal_part_dims(g, relu).str(), "BATCH,OUTP,OFMP_H,OFMP_W");
}

TEST(OnnxSwin, CompileTimeTensorsAreBoundedInAll) {
  // 17 tensors of 2^20 values each: within the per-tensor bound, past the total.
  Model m({4});
  m.int64s("shape", {std::int64_t{1} << 20});
  constant_of_shape(m, "shape", "c0", 1.0, onnx::TensorProto::FLOAT);
  for (int i = 1; i <= 16; ++i)
    m.node("Add", {"c" + std::to_string(i - 1), "c" + std::to_string(i - 1)},
           "c" + std::to_string(i), "add" + std::to_string(i));
  m.node("Relu", {"x"}, "y", "relu");
  EXPECT_HAS(m.import("fold_total.onnx"),
             "node 'add16' (Add): the compile-time tensors computed while importing exceed "
             "16777216 elements in all");
}

}  // namespace
}  // namespace nocflow::optimizer
