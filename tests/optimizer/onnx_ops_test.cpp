// SPDX-License-Identifier: MIT
// ONNX operators beyond the first zoo's: Pad (folded into the window operator it feeds), Slice
// (one axis, also on shape arithmetic), HardSigmoid, HardSwish, LeakyRelu, PRelu, Mod (Split:
// onnx_split_test.cpp);
// and torchvision models that need them, against PyTorch's own counts.
#include <gtest/gtest.h>

#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>

#include "optimizer/cost/cost_model.h"
#include "optimizer/frontend/load_network.h"
#include "optimizer/frontend/onnx_import.h"
#include "optimizer/graph/op_cost.h"
#include "optimizer/partition/region.h"
#include "optimizer/partition/workload.h"
#include "optimizer/passes/autodiff.h"
#include "optimizer/passes/pass_manager.h"
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

void attr_float(onnx::NodeProto* n, const std::string& name, float value) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(value);
}

TEST(OnnxPad, IsFoldedIntoTheAveragePoolOrConvItFeeds) {
  {  // PyTorch's AvgPool2d(3, 1, padding=1) (count_include_pad): Pad, then an unpadded pool
    Model m({1, 3, 8, 8});
    m.int64s("p", {0, 0, 1, 2, 0, 0, 1, 2});
    m.node("Pad", {"x", "p"}, "xp", "pad");
    Model::ints(m.node("AveragePool", {"xp"}, "y", "pool"), "kernel_shape", {3, 3});
    const Graph g = m.load("pad_avgpool.onnx");
    EXPECT_EQ(g.num_nodes(), 2u);  // the input and the pool
    const Node& pool = g.node(*g.find("pool"));
    EXPECT_EQ(pool.attrs.pads, (std::array<std::int64_t, 4>{1, 2, 1, 2}));
    EXPECT_TRUE(pool.attrs.count_include_pad);  // the padded zeros are averaged in
    EXPECT_EQ(pool.output.shape, (Shape{1, 3, 8, 10}));
  }
  {  // a convolution's own pads add to the Pad's
    Model m({1, 3, 8, 8});
    m.weight("w", {4, 3, 3, 3});
    m.int64s("p", {0, 0, 1, 0, 0, 0, 1, 0});
    m.node("Pad", {"x", "p"}, "xp", "pad");
    Model::ints(m.node("Conv", {"xp", "w"}, "y", "conv"), "pads", {0, 1, 0, 1});
    const Graph g = m.load("pad_conv.onnx");
    const Node& conv = g.node(*g.find("conv"));
    EXPECT_EQ(conv.attrs.pads, (std::array<std::int64_t, 4>{1, 1, 1, 1}));
    EXPECT_EQ(conv.output.shape, (Shape{1, 4, 8, 8}));
    EXPECT_EQ(op_cost(g, *g.find("conv")).macs, 4 * 8 * 8 * 27);
  }
  {  // padding nothing is an identity, whatever reads it
    Model m({1, 3, 8, 8});
    m.int64s("p", {0, 0, 0, 0, 0, 0, 0, 0});
    m.node("Pad", {"x", "p"}, "xp", "pad");
    m.node("Relu", {"xp"}, "y", "relu");
    const Graph g = m.load("pad_none.onnx");
    EXPECT_EQ(g.num_nodes(), 2u);
    EXPECT_EQ(g.node(*g.find("relu")).output.shape, (Shape{1, 3, 8, 8}));
  }
}

TEST(OnnxPad, WhatCannotBeFoldedIsRefusedSayingWhy) {
  auto pad_then = [](const std::string& op, const std::vector<std::int64_t>& pads,
                     const std::string& mode, const std::string& file) {
    Model m({1, 3, 8, 8});
    m.int64s("p", pads);
    auto* pad = m.node("Pad", {"x", "p"}, "xp", "pad");
    if (!mode.empty()) attr_string(pad, "mode", mode);
    m.node(op, {"xp"}, "y", "next");
    return m.import(file);
  };
  EXPECT_HAS(pad_then("Relu", {0, 0, 1, 1, 0, 0, 1, 1}, "", "pad_relu.onnx"),
             "node 'next' reads the output of Pad 'pad', which is supported only before a Conv, "
             "MaxPool or AveragePool");
  EXPECT_HAS(pad_then("GlobalAveragePool", {0, 0, 1, 1, 0, 0, 1, 1}, "reflect", "pad_reflect.onnx"),
             "node 'pad' (Pad): mode 'reflect' is not supported (only constant)");
  EXPECT_HAS(pad_then("GlobalAveragePool", {0, 1, 0, 0, 0, 1, 0, 0}, "", "pad_channels.onnx"),
             "node 'pad' (Pad): pads [0,1,0,0,0,1,0,0]: it pads axis 1 of a [1,3,8,8] tensor "
             "and feeds GlobalAveragePool 'next'; only a Pad of H and W (axes 2 and 3 of N, C, "
             "H, W) with zeros that feeds a Conv, MaxPool or AveragePool is supported");
  EXPECT_HAS(pad_then("GlobalAveragePool", {0, 0, -1, 0, 0, 0, 0, 0}, "", "pad_crop.onnx"),
             "negative pads (cropping) are not supported");
  // pads for another rank, even all zeros (which pass the input through), name the tensor
  EXPECT_HAS(pad_then("Relu", {0, 0, 0, 0, 0, 0}, "", "pad_count.onnx"),
             "node 'pad' (Pad): pads [0,0,0,0,0,0]: 6 values for a [1,3,8,8] tensor (ONNX gives "
             "each of its 4 axes a begin and an end)");
  {  // a ceil-mode window may start in the Pad's end padding, never in a pool's own
    Model m({1, 3, 5, 5});
    m.int64s("p", {0, 0, 0, 0, 0, 0, 2, 2});
    m.node("Pad", {"x", "p"}, "xp", "pad");
    auto* pool = m.node("MaxPool", {"xp"}, "y", "pool");
    Model::ints(pool, "kernel_shape", {2, 2});
    Model::ints(pool, "strides", {2, 2});
    Model::int1(pool, "ceil_mode", 1);
    EXPECT_HAS(m.import("pad_ceil.onnx"),
               "node 'pool' (MaxPool): ceil_mode with the bottom or right padding of Pad 'pad'");
  }
  {  // a pool that leaves its own padding out of the average cannot take the Pad's in
    Model m({1, 3, 8, 8});
    m.int64s("p", {0, 0, 1, 1, 0, 0, 1, 1});
    m.node("Pad", {"x", "p"}, "xp", "pad");
    auto* pool = m.node("AveragePool", {"xp"}, "y", "pool");
    Model::ints(pool, "kernel_shape", {3, 3});
    Model::ints(pool, "pads", {1, 1, 1, 1});
    EXPECT_HAS(m.import("pad_mixed.onnx"),
               "leaves its own pads out of the average but must count the zeros of Pad 'pad' in");
  }
  {  // a Pad as the graph's output
    Model m({1, 3, 8, 8});
    m.int64s("p", {0, 0, 1, 1, 0, 0, 1, 1});
    m.node("Pad", {"x", "p"}, "y", "pad");
    EXPECT_HAS(m.import("pad_out.onnx"), "graph output reads the output of Pad 'pad'");
  }
}

TEST(OnnxPad, OfOtherAxesThanHAndWSaysWhichItPadsWhatItFeedsAndWhatIsSupported) {
  const std::string supported =
      "; only a Pad of H and W (axes 2 and 3 of N, C, H, W) with zeros that feeds a Conv, "
      "MaxPool or AveragePool is supported";
  {  // Swin's pad to whole windows: H and W of a channels-last tensor, before a Reshape
    Model m({1, 5, 5, 3});
    m.int64s("p", {0, 0, 0, 0, 0, 2, 2, 0});
    m.node("Pad", {"x", "p"}, "xp", "attn/Pad");
    m.int64s("windows", {1, 7, 7, 3});
    m.node("Reshape", {"xp", "windows"}, "y", "attn/Reshape");
    EXPECT_HAS(m.import("pad_channels_last.onnx"),
               "node 'attn/Pad' (Pad): pads [0,0,0,0,0,2,2,0]: it pads axes 1 and 2 of a "
               "[1,5,5,3] tensor and feeds Reshape 'attn/Reshape'" + supported);
  }
  {  // a rank-6 tensor, read by two nodes and the graph's output
    Model m({1, 2, 3, 4, 5, 6});
    m.int64s("p", {0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1});
    m.node("Pad", {"x", "p"}, "y", "pad");
    m.node("Relu", {"y"}, "r", "relu");
    m.node("Sigmoid", {"y"}, "s", "sigmoid");
    EXPECT_HAS(m.import("pad_rank6.onnx"),
               "pads [0,0,1,0,0,0,0,0,0,0,0,1]: it pads axes 2 and 5 of a [1,2,3,4,5,6] tensor "
               "and feeds Relu 'relu', Sigmoid 'sigmoid' and the graph's output" + supported);
  }
  {  // padding nothing, of any rank, is its input
    Model m({1, 2, 3});
    m.int64s("p", {0, 0, 0, 0, 0, 0});
    m.node("Pad", {"x", "p"}, "xp", "pad");
    m.node("Relu", {"xp"}, "y", "relu");
    const Graph g = m.load("pad_none_rank3.onnx");
    EXPECT_EQ(g.node(*g.find("relu")).output.shape, (Shape{1, 2, 3}));
  }
}

TEST(OnnxSlice, OnShapeArithmeticBecomesAOneAxisSliceOnceFolded) {
  // ShuffleNet's channel split: sizes computed from the input's shape at run time.
  Model m({1, 8, 4, 4});
  m.int64s("one", {1});
  m.int64s("two", {2});
  m.int64s("zero", {0});
  m.int64s("end", {std::numeric_limits<std::int64_t>::max()});
  m.node("Shape", {"x"}, "s", "shape");
  m.node("Slice", {"s", "one", "two"}, "c", "channels");  // [8], a slice of a shape value
  m.node("Div", {"c", "two"}, "h", "half");
  m.node("Slice", {"x", "zero", "h", "one"}, "a", "first");
  m.node("Slice", {"x", "h", "end", "one"}, "b", "second");
  Model::int1(m.node("Concat", {"b", "a"}, "y", "swap"), "axis", 1);
  Graph g = m.load("slice_shape.onnx");
  EXPECT_EQ(g.node(*g.find("first")).output.shape, (Shape{1, 4, 4, 4}));
  EXPECT_EQ(g.node(*g.find("second")).output.shape, (Shape{1, 4, 4, 4}));
  EXPECT_FALSE(g.find("channels"));  // x's shape is known while importing: folded there
  // Unfolded (--passes none), a Slice's starts and ends are whole-tensor operands.
  const Box block{{Range{0, 1}, Range{0, 4}, Range{0, 4}, Range{0, 4}}};
  EXPECT_EQ(input_region(g, *g.find("second"), 1, block, Range{0, 1}).volume(), 1);  // starts
  run_passes(g, "default");
  EXPECT_EQ(count_kind(g, OpKind::Shape), 0);  // the arithmetic is folded away
  for (const char* name : {"first", "second"}) {
    const NodeId id = *g.find(name);
    EXPECT_EQ(g.inputs(id).size(), 1u) << name;  // starts and ends taken into the attributes
    EXPECT_EQ(g.node(id).attrs.axis, 1);
  }
  EXPECT_EQ(g.node(*g.find("first")).attrs.offset, 0);
  EXPECT_EQ(g.node(*g.find("second")).attrs.offset, 4);
  EXPECT_EQ(g.node(*g.find("swap")).output.shape, (Shape{1, 8, 4, 4}));
}

TEST(OnnxSlice, OfTheWholeTensorIsRemovedAsAnIdentity) {
  // x[:, 0:], as exporters write a full slice: nothing to copy.
  Model m({1, 8, 4, 4});
  m.int64s("zero", {0});
  m.int64s("end", {std::numeric_limits<std::int64_t>::max()});
  m.int64s("one", {1});
  m.node("Slice", {"x", "zero", "end", "one"}, "s", "all");
  m.node("Relu", {"s"}, "y", "relu");
  Graph g = m.load("slice_all.onnx");
  EXPECT_EQ(g.node(*g.find("all")).output.shape, (Shape{1, 8, 4, 4}));
  run_passes(g, "default");
  EXPECT_EQ(count_kind(g, OpKind::Slice), 0);
  EXPECT_EQ(g.node(g.input(*g.find("relu"), 0)).kind, OpKind::Input);
}

TEST(OnnxSlice, StepsAreTakenSeveralAxesAndNegativeStepsRefused) {
  {  // Swin's patch merging, x[:, 1::2]: channels 1, 3, 5 and 7
    Model m({1, 8, 4, 4});
    m.int64s("s", {1});
    m.int64s("e", {std::numeric_limits<std::int64_t>::max()});
    m.int64s("ax", {1});
    m.int64s("st", {2});
    m.node("Slice", {"x", "s", "e", "ax", "st"}, "y", "slice");
    Graph g = m.load("slice_step.onnx");
    run_passes(g, "default");
    const NodeId slice = *g.find("slice");
    EXPECT_EQ(g.node(slice).output.shape, (Shape{1, 4, 4, 4}));
    EXPECT_EQ(g.node(slice).attrs.offset, 1);
    EXPECT_EQ(g.node(slice).attrs.step, 2);
    // Output channels [1, 3) are input channels 3 and 5, not channel 4 between them.
    const Box block{{Range{0, 1}, Range{1, 3}, Range{0, 4}, Range{0, 4}}};
    EXPECT_EQ(input_region(g, slice, 0, block, Range{0, 1}).r[1], (Range{3, 6, 2}));
    EXPECT_EQ(input_region(g, slice, 0, block, Range{0, 1}).volume(), 2 * 4 * 4);
  }
  {
    Model m({1, 8, 4, 4});
    m.int64s("s", {4});
    m.int64s("e", {0});
    m.int64s("ax", {1});
    m.int64s("st", {-1});
    m.node("Slice", {"x", "s", "e", "ax", "st"}, "y", "slice");
    EXPECT_HAS(m.import("slice_negative_step.onnx"),
               "node 'slice' (Slice): step -1 is not supported (only positive ones)");
  }
  {
    Model m({1, 8, 4, 4});
    m.int64s("s", {0, 0});
    m.int64s("e", {4, 2});
    m.int64s("ax", {1, 2});
    m.node("Slice", {"x", "s", "e", "ax"}, "y", "slice");
    EXPECT_HAS(m.import("slice_axes.onnx"), "slices more than one axis; only one is supported");
  }
}

TEST(OnnxActivations, HardSigmoidHardSwishAndLeakyReluKeepTheirParameters) {
  Model m({1, 4, 2, 2});
  m.m.mutable_opset_import(0)->set_version(14);  // HardSwish's first
  attr_float(m.node("HardSigmoid", {"x"}, "a", "hs"), "alpha", 0.25f);
  m.node("HardSwish", {"a"}, "b", "hsw");
  m.node("LeakyRelu", {"b"}, "c", "lr1");
  attr_float(m.node("LeakyRelu", {"b"}, "d", "lr2"), "alpha", 0.5f);
  m.node("LeakyRelu", {"b"}, "e", "lr3");
  m.node("Add", {"c", "d"}, "f", "add1");
  m.node("Add", {"f", "e"}, "y", "add2");
  Graph g = m.load("activations.onnx");
  EXPECT_EQ(g.node(*g.find("hs")).attrs.alpha, 0.25);
  EXPECT_EQ(g.node(*g.find("hs")).attrs.beta, 0.5);  // ONNX's default
  EXPECT_EQ(g.node(*g.find("lr1")).attrs.alpha, 0.01);
  EXPECT_EQ(g.node(*g.find("hsw")).output.shape, (Shape{1, 4, 2, 2}));
  run_passes(g, "cse,dce");                        // CSE redirects the uses, DCE drops the copy
  EXPECT_EQ(count_kind(g, OpKind::LeakyRelu), 2);  // lr1 and lr3 alike, lr2 another slope
}

TEST(OnnxActivations, PReluReadsItsSlopesAsTrainedParametersAndFusesAfterAConv) {
  // conv → PRelu with one slope per channel ([C, 1, 1], as PyTorch's nn.PReLU(C) exports).
  Model m({1, 3, 8, 8});
  m.weight("w", {4, 3, 3, 3});
  m.weight("slope", {4, 1, 1});
  Model::ints(m.node("Conv", {"x", "w"}, "c", "conv"), "kernel_shape", {3, 3});
  m.node("PRelu", {"c", "slope"}, "y", "prelu");
  Graph g = m.load("prelu.onnx");
  const NodeId prelu = *g.find("prelu");
  EXPECT_EQ(g.node(prelu).kind, OpKind::PRelu);
  EXPECT_EQ(g.node(prelu).output.shape, (Shape{1, 4, 6, 6}));
  EXPECT_EQ(op_cost(g, prelu).vector_ops, 4 * 6 * 6);  // a select per element
  EXPECT_EQ(op_cost(g, prelu).params, 4);              // the slopes, held by their reader
  const Box block{{Range{0, 1}, Range{1, 3}, Range{2, 4}, Range{0, 6}}};
  EXPECT_EQ(input_region(g, prelu, 0, block, Range{0, 1}).r, block.r);  // element-wise in x
  Graph fused = g;
  run_passes(fused, "default");
  ASSERT_EQ(count_kind(fused, OpKind::Fused), 1);
  EXPECT_EQ(fused.node(*fused.find("conv")).op_label(), "Conv+PRelu");
  // The layer holds the conv's 108 weights and the 4 slopes (4-byte floats). Under INPP the
  // members split the conv's weights, and each holds every slope: it applies the tail whole.
  const Workload w = build_workload(fused);
  const Layer& layer = w.layers.front();
  EXPECT_EQ(layer.weight_bytes, (108 + 4) * 4);
  EXPECT_EQ(layer.tail_weight_bytes, 4 * 4);
  EXPECT_DOUBLE_EQ(layer_shares(layer, parse_choice("INPP=3", "test")).weights, 108 * 4 / 3 + 16);
  EXPECT_DOUBLE_EQ(layer_shares(layer, parse_choice("OUTP=2", "test")).weights, (108 + 4) * 4 / 2);
  // Training: x's gradient selects dY or slope·dY; the slopes' sums dY·x where x < 0.
  const TrainingOptions sgd;
  run_passes(g, "default", &sgd);
  const NodeId dslope = *g.find("prelu.wgrad");  // summed over N, H, W (then reshaped)
  EXPECT_EQ(g.node(dslope).output.shape, (Shape{1, 4, 1, 1}));
  EXPECT_EQ(op_cost(g, dslope).vector_ops, 2 * 4 * 6 * 6);
  // Slopes must broadcast to x, not x to them.
  Model bad({1, 3, 8, 8});
  bad.weight("slope", {2, 3, 8, 8});
  bad.node("PRelu", {"x", "slope"}, "y", "prelu");
  EXPECT_HAS(bad.import("prelu_bad.onnx"),
             "slopes [2,3,8,8] do not broadcast to the input's [1,3,8,8]");
}

TEST(OnnxMod, FoldsShapeArithmeticWithTheSignOfTheDivisorOrOfTheDividend) {
  // Swin's padding to whole windows: (window − W mod window) mod window, from the input's shape
  // (and, with negative operands, both of ONNX's conventions).
  Model m({1, 3, 10, 12});
  m.int64s("seven", {7});
  m.int64s("three", {3});
  m.int64s("signed", {-7, 7, -7, 7});
  m.int64s("divisors", {3, -3, -3, 3});
  m.node("Shape", {"x"}, "s", "shape");
  m.node("Mod", {"s", "seven"}, "r", "rem");                                // [1, 3, 3, 5]
  m.node("Sub", {"seven", "r"}, "p", "pad");                                // [6, 4, 4, 2]
  m.node("Mod", {"p", "seven"}, "q", "pad_mod");                            // [6, 4, 4, 2]
  m.node("Mod", {"signed", "divisors"}, "py", "python");                    // the divisor's sign
  Model::int1(m.node("Mod", {"signed", "divisors"}, "c", "c"), "fmod", 1);  // the dividend's
  m.node("Mod", {"x", "three"}, "y", "on_x");  // of a tensor of run time: a layer
  for (const char* out : {"q", "py", "c"}) m.g->add_output()->set_name(out);
  Graph g = m.load("mod.onnx");
  // Folded while importing: the outputs are constants named after their tensors.
  EXPECT_FALSE(g.find("pad_mod"));
  EXPECT_EQ(g.node(*g.find("q")).output.value, (std::vector<std::int64_t>{6, 4, 4, 2}));
  EXPECT_EQ(g.node(*g.find("py")).output.value, (std::vector<std::int64_t>{2, -2, -1, 1}));
  EXPECT_EQ(g.node(*g.find("c")).output.value, (std::vector<std::int64_t>{-1, 1, -1, 1}));
  const NodeId on_x = *g.find("on_x");
  EXPECT_EQ(g.node(on_x).kind, OpKind::Mod);
  EXPECT_EQ(g.node(on_x).output.shape, (Shape{1, 3, 10, 12}));
  EXPECT_EQ(op_cost(g, on_x).vector_ops, 3 * 10 * 12);
  run_passes(g, "default");
  EXPECT_EQ(count_kind(g, OpKind::Shape), 0);  // the arithmetic is folded away
  EXPECT_EQ(count_kind(g, OpKind::Mod), 1);    // the layer stays
}

TEST(OnnxImport, AnUnsupportedOperatorIsRefusedPointingToTheListOfSupportedOnes) {
  {
    Model m({1, 3, 8, 8});
    m.node("ReduceL2", {"x"}, "y", "norm");
    EXPECT_HAS(m.import("reduce_l2.onnx"),
               "node 'norm' (ReduceL2): unsupported ONNX operator 'ReduceL2' (supported "
               "operators: configs/networks/README.md)");
  }
  {  // an operator of another domain
    Model m({1, 3, 8, 8});
    m.node("FusedConv", {"x"}, "y", "fused")->set_domain("com.microsoft");
    EXPECT_HAS(m.import("other_domain.onnx"),
               "unsupported ONNX operator 'com.microsoft.FusedConv' (supported operators: "
               "configs/networks/README.md)");
  }
}

// A model of an opset newer than the importer reads imports as one of its newest, with a note
// saying which; the passes and autodiff keep the note. A known opset imports without one.
TEST(OnnxImport, AnOpsetNewerThanTheImporterKnowsImportsWithANote) {
  auto conv = [](std::int64_t opset) {
    Model m({1, 3, 8, 8});
    m.m.mutable_opset_import(0)->set_version(opset);
    m.weight("w", {4, 3, 1, 1});
    m.node("Conv", {"x", "w"}, "y", "conv");
    return m;
  };
  ASSERT_EQ(kNewestOnnxOpset, 21);
  Model newest = conv(kNewestOnnxOpset);
  EXPECT_TRUE(newest.load("opset_newest.onnx").notes().empty());
  Model future = conv(99);
  const std::string path = future.write("opset_99.onnx", "y");
  Graph g = load_network(path);
  ASSERT_EQ(g.notes().size(), 1u);
  EXPECT_EQ(g.notes()[0], path +
                              " imports opset 99 of the default ONNX domain, newer than nocflow "
                              "knows: its operators are read with the semantics of opset 21");
  EXPECT_EQ(count_kind(g, OpKind::Conv), 1);
  const TrainingOptions sgd{"sgd"};
  run_passes(g, "default", &sgd);
  EXPECT_EQ(g.notes().size(), 1u);
}

// An fp32 export run as fp16 (data.onnx_floats: width): every floating-point tensor takes 2
// bytes, inputs, weights and activations alike; the operators, MACs and parameters are the
// file's. vit_b_16's integer constants (shapes, an index) keep their 8 bytes.
TEST(OnnxImport, FloatsTakeTheWidthAskedForAndIntegersKeepTheirs) {
  const std::string file = kData + "vit_b_16.onnx";
  Graph as_exported = load_network(file);
  Graph half = load_network(file, ZooOptions{0, 2, 2});
  ASSERT_EQ(as_exported.num_nodes(), half.num_nodes());
  int floats = 0, integers = 0;
  for (NodeId id : as_exported.node_ids()) {
    const Tensor& t = as_exported.node(id).output;
    const Tensor& h = half.node(id).output;
    EXPECT_EQ(h.shape, t.shape) << as_exported.node(id).name;
    if (t.elem_bytes == 4) {
      ++floats;
      EXPECT_EQ(h.elem_bytes, 2) << as_exported.node(id).name;
    } else {
      ++integers;
      EXPECT_EQ(h.elem_bytes, t.elem_bytes) << as_exported.node(id).name;
    }
  }
  EXPECT_GT(floats, 100);
  EXPECT_GT(integers, 0);
  run_passes(as_exported, "default");
  run_passes(half, "default");
  const GraphTotals t = graph_totals(as_exported), h = graph_totals(half);
  EXPECT_EQ(h.macs, t.macs);
  EXPECT_EQ(h.params, t.params);
  EXPECT_EQ(2 * h.weight_bytes, t.weight_bytes);
  EXPECT_EQ(2 * h.activation_bytes, t.activation_bytes);
}

class TorchvisionReference : public ::testing::TestWithParam<const char*> {};

// Exported by scripts/export_onnx.py, which also counted each model's convolution, linear and
// attention MACs and the parameters its forward pass uses with PyTorch hooks
// (torchvision_reference.json).
TEST_P(TorchvisionReference, MacsAndParametersMatchPyTorch) {
  const std::string name = GetParam();
  std::ifstream in(kData + "torchvision_reference.json");
  const auto ref = nlohmann::json::parse(in).at(name);
  Graph g = load_network(kData + name + ".onnx");
  Shape input;
  for (NodeId id : g.node_ids())
    if (g.node(id).kind == OpKind::Input) input = g.node(id).output.shape;
  EXPECT_EQ(input, ref.at("input").get<Shape>());
  run_passes(g, "default");
  const GraphTotals t = graph_totals(g);
  EXPECT_EQ(t.macs, ref.at("macs").get<std::int64_t>());
  // The export folds batch norms into the convolutions (γ and β become one bias): ≤ 0.5 %.
  const auto params = ref.at("params").get<double>();
  EXPECT_NEAR(static_cast<double>(t.params), params, 0.005 * params);
}

INSTANTIATE_TEST_SUITE_P(Onnx, TorchvisionReference,
                         ::testing::Values("mobilenet_v3_small", "shufflenet_v2_x0_5",
                                           "densenet121", "inception_v3",
                                           "lraspp_mobilenet_v3_large", "fcn_resnet50",
                                           "tiny_unet", "vit_b_16"));

}  // namespace
}  // namespace nocflow::optimizer
