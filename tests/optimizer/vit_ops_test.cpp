// SPDX-License-Identifier: MIT
// What a vision transformer's ONNX export needs beyond the encoder's: the class token's Expand
// to a shape computed by ConstantOfShape, Mul, Equal and Where (folded away), its Gather
// (x[:, 0], a Slice), and MatMul + Add of a bias (one Gemm that keeps INPP). torchvision's
// vit_b_16 itself is checked against PyTorch in onnx_ops_test.cpp (TorchvisionReference).
#include <gtest/gtest.h>

#include <string>

#include "optimizer/cost/cost_model.h"
#include "optimizer/frontend/network_yaml.h"
#include "optimizer/graph/op_cost.h"
#include "optimizer/io/graph_file.h"
#include "optimizer/partition/region.h"
#include "optimizer/partition/workload.h"
#include "optimizer/passes/autodiff.h"
#include "optimizer/passes/pass_manager.h"
#include "tests/optimizer/make_choice.h"
#include "tests/optimizer/onnx_model.h"

namespace nocflow::optimizer {
namespace {

/// ConstantOfShape(`shape`) filled with the int64 `value`.
onnx::NodeProto* constant_of_shape(Model& m, const std::string& shape, const std::string& out,
                                   std::int64_t value) {
  auto* n = m.node("ConstantOfShape", {shape}, out, out);
  auto* a = n->add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  a->mutable_t()->set_data_type(onnx::TensorProto::INT64);
  a->mutable_t()->add_dims(1);
  a->mutable_t()->add_int64_data(value);
  return n;
}

/// ViT's prologue as PyTorch 1.13 exports it: class_token.expand(n, -1, -1), prepended to the
/// tokens, and the class token read back by Gather index `index` of axis 1.
Model class_token_model(std::int64_t index) {
  Model m({1, 4, 8});  // 4 tokens of 8 features
  m.weight("cls", {1, 1, 8});
  m.int64s("rank", {3});
  m.int64s("minus_one", {-1});
  m.int64s("wanted", {1, -1, -1});
  m.int64_scalar("index", index);
  constant_of_shape(m, "rank", "ones", 1);
  m.node("Mul", {"ones", "minus_one"}, "negated", "negated");
  m.node("Equal", {"wanted", "negated"}, "keep", "equal");
  m.node("Where", {"keep", "ones", "wanted"}, "target", "where");
  m.node("Expand", {"cls", "target"}, "token", "expand");
  Model::int1(m.node("Concat", {"token", "x"}, "tokens", "concat"), "axis", 1);
  Model::int1(m.node("Gather", {"tokens", "index"}, "y", "gather"), "axis", 1);
  return m;
}

TEST(OnnxVit, TheClassTokensShapeArithmeticIsFoldedAway) {
  Model m = class_token_model(0);
  Graph g = m.load("vit_class_token.onnx");
  // Where(Equal([1, -1, -1], -1 × ones), ones, [1, -1, -1]): -1 keeps the token's own size.
  // Computed while importing: the Expand's target is the constant [1, 1, 1].
  EXPECT_FALSE(g.find("equal"));
  EXPECT_FALSE(g.find("where"));
  EXPECT_EQ(g.node(g.input(*g.find("expand"), 1)).output.value, (std::vector<std::int64_t>{1, 1, 1}));
  EXPECT_EQ(g.node(*g.find("expand")).output.shape, (Shape{1, 1, 8}));
  EXPECT_EQ(g.node(*g.find("concat")).output.shape, (Shape{1, 5, 8}));
  EXPECT_EQ(g.node(*g.find("gather")).output.shape, (Shape{1, 8}));
  run_passes(g, "default");
  for (OpKind k : {OpKind::Equal, OpKind::Where, OpKind::Expand, OpKind::Mul, OpKind::Gather})
    EXPECT_EQ(count_kind(g, k), 0) << op_name(k);
  // The Concat reads the weight itself, and the Gather is a Slice of the first token.
  const NodeId concat = *g.find("concat");
  EXPECT_EQ(g.node(g.input(concat, 0)).kind, OpKind::Constant);
  const NodeId gather = *g.find("gather");
  EXPECT_EQ(g.node(gather).kind, OpKind::Reshape);
  EXPECT_EQ(g.node(gather).output.shape, (Shape{1, 8}));
  const NodeId slice = g.input(gather, 0);
  ASSERT_EQ(g.node(slice).kind, OpKind::Slice);
  EXPECT_EQ(g.node(slice).attrs.axis, 1);
  EXPECT_EQ(g.node(slice).attrs.offset, 0);
  EXPECT_EQ(g.node(slice).output.shape, (Shape{1, 1, 8}));
  EXPECT_EQ(g.input(slice, 0), concat);
  // The slice reads one token of the five: 8 of 40 elements.
  const Box whole = full_box(view4(g.node(slice).output.shape));
  EXPECT_EQ(input_region(g, slice, 0, whole, Range{0, 1}).volume(), 8);
}

TEST(OnnxVit, AGatherCountsANegativeIndexFromTheEnd) {
  Model m = class_token_model(-1);
  Graph g = m.load("vit_last_token.onnx");
  run_passes(g, "default");
  const NodeId slice = g.input(*g.find("gather"), 0);
  ASSERT_EQ(g.node(slice).kind, OpKind::Slice);
  EXPECT_EQ(g.node(slice).attrs.offset, 4);  // the last of five tokens
}

TEST(OnnxVit, TheClassTokenExpandedOverABatchIsABroadcastAddThatTrainsTheToken) {
  // class_token.expand(4, -1, -1) at batch 4: the token [1, 1, 8] broadcast to [4, 1, 8] is an
  // Add of zeros of that shape, split by BATCH like the tokens it is prepended to; in training
  // its gradient sums over the copies, so the one token of 8 parameters is updated once. A
  // model exported with its weights (export_onnx.py --keep-weights) keeps the token's values
  // inline: it is still a weight, not a compile-time tensor of known values.
  for (const bool values : {false, true}) {
    Model m({4, 3, 8});
    m.weight("cls", {1, 1, 8});
    if (values)
      for (int i = 0; i < 8; ++i) m.g->mutable_initializer(0)->add_float_data(0.5f * i);
    m.int64s("target", {4, 1, 8});
    m.node("Expand", {"cls", "target"}, "token", "expand");
    Model::int1(m.node("Concat", {"token", "x"}, "y", "concat"), "axis", 1);
    Graph g = m.load(std::string("vit_class_token_batch4") + (values ? "_values" : "") + ".onnx");
    run_passes(g, "default");
    const NodeId expand = *g.find("expand");
    EXPECT_EQ(g.node(expand).kind, OpKind::Add) << values;
    EXPECT_EQ(g.node(expand).output.shape, (Shape{4, 1, 8})) << values;
    EXPECT_EQ(g.node(*g.find("concat")).output.shape, (Shape{4, 4, 8})) << values;
    EXPECT_TRUE(legal_part_dims(g, expand).contains(PartDim::Batch)) << values;
    EXPECT_EQ(graph_totals(g).params, 8) << values;
    const Graph train = training_graph(g, {});
    int updates = 0;
    for (NodeId id : train.node_ids())
      if (train.node(id).kind == OpKind::WeightUpdate) {
        EXPECT_EQ(train.node(id).output.shape, (Shape{1, 1, 8})) << values;
        ++updates;
      }
    EXPECT_EQ(updates, 1) << values;
  }
}

TEST(OnnxVit, TheZerosOfTheClassTokensBroadcastAreNotHeldAsData) {
  // The Add that broadcasts the token [1, 1, 8] to [4, 1, 8] reads a zero tensor of that shape
  // only to have the output's shape: no PE holds it. The layer holds the token (32 bytes),
  // under any choice, and nothing of the zeros (their 128 bytes, or their part of a block).
  Model m({4, 3, 8});
  m.weight("cls", {1, 1, 8});
  m.int64s("target", {4, 1, 8});
  m.node("Expand", {"cls", "target"}, "token", "expand");
  Model::int1(m.node("Concat", {"token", "x"}, "y", "concat"), "axis", 1);
  Graph g = m.load("vit_class_token_zeros.onnx");
  run_passes(g, "default");
  // So in a saved graph too (`inspect --save`, read back).
  const Graph back = parse_network_yaml(graph_yaml(g), "vit_class_token_zeros.yaml");
  for (const Graph* graph : {static_cast<const Graph*>(&g), &back}) {
    const Workload w = build_workload(*graph);
    const NodeId expand = *graph->find("expand");
    const Layer* add = nullptr;
    for (const Layer& l : w.layers)
      if (l.id == expand) add = &l;
    ASSERT_NE(add, nullptr);
    for (const Choice& c : {make({}), make({{PartDim::Batch, 4}}), make({{PartDim::Batch, 2}})}) {
      EXPECT_DOUBLE_EQ(layer_shares(*add, c).weights, 8 * 4) << c.str();
      EXPECT_DOUBLE_EQ(layer_memory_bytes(*add, c),
                       8 * 4 + layer_shares(*add, c).input + layer_shares(*add, c).output)
          << c.str();
    }
  }
}

/// An Einsum node with `equation`.
onnx::NodeProto* einsum(Model& m, const std::vector<std::string>& in, const std::string& equation) {
  auto* n = m.node("Einsum", in, "y", "einsum");
  auto* a = n->add_attribute();
  a->set_name("equation");
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(equation);
  return n;
}

TEST(OnnxVit, AnEinsumThatIsABatchedProductIsAMatMulOfItsOperandsTransposed) {
  // MaxViT's attention scores, q · kᵀ per batch, group and head, spelled with spaces as
  // PyTorch exports it: k is transposed to [.., D, J]; q is already [.., I, D].
  {
    Model m({2, 3, 2, 5, 4});
    einsum(m, {"x", "x"}, "B G H I D, B G H J D -> B G H I J");
    Graph g = m.load("einsum_scores.onnx");
    run_passes(g, "default");
    const NodeId mm = *g.find("einsum");
    ASSERT_EQ(g.node(mm).kind, OpKind::MatMul);
    EXPECT_EQ(g.node(mm).output.shape, (Shape{2, 3, 2, 5, 5}));
    EXPECT_EQ(g.node(g.input(mm, 0)).kind, OpKind::Input);
    const Node& kt = g.node(g.input(mm, 1));
    ASSERT_EQ(kt.kind, OpKind::Transpose);
    EXPECT_EQ(kt.attrs.perm, (std::vector<std::int64_t>{0, 1, 2, 4, 3}));
    EXPECT_EQ(graph_totals(g).macs, 2 * 3 * 2 * 5 * 5 * 4);
  }
  {  // batch axes in another order in the second operand: it is transposed to the first's
    Model m({2, 2, 4, 4});
    einsum(m, {"x", "x"}, "bhij,hbjk->bhik");
    Graph g = m.load("einsum_batch_order.onnx");
    const NodeId mm = *g.find("einsum");
    ASSERT_EQ(g.node(mm).kind, OpKind::MatMul);
    EXPECT_EQ(g.node(g.input(mm, 0)).kind, OpKind::Input);
    EXPECT_EQ(g.node(g.input(mm, 1)).attrs.perm, (std::vector<std::int64_t>{1, 0, 2, 3}));
    EXPECT_EQ(g.node(mm).output.shape, (Shape{2, 2, 4, 4}));
  }
  for (const char* bad :
       {"ij,jk", "bij,bjk->bki", "ii,ij->ij", "bij,bkl->bil", "...ij,...jk->...ik"}) {
    Model m({2, 4, 4});
    einsum(m, {"x", "x"}, bad);
    EXPECT_HAS(m.import("einsum_refused.onnx"), "only a batched product is supported") << bad;
  }
}

TEST(OnnxVit, AnEinsumsLabelsMustMatchItsOperandsRanksAndSizes) {
  // A batch label of size 1 in one operand broadcasts (as ONNX and numpy do): 2·3·4·5 MACs.
  {
    Model m({1, 3, 4});
    m.weight("w", {2, 4, 5});
    einsum(m, {"x", "w"}, "bij,bjk->bik");
    Graph g = m.load("einsum_broadcast.onnx");
    EXPECT_EQ(g.node(*g.find("einsum")).output.shape, (Shape{2, 3, 5}));
    EXPECT_EQ(graph_totals(g).macs, 2 * 3 * 4 * 5);
  }
  // Operands of more (or fewer) axes than their labels: not a MatMul of 3-D tensors (which
  // MatMul would broadcast to 4-D, or take a 2-D operand for) but an invalid equation.
  for (const Shape& w : {Shape{2, 2, 4, 5}, Shape{4, 5}}) {
    Model m({2, 3, 4});
    m.weight("w", w);
    einsum(m, {"x", "w"}, "bij,bjk->bik");
    const std::string e = m.import("einsum_rank.onnx");
    EXPECT_HAS(e, "node 'einsum' (Einsum)") << shape_str(w);
    EXPECT_HAS(e, "operand 2 has 3 labels, 'bjk', for a tensor of shape " + shape_str(w));
  }
  {
    Model m({2, 2, 3, 4});
    m.weight("w", {2, 2, 4, 5});
    einsum(m, {"x", "w"}, "bij,bjk->bik");
    EXPECT_HAS(m.import("einsum_rank_both.onnx"), "operand 1 has 3 labels, 'bij'");
  }
  // A label whose sizes disagree: an error naming the node and the label (the summed label j
  // is last in x, in the middle of w; b is first in both).
  for (const auto& [w, why] : std::vector<std::pair<Shape, std::string>>{
           {{2, 5, 6}, "label 'j' is 4 in operand 1 and 5 in operand 2"},
           {{3, 4, 6}, "label 'b' is 2 in operand 1 and 3 in operand 2"}}) {
    Model m({2, 3, 4});
    m.weight("w", w);
    einsum(m, {"x", "w"}, "bij,bjk->bik");
    const std::string e = m.import("einsum_sizes.onnx");
    EXPECT_HAS(e, "node 'einsum' (Einsum)") << shape_str(w);
    EXPECT_HAS(e, why) << shape_str(w);
  }
  {  // a summed label of size 1 broadcast (numpy's sum of the other operand): not a MatMul
    Model m({2, 3, 1});
    m.weight("w", {2, 4, 5});
    einsum(m, {"x", "w"}, "bij,bjk->bik");
    EXPECT_HAS(m.import("einsum_sum_broadcast.onnx"),
               "label 'j' is 1 in operand 1 and 4 in operand 2 (a summed label broadcast");
  }
}

// Equal and Where of tensors of run time (a mask compared, scores masked, as Hugging Face's
// GPT-2 export masks its attention) are element-wise layers: they split like an Add, and the
// mask moves from the Equal to the Where as an activation. Before, they were refused.
TEST(OnnxVit, EqualAndWhereOfRunTimeTensorsAreElementWiseLayers) {
  Model m({1, 4, 8});
  m.weight("other", {1, 4, 8});
  m.node("Equal", {"x", "other"}, "mask", "equal");
  m.node("Where", {"mask", "x", "other"}, "y", "where");
  Graph g = m.load("where_runtime.onnx");
  run_passes(g, "default");
  const NodeId where = *g.find("where"), equal = *g.find("equal");
  EXPECT_EQ(g.node(equal).output.shape, (Shape{1, 4, 8}));
  EXPECT_EQ(g.node(equal).output.elem_bytes, 1);  // booleans
  EXPECT_EQ(g.node(where).output.shape, (Shape{1, 4, 8}));
  EXPECT_EQ(g.input(where, 0), equal);
  EXPECT_EQ(op_cost(g, where).vector_ops, 32);
  EXPECT_EQ(op_cost(g, equal).vector_ops, 32);
  const Workload w = build_workload(g);
  for (const Layer& l : w.layers) {
    if (l.id != where && l.id != equal) continue;
    const Tensor& out = g.node(l.id).output;
    EXPECT_EQ(legal_part_dims(g, l.id), legal_part_dims(OpKind::Add, {}, {&out, &out}, out));
    EXPECT_TRUE(legal_part_dims(g, l.id).contains(PartDim::OfmpH)) << l.name;  // the tokens
    EXPECT_EQ(l.inputs[0].splits, legal_part_dims(g, l.id)) << l.name;  // x's or the mask's block
  }
}

TEST(OnnxVit, WhatIsNotShapeArithmeticIsRefusedSayingWhy) {
  {  // a shape of run-time values (the Shape of a tensor is known while importing)
    Model m({3});
    Model::int1(m.node("Cast", {"x"}, "s", "cast"), "to", onnx::TensorProto::INT64);
    constant_of_shape(m, "s", "y", 0);
    EXPECT_HAS(m.import("constant_of_shape_runtime.onnx"),
               "node 'y' (ConstantOfShape): shape (input 0) must be an initializer or constant");
  }
  {
    Model m({1, 4, 8});
    m.int64s("seven", {7});
    m.int64s("negative", {-1});
    m.node("Expand", {"seven", "negative"}, "e", "expand");
    m.node("Reshape", {"x", "e"}, "y", "reshape");
    EXPECT_HAS(m.import("expand_negative.onnx"),
               "node 'expand' (Expand): target shape [-1] has a negative dimension");
  }
  {
    Model m({1, 4, 8});
    m.int64s("seven", {7});
    m.int64s("huge", {100000000000});
    m.node("Expand", {"seven", "huge"}, "e", "expand");
    m.node("Reshape", {"x", "e"}, "y", "reshape");
    EXPECT_HAS(m.import("expand_huge.onnx"), "of 1-D shape arithmetic up to 4096 values");
  }
  {
    Model m({1, 4, 8});
    m.int64s("big", {3037000500, 3037000500});  // 2^63 and more elements
    constant_of_shape(m, "big", "c", 0);
    m.node("Add", {"x", "c"}, "y", "add");
    EXPECT_HAS(m.import("constant_of_shape_huge.onnx"), "more than 2^53");
  }
  {
    Model m({1, 4, 8});
    m.int64s("shape", {1, 4, 8});
    auto* fill = constant_of_shape(m, "shape", "c", 0)->mutable_attribute(0)->mutable_t();
    fill->add_dims(1);  // [1, 1]: one element, but not the spec's shape [1]
    m.node("Add", {"x", "c"}, "y", "add");
    EXPECT_HAS(m.import("constant_of_shape_value_1x1.onnx"),
               "attribute 'value' must be a one-element tensor of shape [1] (the ONNX spec; "
               "onnxruntime refuses others too), got shape [1,1]");
  }
  {
    Model m({1, 4, 8});
    m.int64_scalar("index", 4);
    Model::int1(m.node("Gather", {"x", "index"}, "y", "gather"), "axis", 1);
    EXPECT_HAS(m.import("gather_range.onnx"), "index 4 out of range for axis 1 of [1,4,8]");
  }
}

/// y = x W (+ b): a Linear layer on N × S × D as PyTorch exports it, MatMul then Add.
Model linear_model(const Shape& bias) {
  Model m({1, 4, 8});
  m.weight("w", {8, 16});
  m.weight("b", bias);
  m.node("MatMul", {"x", "w"}, "xw", "linear");
  m.node("Add", {"b", "xw"}, "y", "bias");
  return m;
}

TEST(OnnxVit, ABiasAddedAfterAMatMulBecomesTheGemmsBiasAndKeepsInpp) {
  Model m = linear_model({16});
  Graph g = m.load("linear_bias.onnx");
  const std::int64_t params = graph_totals(g).params;
  EXPECT_EQ(params, 8 * 16 + 16);
  run_passes(g, "default");
  EXPECT_EQ(count_kind(g, OpKind::Add), 0);
  EXPECT_EQ(count_kind(g, OpKind::Fused), 0);
  const NodeId gemm = *g.find("linear");
  EXPECT_EQ(g.node(gemm).kind, OpKind::Gemm);
  EXPECT_TRUE(g.node(gemm).attrs.bias);
  EXPECT_EQ(graph_totals(g).params, params);  // the bias moved into the layer, counted once
  // As a fused tail, the Add would be applied to the whole block by every INPP member.
  EXPECT_TRUE(legal_part_dims(g, gemm).contains(PartDim::Inpp));
}

TEST(OnnxVit, AConstantOfShapeOfAnyDataTypeIsACompileTimeTensor) {
  // PyTorch writes boolean masks so; read, and cast to float while importing.
  Model m({1, 4, 8});
  m.int64s("shape", {1, 4, 8});
  auto* n = m.node("ConstantOfShape", {"shape"}, "mask", "mask");
  auto* a = n->add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  a->mutable_t()->set_data_type(onnx::TensorProto::BOOL);
  a->mutable_t()->add_dims(1);
  a->mutable_t()->set_raw_data(std::string(1, '\1'));
  Model::int1(m.node("Cast", {"mask"}, "ones", "cast"), "to", onnx::TensorProto::FLOAT);
  m.node("Mul", {"x", "ones"}, "y", "mul");
  Graph g = m.load("constant_of_shape_bool.onnx");
  EXPECT_EQ(g.node(*g.find("mul")).output.shape, (Shape{1, 4, 8}));
  EXPECT_FALSE(g.find("cast"));
  const NodeId ones = g.input(*g.find("mul"), 1);
  EXPECT_EQ(g.node(ones).kind, OpKind::Constant);
  EXPECT_EQ(g.node(ones).output.shape, (Shape{1, 4, 8}));
  EXPECT_EQ(g.node(ones).output.elem_bytes, 4);
  EXPECT_EQ(g.node(ones).attrs.float_data, std::vector<double>(32, 1.0));
}

TEST(OnnxVit, OnlyAPerChannelConstantReadByTheAddAloneIsTakenAsABias) {
  {
    Model m = linear_model({4, 16});  // one value per token and channel: not a bias
    Graph g = m.load("linear_not_bias.onnx");
    run_passes(g, "default");
    EXPECT_EQ(count_kind(g, OpKind::Fused), 1);  // Gemm + Add, as before
    const Workload w = build_workload(g);
    const Layer& fused = w.layers.front();
    EXPECT_TRUE(fused.legal.contains(PartDim::Inpp));  // the Add after the reduction
    EXPECT_EQ(fused.tail_vector_ops, 4 * 16);
  }
  {
    Model m({1, 4, 8});  // the bias an ONNX Constant node's value: no parameter
    m.weight("w", {8, 16});
    auto* c = m.node("Constant", {}, "b", "b");
    auto* value = c->add_attribute();
    value->set_name("value");
    value->set_type(onnx::AttributeProto::TENSOR);
    value->mutable_t()->set_data_type(onnx::TensorProto::FLOAT);
    value->mutable_t()->add_dims(16);
    for (int i = 0; i < 16; ++i) value->mutable_t()->add_float_data(0.5f);
    m.node("MatMul", {"x", "w"}, "xw", "linear");
    m.node("Add", {"xw", "b"}, "y", "bias");
    Graph g = m.load("linear_constant_node_bias.onnx");
    const std::int64_t params = graph_totals(g).params;
    EXPECT_EQ(params, 8 * 16);
    run_passes(g, "default");
    EXPECT_EQ(count_kind(g, OpKind::Fused), 1);
    EXPECT_EQ(graph_totals(g).params, params);
  }
  {
    Model m = linear_model({16});
    m.node("Mul", {"y", "b"}, "z", "scale");  // b read again
    Graph g = m.load("linear_shared_bias.onnx", "z");
    run_passes(g, "default");
    EXPECT_EQ(count_kind(g, OpKind::Fused), 1);
    EXPECT_FALSE(g.node(*g.find("linear")).attrs.parts.front().attrs.bias);
  }
}

}  // namespace
}  // namespace nocflow::optimizer
