// SPDX-License-Identifier: MIT
// What PyTorch's exports leave for the importer to work out: pads computed by integer
// arithmetic on constants (F.pad, nn.ZeroPad2d at opset 11 on), ceil-mode pools whose last
// window ONNX's shape inference keeps, 0/1 attributes, pools padded past their window, one
// module applied twice (its parameters counted and updated once), Softmax before opset 13.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "optimizer/graph/op_cost.h"
#include "optimizer/passes/autodiff.h"
#include "optimizer/passes/pass_manager.h"
#include "tests/optimizer/onnx_model.h"

namespace nocflow::optimizer {
namespace {

/// PyTorch 1.13's F.pad(x, (left, right, top, bottom)) at opset 14: the four pads, four zeros
/// for N and C, reshaped to pairs, reversed, transposed, flattened and cast, all on constants.
void torch_pads(Model& m, std::int64_t left, std::int64_t right, std::int64_t top,
                std::int64_t bottom) {
  m.int64s("zeros_count", {4});
  auto* zeros = m.node("ConstantOfShape", {"zeros_count"}, "zeros");
  auto* value = zeros->add_attribute();
  value->set_name("value");
  value->set_type(onnx::AttributeProto::TENSOR);
  value->mutable_t()->set_data_type(onnx::TensorProto::INT64);
  value->mutable_t()->add_dims(1);
  value->mutable_t()->add_int64_data(0);
  m.int64s("given", {left, right, top, bottom});
  Model::int1(m.node("Concat", {"given", "zeros"}, "all"), "axis", 0);
  m.int64s("pairs_shape", {-1, 2});
  m.node("Reshape", {"all", "pairs_shape"}, "pairs");
  m.int64s("start", {-1});
  m.int64s("end", {std::numeric_limits<std::int64_t>::min()});
  m.int64s("axis", {0});
  m.int64s("step", {-1});
  m.node("Slice", {"pairs", "start", "end", "axis", "step"}, "reversed");
  Model::ints(m.node("Transpose", {"reversed"}, "columns"), "perm", {1, 0});
  m.int64s("flat_shape", {-1});
  m.node("Reshape", {"columns", "flat_shape"}, "flat");
  Model::int1(m.node("Cast", {"flat"}, "pads"), "to", onnx::TensorProto::INT64);
}

TEST(OnnxFold, PadsComputedFromConstantsFoldIntoTheConvolution) {
  Model m({1, 3, 8, 9});
  torch_pads(m, 1, 2, 3, 4);
  m.node("Pad", {"x", "pads"}, "xp", "pad");
  m.weight("w", {4, 3, 3, 3});
  m.node("Conv", {"xp", "w"}, "y", "conv");
  const Graph g = m.load("fold_torch_pad.onnx");
  EXPECT_EQ(g.num_nodes(), 2u);  // the input and the convolution: the arithmetic is gone
  const Node& conv = g.node(*g.find("conv"));
  EXPECT_EQ(conv.attrs.pads, (std::array<std::int64_t, 4>{3, 1, 4, 2}));  // top, left, bottom, right
  EXPECT_EQ(conv.output.shape, (Shape{1, 4, 13, 10}));                    // PyTorch's
  EXPECT_EQ(op_cost(g, *g.find("conv")).macs, 4 * 13 * 10 * 27);
}

TEST(OnnxFold, UnsqueezeSqueezeAndElementwiseArithmeticOnConstantsFold) {
  Model m({1, 3, 8, 8});
  m.int64s("one", {1});
  m.int64s("two", {2});
  m.node("Mul", {"one", "two"}, "two_again");                     // [2]
  m.node("Sub", {"two_again", "one"}, "unit");                     // [1]
  m.int64s("axes", {0});
  m.node("Unsqueeze", {"unit", "axes"}, "unit_2d");                // [[1]]
  m.node("Squeeze", {"unit_2d", "axes"}, "unit_again");            // [1]
  m.int64s("n_c", {0, 0});
  Model::int1(m.node("Concat", {"n_c", "unit_again", "two", "n_c", "unit_again", "two"}, "pads"),
              "axis", 0);                                          // [0,0,1,2,0,0,1,2]
  m.node("Pad", {"x", "pads"}, "xp", "pad");
  Model::ints(m.node("MaxPool", {"xp"}, "y", "pool"), "kernel_shape", {3, 3});
  const Graph g = m.load("fold_arith.onnx");
  EXPECT_EQ(g.node(*g.find("pool")).attrs.pads, (std::array<std::int64_t, 4>{1, 2, 1, 2}));
  EXPECT_EQ(g.node(*g.find("pool")).output.shape, (Shape{1, 3, 8, 10}));
}

// The folded arithmetic follows ONNX: NumPy broadcasting (a [1] plus a scalar stays [1]), a
// 32-bit Cast wraps, a Slice step near the int64 limit takes one element. Each feeds a Pad
// whose pads it computes: [0,0,1,2,0,0,1,2] for a Conv.
TEST(OnnxFold, BroadcastingCastAndHugeStepsAreOnnxs) {
  Model m({1, 3, 8, 8});
  auto scalar = [&](const std::string& name, std::int64_t v) { m.int64_scalar(name, v); };
  m.int64s("zero", {0});
  scalar("one", 1);
  m.node("Add", {"zero", "one"}, "one_1d");                          // [1], not a scalar
  m.int64s("big", {(std::int64_t{1} << 32) + 2});
  Model::int1(m.node("Cast", {"big"}, "two_32"), "to", onnx::TensorProto::INT32);  // [2]
  Model::int1(m.node("Cast", {"two_32"}, "two"), "to", onnx::TensorProto::INT64);
  m.int64s("ten", {0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  m.int64s("start", {1});
  m.int64s("end", {10});
  m.int64s("axis", {0});
  m.int64s("step", {INT64_MAX});
  m.node("Slice", {"ten", "start", "end", "axis", "step"}, "only_one");  // [1]
  m.int64s("n_c", {0, 0});
  Model::int1(m.node("Concat", {"n_c", "one_1d", "two", "n_c", "only_one", "two"}, "pads"), "axis", 0);
  m.node("Pad", {"x", "pads"}, "xp", "pad");
  m.weight("w", {4, 3, 3, 3});
  m.node("Conv", {"xp", "w"}, "y", "conv");
  const Graph g = m.load("fold_onnx_semantics.onnx");
  EXPECT_EQ(g.node(*g.find("conv")).attrs.pads, (std::array<std::int64_t, 4>{1, 2, 1, 2}));
}

TEST(OnnxFold, ACeilModePoolDroppingAWindowInThePaddingKeepsPyTorchsShape) {
  // torch.nn.MaxPool2d(2, 2, 1, ceil_mode=True) on 5x6: PyTorch gives 3x4 (the last row of
  // windows would start in the bottom padding); onnx 1.12's shape inference says 4x4.
  Model m({1, 2, 5, 6});
  auto* pool = m.node("MaxPool", {"x"}, "p", "pool");
  Model::ints(pool, "kernel_shape", {2, 2});
  Model::ints(pool, "strides", {2, 2});
  Model::ints(pool, "pads", {1, 1, 1, 1});
  Model::int1(pool, "ceil_mode", 1);
  m.node("Relu", {"p"}, "y", "relu");  // downstream of the difference too
  const Graph g = m.load("fold_ceil_pool.onnx");
  EXPECT_EQ(g.node(*g.find("pool")).output.shape, (Shape{1, 2, 3, 4}));
  EXPECT_EQ(g.node(*g.find("relu")).output.shape, (Shape{1, 2, 3, 4}));
}

TEST(OnnxFold, FlagAttributesAreZeroOrOne) {
  Model m({1, 2, 4, 4});
  m.int64s("axes", {1});
  auto* mean = m.node("ReduceMean", {"x"}, "y", "mean");
  Model::ints(mean, "axes", {1});
  Model::int1(mean, "keepdims", 3);
  EXPECT_HAS(m.import("fold_keepdims.onnx"),
             "node 'mean' (ReduceMean): attribute 'keepdims' must be 0 or 1, got 3");
}

// ONNX's own check of each node against its operator at the model's opset (found by fuzzing:
// these imported, the attribute or input ignored).
TEST(OnnxFold, ANodeMustMatchItsOperatorsDefinition) {
  {
    Model m({1, 4});
    Model::int1(m.node("Relu", {"x"}, "y", "r"), "alpha", 2);
    EXPECT_HAS(m.import("unknown_attribute.onnx"),
               "node 'r' (Relu): is not a valid Relu of opset 13: Unrecognized attribute: alpha");
  }
  {
    Model m({1, 4});
    auto* softmax = m.node("Softmax", {"x"}, "y", "s");
    Model::int1(softmax, "axis", 1);
    Model::int1(softmax, "axis", 0);
    EXPECT_HAS(
        m.import("repeated_attribute.onnx"),
        "(Softmax): is not a valid Softmax of opset 13: Attribute 'axis' appeared multiple times");
  }
  {
    Model m({1, 4});
    m.node("Relu", {"x", "x"}, "y", "r");
    EXPECT_HAS(m.import("extra_input.onnx"),
               "node 'r' (Relu): is not a valid Relu of opset 13: Node (r) has input size 2");
  }
}

TEST(OnnxFold, APoolsOwnPaddingMustBeSmallerThanItsWindowAPadsNeedNot) {
  {
    Model m({1, 3, 3, 3});
    auto* pool = m.node("MaxPool", {"x"}, "y", "pool");
    Model::ints(pool, "kernel_shape", {2, 2});
    Model::ints(pool, "pads", {0, 0, 2, 0});
    EXPECT_HAS(m.import("fold_pool_pads.onnx"),
               "node 'pool' (MaxPool): bottom pad 2 is not smaller than the window's 2");
  }
  {  // nn.ZeroPad2d((2, 0, 1, 0)) then nn.MaxPool2d(2): the zeros are data
    Model m({1, 3, 7, 7});
    m.int64s("p", {0, 0, 1, 2, 0, 0, 0, 0});
    m.node("Pad", {"x", "p"}, "xp", "pad");
    auto* pool = m.node("MaxPool", {"xp"}, "y", "pool");
    Model::ints(pool, "kernel_shape", {2, 2});
    Model::ints(pool, "strides", {2, 2});
    const Graph g = m.load("fold_zero_pad_pool.onnx");
    EXPECT_EQ(g.node(*g.find("pool")).output.shape, (Shape{1, 3, 4, 4}));  // PyTorch's
  }
}

TEST(OnnxFold, AModuleAppliedTwiceHoldsItsParametersOnce) {
  // conv(conv(x)) with one nn.Conv2d, then fc(fc(.)) with one nn.Linear: PyTorch counts
  // 4·4·9 + 4 and 16·16 + 16 parameters.
  Model m({1, 4, 8, 8});
  m.weight("cw", {4, 4, 3, 3});
  m.weight("cb", {4});
  Model::ints(m.node("Conv", {"x", "cw", "cb"}, "c1", "conv1"), "pads", {1, 1, 1, 1});
  Model::ints(m.node("Conv", {"c1", "cw", "cb"}, "c2", "conv2"), "pads", {1, 1, 1, 1});
  m.node("Flatten", {"c2"}, "flat", "flatten");
  m.weight("fw", {16, 256});
  m.weight("fb", {16});
  Model::int1(m.node("Gemm", {"flat", "fw", "fb"}, "f1", "fc1"), "transB", 1);
  m.weight("gw", {16, 16});
  m.weight("gb", {16});
  Model::int1(m.node("Gemm", {"f1", "gw", "gb"}, "f2", "fc2"), "transB", 1);
  Model::int1(m.node("Gemm", {"f2", "gw", "gb"}, "y", "fc3"), "transB", 1);
  const Graph g = m.load("tied_modules.onnx");
  const GraphTotals t = graph_totals(g);
  EXPECT_EQ(t.params, 148 + 16 * 256 + 16 + 272);
  EXPECT_EQ(op_cost(g, *g.find("conv1")).params, 148);
  EXPECT_EQ(op_cost(g, *g.find("conv2")).params, 0);  // counted at conv1 ...
  EXPECT_EQ(op_cost(g, *g.find("conv2")).weight_bytes, 148 * 4);  // ... and held by both
  const ParameterOwners owners(g);
  EXPECT_EQ(owners(*g.find("fc3")), *g.find("fc2"));
  EXPECT_EQ(owners(*g.find("fc1")), *g.find("fc1"));
  // Trained: one update per parameter set, of the summed gradients.
  const Graph train = training_graph(g, {});
  std::vector<std::string> updates;
  for (NodeId id : train.outputs()) updates.push_back(train.node(id).name);
  std::sort(updates.begin(), updates.end());
  EXPECT_EQ(updates, (std::vector<std::string>{"conv1.update", "fc1.update", "fc2.update"}));
  EXPECT_EQ(graph_totals(train).params, t.params);
  // Fused or not, a shared module is one: conv(relu(conv(x))) with the fuse pass leaves one Conv
  // fused with its Relu and the other plain (it was counted twice then).
  Model r({1, 4, 8, 8});
  r.weight("cw", {4, 4, 3, 3});
  r.weight("cb", {4});
  Model::ints(r.node("Conv", {"x", "cw", "cb"}, "c1", "conv1"), "pads", {1, 1, 1, 1});
  r.node("Relu", {"c1"}, "r1", "relu1");
  Model::ints(r.node("Conv", {"r1", "cw", "cb"}, "y", "conv2"), "pads", {1, 1, 1, 1});
  Graph fused = r.load("tied_fused.onnx");
  PassManager(parse_pass_list("default")).run(fused);
  EXPECT_EQ(graph_totals(fused).params, 148);
  // ... and counted at the first of them, the fused conv1, though fusion gave it the newest node
  // id (the params moved to conv2).
  EXPECT_EQ(op_cost(fused, *fused.find("conv1")).params, 148);
  EXPECT_EQ(op_cost(fused, *fused.find("conv2")).params, 0);
  EXPECT_EQ(ParameterOwners(fused)(*fused.find("conv2")), *fused.find("conv1"));
}

TEST(OnnxFold, ABatchExportedAsADynamicAxisIsTheOneAskedFor) {
  Model m({1, 3, 8, 8});
  m.g->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)
      ->set_dim_param("batch");  // torch.onnx.export(..., dynamic_axes={'x': {0: 'batch'}})
  m.weight("w", {4, 3, 3, 3});
  m.node("Conv", {"x", "w"}, "y", "conv");
  const std::string path = m.write("fold_dynamic_batch.onnx", "y");
  EXPECT_HAS(nocflow::testing::error_of([&] { load_network(path); }),
             "input 'x' dimension 0 is dynamic ('batch'); export it with a static shape or give "
             "the batch (--batch N; in a sweep, a batch axis)");
  const Graph g = load_network(path, ZooOptions{4});
  EXPECT_EQ(g.node(*g.find("conv")).output.shape, (Shape{4, 4, 6, 6}));
  // An unnamed dynamic axis is said to be one (it printed as '').
  m.g->mutable_input(0)
      ->mutable_type()
      ->mutable_tensor_type()
      ->mutable_shape()
      ->mutable_dim(0)
      ->clear_dim_param();
  const std::string unnamed = m.write("fold_dynamic_unnamed.onnx", "y");
  EXPECT_HAS(nocflow::testing::error_of([&] { load_network(unnamed); }),
             "input 'x' dimension 0 is dynamic (unnamed); export it with a static shape");
}

// x.view(1, -1, 16) exported with a dynamic batch folds the batch given into the features: a
// note names the Reshape (it passed silently); view(0, ...) or view(-1, ...) keep it.
TEST(OnnxFold, AReshapeThatFoldsTheBatchGivenIsNoted) {
  for (const std::int64_t lead : {1, 0}) {
    Model m({1, 4, 4, 4});
    m.g->mutable_input(0)
        ->mutable_type()
        ->mutable_tensor_type()
        ->mutable_shape()
        ->mutable_dim(0)
        ->set_dim_param("batch");
    m.int64s("shape", {lead, -1, 16});
    m.node("Reshape", {"x", "shape"}, "y", "view");
    const std::string path = m.write("fold_view_" + std::to_string(lead) + ".onnx", "y");
    const Graph g = load_network(path, ZooOptions{4});
    std::string notes;
    for (const std::string& note : g.notes()) notes += note + "\n";
    if (lead == 1) {
      EXPECT_EQ(g.node(*g.find("view")).output.shape, (Shape{1, 16, 16}));
      EXPECT_HAS(notes,
                 "node 'view' (Reshape) gives [1,16,16] from [4,4,4,4]: its shape [1,-1,16] "
                 "starts with a number where the batch (4) was");
    } else {
      EXPECT_EQ(g.node(*g.find("view")).output.shape, (Shape{4, 4, 16}));
      EXPECT_EQ(notes.find("Reshape"), std::string::npos) << notes;
    }
  }
}

TEST(OnnxFold, ASoftmaxBeforeOpset13NormalisesOverEveryAxisFromItsOwn) {
  // Opset 11's Softmax over axis 1 of [2, 3, 4, 5] normalises each sample's 60 values together:
  // a Reshape to [2, 60], the Softmax over its 60 (only BATCH splits it), a Reshape back that
  // keeps the node's name. Over the last axis it is the one axis of opset 13.
  for (const std::int64_t axis : {1, 3}) {
    Model m({2, 3, 4, 5});
    m.m.mutable_opset_import(0)->set_version(11);
    Model::int1(m.node("Softmax", {"x"}, "y", "softmax"), "axis", axis);
    Graph g = m.load("softmax_opset11_axis" + std::to_string(axis) + ".onnx");
    run_passes(g, "default");
    const NodeId out = g.outputs().at(0);
    EXPECT_EQ(g.node(out).name, "softmax") << axis;
    EXPECT_EQ(g.node(out).output.shape, (Shape{2, 3, 4, 5})) << axis;
    if (axis == 3) {
      EXPECT_EQ(g.node(out).kind, OpKind::Softmax);
      continue;
    }
    ASSERT_EQ(g.node(out).kind, OpKind::Reshape);
    const NodeId softmax = g.input(out, 0);
    const Node& n = g.node(softmax);
    ASSERT_EQ(n.kind, OpKind::Softmax);
    EXPECT_EQ(n.output.shape, (Shape{2, 60}));
    EXPECT_EQ(n.attrs.axis, 1);
    EXPECT_EQ(legal_part_dims(g, softmax).str(), "BATCH");
  }
}

}  // namespace
}  // namespace nocflow::optimizer
