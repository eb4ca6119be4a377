// SPDX-License-Identifier: MIT
// ONNX Split: one Slice per output (of its sizes, or of equal parts of a length known once the
// shapes are), refusals, and training through its Slices.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "optimizer/graph/op_cost.h"
#include "optimizer/partition/region.h"
#include "optimizer/passes/autodiff.h"
#include "optimizer/passes/pass_manager.h"
#include "tests/optimizer/onnx_model.h"

namespace nocflow::optimizer {
namespace {

TEST(OnnxSplit, BecomesOneFoldedSlicePerOutput) {
  for (const int opset : {11, 13}) {  // sizes as an attribute before opset 13, an input since
    Model m({1, 6, 4, 4});
    m.m.mutable_opset_import(0)->set_version(opset);
    onnx::NodeProto* split = m.node("Split", {"x"}, "a", "split");
    if (opset < 13) {
      Model::ints(split, "split", {1, 3, 2});
    } else {
      m.int64s("sizes", {1, 3, 2});
      split->add_input("sizes");
    }
    split->add_output("b");
    split->add_output("c");
    Model::int1(split, "axis", -3);
    Model::int1(m.node("Concat", {"c", "a", "b"}, "y", "join"), "axis", 1);
    Graph g = m.load("split_" + std::to_string(opset) + ".onnx");
    const Shape sizes[] = {{1, 1, 4, 4}, {1, 3, 4, 4}, {1, 2, 4, 4}};
    const std::int64_t offsets[] = {0, 1, 4};
    run_passes(g, "default");
    EXPECT_EQ(count_kind(g, OpKind::Constant), 0) << opset;  // starts, ends, axes folded
    for (int i = 0; i < 3; ++i) {
      ASSERT_TRUE(g.find("split_" + std::to_string(i))) << opset << " output " << i;
      const NodeId id = *g.find("split_" + std::to_string(i));
      EXPECT_EQ(g.node(id).kind, OpKind::Slice);
      EXPECT_EQ(g.node(id).output.shape, sizes[i]) << opset << " output " << i;
      EXPECT_EQ(g.node(id).attrs.axis, 1);
      EXPECT_EQ(g.node(id).attrs.offset, offsets[i]);
      EXPECT_EQ(g.inputs(id).size(), 1u);
    }
    EXPECT_EQ(g.node(*g.find("join")).output.shape, (Shape{1, 6, 4, 4}));
  }
}

// An unnamed Split's parts are the layers of its output tensors' names (they were a_0 and a_1
// for outputs a and b), with sizes or into equal parts.
TEST(OnnxSplit, AnUnnamedSplitsPartsTakeTheirTensorsNames) {
  for (const bool sized : {true, false}) {
    Model m({1, 6, 4, 4});
    onnx::NodeProto* split = m.node("Split", {"x"}, "left");
    if (sized) {
      m.int64s("sizes", {2, 4});
      split->add_input("sizes");
    }
    split->add_output("right");
    Model::int1(split, "axis", 1);
    Model::int1(m.node("Concat", {"right", "left"}, "y", "join"), "axis", 1);
    Graph g = m.load(sized ? "split_unnamed.onnx" : "split_unnamed_equal.onnx");
    run_passes(g, "default");
    for (const char* part : {"left", "right"}) {
      ASSERT_TRUE(g.find(part)) << sized << " " << part;
      EXPECT_EQ(g.node(*g.find(part)).kind, OpKind::Slice) << part;
    }
    EXPECT_EQ(g.node(*g.find("right")).output.shape, (Shape{1, sized ? 4 : 3, 4, 4})) << sized;
  }
}

TEST(OnnxSplit, IntoEqualPartsCutsTheLengthItsInputTurnsOutToHave) {
  // Opset 13 without sizes: parts of length / 3. Opset 18's num_outputs: ⌈length / n⌉ each,
  // the last smaller (7 into 2, 2, 2, 1).
  struct Case {
    int opset, parts;
    Shape input;
    std::int64_t axis;
    std::vector<std::int64_t> offsets, sizes;
  };
  for (const Case& c : {Case{13, 3, {1, 6, 4, 4}, 1, {0, 2, 4}, {2, 2, 2}},
                        Case{18, 4, {1, 6, 7, 4}, 2, {0, 2, 4, 6}, {2, 2, 2, 1}}}) {
    Model m(c.input);
    m.m.mutable_opset_import(0)->set_version(c.opset);
    onnx::NodeProto* split = m.node("Split", {"x"}, "p0", "split");
    for (int i = 1; i < c.parts; ++i) split->add_output("p" + std::to_string(i));
    Model::int1(split, "axis", c.axis);
    if (c.opset >= 18) Model::int1(split, "num_outputs", c.parts);
    onnx::NodeProto* join = m.node("Concat", {}, "y", "join");
    for (int i = c.parts; i-- > 0;) join->add_input("p" + std::to_string(i));
    Model::int1(join, "axis", c.axis);
    Graph g = m.load("split_equal_" + std::to_string(c.opset) + ".onnx");
    run_passes(g, "default");
    EXPECT_EQ(count_kind(g, OpKind::Constant), 0) << c.opset;  // the shape arithmetic folded
    for (int i = 0; i < c.parts; ++i) {
      const auto at = static_cast<std::size_t>(i);
      ASSERT_TRUE(g.find("split_" + std::to_string(i))) << c.opset << " output " << i;
      const Node& slice = g.node(*g.find("split_" + std::to_string(i)));
      EXPECT_EQ(slice.kind, OpKind::Slice);
      EXPECT_EQ(slice.attrs.axis, c.axis);
      EXPECT_EQ(slice.attrs.offset, c.offsets[at]) << c.opset << " output " << i;
      Shape part = c.input;
      part[static_cast<std::size_t>(c.axis)] = c.sizes[at];
      EXPECT_EQ(slice.output.shape, part) << c.opset << " output " << i;
    }
    EXPECT_EQ(g.node(*g.find("join")).output.shape, c.input);
  }
  // num_outputs that would leave the last part empty (6 into 2, 2, 2, 0, 0).
  Model m({1, 6, 4, 4});
  m.m.mutable_opset_import(0)->set_version(18);
  onnx::NodeProto* split = m.node("Split", {"x"}, "y", "split");
  for (int i = 1; i < 5; ++i) split->add_output("y" + std::to_string(i));
  Model::int1(split, "axis", 1);
  Model::int1(split, "num_outputs", 5);
  EXPECT_HAS(m.import("split_equal_empty.onnx"),
             "node 'split' (Split): 5 equal parts of axis 1 of [1,6,4,4] leave the last one empty");
  // Sizes and num_outputs both (opset 18 allows one or the other).
  Model both({1, 6, 4, 4});
  both.m.mutable_opset_import(0)->set_version(18);
  both.int64s("sizes", {2, 4});
  onnx::NodeProto* n = both.node("Split", {"x", "sizes"}, "y", "split");
  n->add_output("y1");
  Model::int1(n, "num_outputs", 2);
  EXPECT_HAS(both.import("split_both.onnx"), "gives both split sizes and num_outputs");
}

TEST(OnnxSplit, WhatItCannotSplitIsRefusedSayingWhy) {
  auto split = [](const std::vector<std::int64_t>& sizes, int outputs, const std::string& file,
                  std::int64_t axis = 1) {
    Model m({1, 6, 4, 4});
    onnx::NodeProto* n = m.node("Split", {"x"}, "y", "split");
    if (!sizes.empty()) {
      m.int64s("sizes", sizes);
      n->add_input("sizes");
    }
    for (int i = 1; i < outputs; ++i) n->add_output("y" + std::to_string(i));
    Model::int1(n, "axis", axis);
    return m.import(file);
  };
  EXPECT_HAS(split({}, 4, "split_equal.onnx"),
             "node 'split' (Split): 4 equal parts of axis 1 of [1,6,4,4]: its length must be a "
             "multiple of their number");
  EXPECT_HAS(split({2, 4}, 3, "split_count.onnx"), "split [2,4] has 2 sizes for 3 outputs");
  EXPECT_HAS(split({6, 0}, 2, "split_empty.onnx"), "every part must be non-empty");
  const std::int64_t huge = std::numeric_limits<std::int64_t>::max();
  EXPECT_HAS(split({huge, huge}, 2, "split_huge.onnx"), "the sizes add up to more than 2^63");
  // The sizes against the axis, before any of the Slices' own errors (an empty last part, an
  // axis out of range).
  EXPECT_HAS(split({2, 2}, 2, "split_short.onnx"),
             "node 'split' (Split): sizes adding up to 4 for axis 1 of [1,6,4,4]");
  EXPECT_HAS(split({4, 4}, 2, "split_long.onnx"), "sizes adding up to 8 for axis 1");
  EXPECT_HAS(split({6, 2}, 2, "split_past.onnx"), "sizes adding up to 8 for axis 1");
  EXPECT_HAS(split({3, 3}, 2, "split_axis.onnx", 4),
             "node 'split' (Split): axis 4 is out of range for [1,6,4,4]");
  EXPECT_HAS(split({}, 2, "split_equal_axis.onnx", -5), "axis -5 is out of range for [1,6,4,4]");
}

// An attribute the model's opset no longer has is refused, naming it: ONNX's shape inference
// ignores it, so the import and the check against that inference disagreed, reported as an
// internal error (Split's sizes) or read as if it were there (ReduceMean's axes at opset 18).
TEST(OnnxSplit, AnAttributeTheModelsOpsetDoesNotHaveIsRefused) {
  {  // An operator newer than the model's opset is another opset's too (it imported).
    Model m({1, 6, 4, 4});
    m.weight("scale", {4});
    m.node("LayerNormalization", {"x", "scale"}, "y", "ln");
    EXPECT_HAS(m.import("ln_opset13.onnx"),
               "node 'ln' (LayerNormalization): is an operator of opset 17 on, and the model "
               "declares opset 13: re-export it with opset 17 or later");
  }
  {  // Gelu is opset 20's, newer than the ONNX library knows: the importer's own table says so.
    Model m({1, 6, 4, 4});
    m.node("Gelu", {"x"}, "y", "gelu");
    EXPECT_HAS(m.import("gelu_opset13.onnx"),
               "node 'gelu' (Gelu): is an operator of opset 20 on, and the model declares opset "
               "13: re-export it with opset 20 or later");
    m.m.mutable_opset_import(0)->set_version(20);
    EXPECT_EQ(m.load("gelu_opset20.onnx", "").node_ids().size(), 2u);  // x and gelu
  }
  {
    Model m({1, 6, 4, 4});
    m.m.mutable_opset_import(0)->set_version(13);
    onnx::NodeProto* split = m.node("Split", {"x"}, "a", "split");
    Model::ints(split, "split", {2, 4});
    split->add_output("b");
    Model::int1(m.node("Concat", {"b", "a"}, "y", "join"), "axis", 1);
    EXPECT_HAS(m.import("split_attr13.onnx"),
               "node 'split' (Split): has the attribute 'split', which opset 13 (the model's) "
               "does not have: from opset 13 the sizes are its second input");
  }
  {
    Model m({1, 6, 4, 4});
    m.m.mutable_opset_import(0)->set_version(18);
    Model::ints(m.node("ReduceMean", {"x"}, "y", "mean"), "axes", {1});
    EXPECT_HAS(m.import("mean_attr18.onnx"),
               "node 'mean' (ReduceMean): has the attribute 'axes', which opset 18 (the model's) "
               "does not have: from opset 18 the axes are its second input");
  }
  {  // Squeeze's axes went the same way at 13 (it ended in a shape mismatch "to report").
    Model m({1, 8, 1});
    Model::ints(m.node("Squeeze", {"x"}, "y", "squeeze"), "axes", {2});
    EXPECT_HAS(m.import("squeeze_attr13.onnx"),
               "node 'squeeze' (Squeeze): has the attribute 'axes', which opset 13 (the model's) "
               "does not have: from opset 13 the axes are its second input");
  }
  {  // A declared opset past int's range: the operator check neither hangs nor wraps.
    Model m({1, 8});
    m.m.mutable_opset_import(0)->set_version(std::int64_t{1} << 31);
    m.node("Relu", {"x"}, "y", "relu");
    EXPECT_EQ(m.import("opset_huge.onnx"), "(no InputError)");
  }
  {  // A stale value_info: an input error naming the tensor, not an internal one. The Reshape's
     // shape is a Concat, which ONNX's inference does not evaluate: it takes the value_info.
    Model m({1, 6, 4, 4});
    m.int64s("head", {1});
    m.int64s("tail", {6, 16});
    Model::int1(m.node("Concat", {"head", "tail"}, "shape", "shape"), "axis", 0);
    m.node("Reshape", {"x", "shape"}, "r", "flat");
    m.node("Relu", {"r"}, "y", "relu");
    auto* vi = m.m.mutable_graph()->add_value_info();
    vi->set_name("r");
    auto* tensor = vi->mutable_type()->mutable_tensor_type();
    tensor->set_elem_type(onnx::TensorProto::FLOAT);
    for (const std::int64_t d : {1, 6, 8}) tensor->mutable_shape()->add_dim()->set_dim_value(d);
    const std::string error = m.import("stale_value_info.onnx");
    EXPECT_HAS(error,
               "tensor 'r': nocflow infers [1,6,16], ONNX shape inference (which keeps a "
               "value_info the model gives) [1,6,8]");
    EXPECT_HAS(error, "re-export the model or rerun onnx.shape_inference on it");
  }
}

TEST(OnnxSplit, EveryOutputOfANodeIsAssignedOnce) {
  {  // a later node's second output
    Model m({1, 6, 4, 4});
    m.int64s("sizes", {3, 3});
    m.node("Relu", {"x"}, "b", "relu");
    m.node("Split", {"x", "sizes"}, "a", "split")->add_output("b");
    m.node("Add", {"a", "b"}, "y", "add");
    EXPECT_HAS(m.import("split_after.onnx"),
               "node 'split' (Split): output tensor 'b' is already produced");
  }
  {  // twice by one node
    Model m({1, 6, 4, 4});
    m.int64s("sizes", {3, 3});
    m.node("Split", {"x", "sizes"}, "a", "split")->add_output("a");
    m.node("Relu", {"a"}, "y", "relu");
    EXPECT_HAS(m.import("split_same.onnx"),
               "node 'split' (Split): output tensor 'a' is already produced");
  }
  for (const bool again : {false, true}) {  // an output the importer does not take
    Model m({1, 6, 4, 4});
    m.m.mutable_opset_import(0)->set_version(17);  // LayerNormalization's first
    m.weight("scale", {4});
    m.node("LayerNormalization", {"x", "scale"}, "n", "ln")->add_output("mean");
    if (again) m.node("Relu", {"x"}, "mean", "relu");
    m.node("Add", {"n", "mean"}, "y", "add");
    EXPECT_HAS(m.import("ln_mean.onnx"),
               again ? "node 'relu' (Relu): output tensor 'mean' is already produced"
                     : "tensor 'mean' used by node 'add' is an output of node 'ln' that nocflow "
                       "does not import");
  }
}

// Training through a Split and a ReduceMean that drops its axes: each Slice's gradient is dY put
// back in its place (zeros around it, as autograd's slice_backward), the two summed for the
// convolution; the mean's dY gets its axes back before it is spread over them.
TEST(OnnxSplit, TrainsThroughItsSlicesAndAMeanThatDropsItsAxes) {
  Model m({1, 4, 6, 6});
  m.weight("w", {8, 4, 3, 3});
  Model::ints(m.node("Conv", {"x", "w"}, "c", "conv"), "pads", {1, 1, 1, 1});
  m.int64s("sizes", {3, 5});
  onnx::NodeProto* split = m.node("Split", {"c", "sizes"}, "a", "split");
  split->add_output("b");
  Model::int1(split, "axis", 1);
  Model::int1(m.node("Concat", {"b", "a"}, "z", "swap"), "axis", 1);
  onnx::NodeProto* mean = m.node("ReduceMean", {"z"}, "y", "mean");
  Model::ints(mean, "axes", {2, 3});
  Model::int1(mean, "keepdims", 0);
  Graph g = m.load("split_train.onnx");
  const TrainingOptions sgd;
  run_passes(g, "default", &sgd);
  EXPECT_EQ(g.node(*g.find("mean.keepdims")).output.shape, (Shape{1, 8, 1, 1}));
  EXPECT_EQ(g.node(*g.find("mean.grad")).output.shape, (Shape{1, 8, 6, 6}));
  const NodeId d0 = *g.find("split_0.grad"), d1 = *g.find("split_1.grad");
  for (NodeId d : {d0, d1}) {
    EXPECT_EQ(g.node(d).kind, OpKind::Grad);
    EXPECT_EQ(g.node(d).attrs.grad_of, OpKind::Slice);
    EXPECT_EQ(g.node(d).output.shape, (Shape{1, 8, 6, 6}));
  }
  EXPECT_EQ(op_cost(g, d1).vector_ops, 5 * 6 * 6);  // dY copied into place
  const NodeId sum = *g.find("conv.gradsum");
  EXPECT_EQ((std::set<NodeId>{g.input(sum, 0), g.input(sum, 1)}), (std::set<NodeId>{d0, d1}));
  EXPECT_EQ(g.input(*g.find("conv.wgrad"), 1), sum);
  // Channels [0, 4) of dX need channel 3 of the second part's dY (it starts at channel 3), and
  // none of it below channel 3.
  auto channels = [&](Range c) {
    return input_region(g, d1, 0, Box{{Range{0, 1}, c, Range{0, 6}, Range{0, 6}}}, Range{0, 1});
  };
  EXPECT_EQ(channels({0, 4}).r[kC], (Range{0, 1}));
  EXPECT_EQ(channels({0, 4}).volume(), 36);
  EXPECT_EQ(channels({0, 3}).volume(), 0);
  EXPECT_EQ(channels({2, 8}).r[kC], (Range{0, 5}));
}

}  // namespace
}  // namespace nocflow::optimizer
