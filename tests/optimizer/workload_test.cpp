// SPDX-License-Identifier: MIT
// The optimizer's view of a graph (optimizer/partition/workload.h): which partition dimensions
// split each input of a layer, and so what one PE holds of it (layer_shares, input_share).
#include "optimizer/partition/workload.h"

#include <gtest/gtest.h>

#include "optimizer/cost/cost_model.h"
#include "optimizer/cost/pe_model.h"
#include "optimizer/frontend/graph_builder.h"
#include "optimizer/frontend/load_network.h"
#include "optimizer/graph/op_cost.h"
#include "optimizer/passes/pass_manager.h"
#include "tests/optimizer/make_choice.h"

namespace nocflow::optimizer {
namespace {

const Layer& find_layer(const Workload& w, const std::string& name) {
  for (const Layer& l : w.layers)
    if (l.name == name) return l;
  throw std::runtime_error("no layer " + name);
}

TEST(Workload, OutpSplitsTheResidualFusedIntoAConvolutionNotItsInput) {
  Graph g = load_network("zoo:resnet18", ZooOptions{1, 2});
  PassManager(parse_pass_list("default")).run(g);
  const Workload w = build_workload(g);
  int fused = 0;
  for (const Layer& l : w.layers) {
    const auto inputs = g.inputs(l.id);
    if (g.node(l.id).kind != OpKind::Fused || inputs.size() != 2) continue;
    const double conv_input = static_cast<double>(g.node(inputs[0]).output.bytes());
    const double residual = static_cast<double>(g.node(inputs[1]).output.bytes());
    ASSERT_EQ(static_cast<double>(l.input_bytes()), conv_input + residual) << l.name;
    const LayerShares s = layer_shares(l, make({{PartDim::Outp, 4}}));
    EXPECT_DOUBLE_EQ(s.input, conv_input + residual / 4) << l.name;  // the conv reads all
    ++fused;
  }
  EXPECT_EQ(fused, 8);  // the second convolution of each basic block
}

// Q·Kᵀ and scores·V: the rows of the output (OFMP_H) split the first operand only, the columns
// (OFMP_W) the second only, heads (OUTP) and the inner dimension (INPP) both. A PE computing a
// quarter of the rows needs all of K (what a pipeline stage input must bring it).
TEST(Workload, AMatMulNeedsItsSecondOperandWholeUnderOfmpH) {
  Graph g = load_network("zoo:bert_base_layer", ZooOptions{1, 4});
  PassManager(parse_pass_list("default")).run(g);
  const Workload w = build_workload(g);
  for (const char* name : {"attn.scores", "attn.context"}) {
    const Layer& l = find_layer(w, name);
    ASSERT_EQ(l.inputs.size(), 2u) << name;
    const Layer::Input &a = l.inputs[0], &b = l.inputs[1];
    EXPECT_EQ(a.splits, (PartDimSet{PartDim::Outp, PartDim::OfmpH, PartDim::Inpp})) << name;
    EXPECT_EQ(b.splits, (PartDimSet{PartDim::Outp, PartDim::OfmpW, PartDim::Inpp})) << name;
    const Choice rows = make({{PartDim::OfmpH, 4}});
    EXPECT_DOUBLE_EQ(input_share(l, 0, rows), static_cast<double>(a.bytes) / 4) << name;
    EXPECT_DOUBLE_EQ(input_share(l, 1, rows), static_cast<double>(b.bytes)) << name;
    EXPECT_DOUBLE_EQ(layer_shares(l, rows).input, static_cast<double>(a.bytes) / 4 + b.bytes)
        << name;
    const Choice heads = make({{PartDim::Outp, 4}, {PartDim::Inpp, 2}});
    EXPECT_DOUBLE_EQ(layer_shares(l, heads).input, static_cast<double>(l.input_bytes()) / 8)
        << name;
  }
}

// A fixed constant read as data (a mask added to attention scores) is held like a weight: in the
// part its block reads, preloaded, never sent. The mask [1, 1, S, S] is broadcast over the batch
// and the heads, so OFMP_H and OFMP_W split it, BATCH and OUTP do not. It is neither an activation
// (no edge, no input bytes) nor a parameter. A single value (the scale) and an integer shape
// operand (a Reshape's target) hold nothing.
TEST(Workload, ALayerHoldsThePartOfAFixedMaskItsBlockReads) {
  constexpr std::int64_t batch = 2, heads = 3, seq = 16, elem = 4;
  GraphBuilder b("masked", elem);
  const NodeId scores = b.input({batch, heads, seq, seq}, "scores");
  const NodeId scaled = b.binary(OpKind::Div, scores, b.constant({}, {8.0}, "scale"), "scaled");
  const NodeId masked = b.add(scaled, b.constant({1, 1, seq, seq}, {}, "mask"), "masked");
  OpAttrs target;
  target.shape = {2};
  target.elem_bytes = 8;
  target.int_data = {batch * heads, seq * seq};
  b.op(OpKind::Reshape, {}, {masked, b.op(OpKind::Constant, target, {}, "target")}, "rows");
  const Graph g = b.finish();
  const Workload w = build_workload(g);

  const double mask = seq * seq * elem, activation = batch * heads * seq * seq * elem;
  const Layer& l = find_layer(w, "masked");
  EXPECT_EQ(l.weight_bytes, 0);
  EXPECT_EQ(op_cost(g, l.id).params, 0);
  EXPECT_EQ(static_cast<double>(l.input_bytes()), activation);
  ASSERT_EQ(l.inputs.size(), 2u);
  EXPECT_EQ(l.inputs[1].splits, (PartDimSet{PartDim::OfmpH, PartDim::OfmpW}));
  EXPECT_DOUBLE_EQ(layer_shares(l, make({})).weights, mask);
  EXPECT_DOUBLE_EQ(layer_shares(l, make({{PartDim::Batch, 2}, {PartDim::Outp, 3}})).weights, mask);
  const Choice rows = make({{PartDim::OfmpH, 4}, {PartDim::OfmpW, 2}});
  EXPECT_DOUBLE_EQ(layer_shares(l, rows).weights, mask / 8);
  EXPECT_DOUBLE_EQ(layer_shares(l, rows).input, activation / 8);
  EXPECT_DOUBLE_EQ(layer_memory_bytes(l, rows), mask / 8 + 2 * activation / 8);
  EXPECT_EQ(w.edges.size(), 2u);  // scaled -> masked -> rows: the constants are not layers

  for (const char* name : {"scaled", "rows"})
    EXPECT_DOUBLE_EQ(layer_shares(find_layer(w, name), make({})).weights, 0) << name;
}

// A Where of run-time tensors is elementwise: it splits like an Add, and holds the block of its
// condition (a mask of booleans, a fixed constant) that its block reads, whether the import kept
// the mask's values (at most 4,096: an [8, 8] one) or not (a [128, 128] one). Before, a Where of
// run-time tensors was refused, and only a mask too big to keep its values was held.
TEST(Workload, AWhereSplitsLikeAnAddAndHoldsItsConditionsBlockWhateverItsSize) {
  for (const std::int64_t seq : {8, 128}) {
    SCOPED_TRACE("sequence " + std::to_string(seq));
    GraphBuilder b("where", 4);
    const NodeId scores = b.input({2, 3, seq, seq}, "scores");
    OpAttrs mask;
    mask.shape = {1, 1, seq, seq};
    mask.elem_bytes = 1;  // booleans
    if (seq * seq <= 4096) mask.int_data.assign(static_cast<std::size_t>(seq * seq), 1);
    const NodeId cond = b.op(OpKind::Constant, mask, {}, "causal");
    b.op(OpKind::Where, {}, {cond, scores, b.constant({}, {-1e9}, "fill")}, "masked");
    const Graph g = b.finish();
    const Workload w = build_workload(g);
    const Layer& l = find_layer(w, "masked");
    const double held = static_cast<double>(seq * seq);
    EXPECT_EQ(fixed_input_bytes(g, l.id), seq * seq);
    EXPECT_EQ(graph_totals(g).fixed_bytes, seq * seq);
    EXPECT_EQ(op_cost(g, l.id).vector_ops, 2 * 3 * seq * seq);
    for (PartDim d : {PartDim::Batch, PartDim::Outp, PartDim::OfmpH, PartDim::OfmpW})
      EXPECT_TRUE(legal_part_dims(g, l.id).contains(d)) << to_string(d);
    ASSERT_EQ(l.inputs.size(), 3u);
    EXPECT_EQ(l.inputs[0].splits, (PartDimSet{PartDim::OfmpH, PartDim::OfmpW}));
    EXPECT_DOUBLE_EQ(layer_shares(l, make({{PartDim::Batch, 2}})).weights, held);
    EXPECT_DOUBLE_EQ(layer_shares(l, make({{PartDim::OfmpH, 4}})).weights, held / 4);
    EXPECT_EQ(l.inputs[2].held_bytes, 0);  // one value: an immediate
  }
}

// A Gather's indices are values it reads (positions looked up in a table of embeddings): held,
// whatever their type. A Reshape's target, as many integers, is a shape: it holds nothing.
TEST(Workload, AGathersIndicesAreHeldAndAReshapesTargetIsNot) {
  GraphBuilder b("lookup", 4);
  const NodeId table = b.parameter({64, 16}, "table");
  OpAttrs positions;
  positions.shape = {8};
  positions.elem_bytes = 8;  // int64
  positions.int_data = {0, 1, 2, 3, 4, 5, 6, 7};
  OpAttrs rows_of;
  rows_of.axis = 0;
  const NodeId rows = b.op(OpKind::Gather, rows_of,
                           {table, b.op(OpKind::Constant, positions, {}, "positions")}, "rows");
  OpAttrs target;
  target.shape = {2};
  target.elem_bytes = 8;
  target.int_data = {4, 32};
  b.op(OpKind::Reshape, {}, {rows, b.op(OpKind::Constant, target, {}, "target")}, "pairs");
  const Graph g = b.finish();
  EXPECT_TRUE(holds_fixed_data(g, *g.find("rows"), 1));
  EXPECT_EQ(fixed_input_bytes(g, *g.find("rows")), 8 * 8);
  EXPECT_TRUE(is_fixed_data(g.node(*g.find("target"))));  // data, were it read as values
  EXPECT_FALSE(holds_fixed_data(g, *g.find("pairs"), 1));  // but it is a shape
  EXPECT_EQ(fixed_input_bytes(g, *g.find("pairs")), 0);
  EXPECT_EQ(graph_totals(g).fixed_bytes, 8 * 8);
  const Workload w = build_workload(g);
  EXPECT_EQ(find_layer(w, "rows").inputs[1].held_bytes, 8 * 8);
  EXPECT_EQ(find_layer(w, "pairs").inputs[1].held_bytes, 0);
}

// An embedding lookup (a Gather of a learned table [rows, features] by token ids) splits as its
// output: OUTP cuts the table's features as it cuts a product's weights, OFMP_H the tokens and
// with them the ids a PE reads; no split holds fewer of the table's rows, since which rows the
// ids pick is known only when they run. Before, a lookup ran on one PE holding the whole table.
TEST(Workload, AnEmbeddingLookupSplitsItsTableByFeaturesAndItsIdsByTokens) {
  GraphBuilder b("embed", 4);
  const NodeId table = b.parameter({1000, 64}, "table");
  const NodeId ids = b.input({1, 16}, "ids");
  OpAttrs along_rows;
  along_rows.axis = 0;
  b.op(OpKind::Gather, along_rows, {table, ids}, "embed");
  const Graph g = b.finish();
  const Workload w = build_workload(g);
  const Layer& l = find_layer(w, "embed");
  EXPECT_EQ(g.node(l.id).output.shape, (Shape{1, 16, 64}));
  EXPECT_EQ(legal_part_dims(g, l.id), (PartDimSet{PartDim::Outp, PartDim::OfmpH}));
  const double weights = 1000 * 64 * 4;
  EXPECT_EQ(l.weight_bytes, weights);
  EXPECT_DOUBLE_EQ(layer_shares(l, make({{PartDim::Outp, 8}})).weights, weights / 8);
  EXPECT_DOUBLE_EQ(layer_shares(l, make({{PartDim::OfmpH, 8}})).weights, weights);
  ASSERT_EQ(l.inputs.size(), 2u);
  EXPECT_EQ(l.inputs[1].splits, PartDimSet{PartDim::OfmpH});  // the ids of its tokens
  EXPECT_DOUBLE_EQ(input_share(l, 1, make({{PartDim::OfmpH, 4}})), 16.0 * 4 / 4);
  EXPECT_DOUBLE_EQ(input_share(l, 1, make({{PartDim::Outp, 4}})), 16.0 * 4);  // every id
  // It holds its share of the table but reads only the rows its ids pick: its output's size.
  const Choice features = make({{PartDim::Outp, 8}});
  const double out = 16.0 * 64 * 4 / 8, ids_read = 16.0 * 4;
  EXPECT_DOUBLE_EQ(layer_memory_bytes(l, features), weights / 8 + ids_read + out);
  const HwDesc hw;
  EXPECT_EQ(pe_work(l, features, hw).sram_bytes, static_cast<std::int64_t>(out + ids_read + out));
  EXPECT_TRUE(l.lookup);
  // Along another axis, or by ids of rank 3 (the features would be the view's W, which does not
  // split the table), a Gather does not split. A table computed at run time is an input, read
  // through its region: not a lookup of held rows.
  GraphBuilder c("others", 4);
  const NodeId wide = c.constant({8, 64}, std::vector<double>(8 * 64, 1.0), "wide");
  OpAttrs along_columns;
  along_columns.axis = 1;
  c.op(OpKind::Gather, along_columns, {wide, c.input({3}, "picks")}, "cols");
  c.op(OpKind::Gather, along_rows, {c.parameter({1000, 64}, "t"), c.input({2, 4, 8}, "ids3")},
       "deep");
  c.op(OpKind::Gather, along_rows, {c.relu(c.input({10, 64}, "x"), "computed"), c.input({4}, "at")},
       "runtime");
  const Graph h = c.finish();
  for (const char* name : {"cols", "deep", "runtime"})
    EXPECT_TRUE(legal_part_dims(h, *h.find(name)).empty() == (std::string(name) != "runtime"))
        << name;
  const Workload others = build_workload(h);
  EXPECT_TRUE(find_layer(others, "deep").lookup);
  EXPECT_FALSE(find_layer(others, "runtime").lookup);
}

// The MAC array's rows take a product's features, its last axis: a Gemm's 768 (rank 3, view C),
// the attention scores' 128 keys and the context's 64 features (rank 4, view W), not the 12
// heads. Split by heads, each PE still fills a 16 x 16 array: 128 (or 64) features on the rows,
// the inner 64 (or 128) on the columns.
TEST(Workload, AProductsFeaturesGoOnTheArraysRowsWhateverItsRank) {
  Graph g = load_network("zoo:bert_base_layer", ZooOptions{1, 2});
  PassManager(parse_pass_list("default")).run(g);
  const Workload w = build_workload(g);
  HwDesc hw;
  hw.array_rows = hw.array_cols = 16;
  EXPECT_EQ(find_layer(w, "attn.query").array_rows_axis, kC);
  for (const char* name : {"attn.scores", "attn.context"}) {
    const Layer& l = find_layer(w, name);
    EXPECT_EQ(l.array_rows_axis, kW) << name;
    EXPECT_DOUBLE_EQ(pe_work(l, make({{PartDim::Outp, 12}}), hw).utilisation, 1.0) << name;
  }
  // 8 of the context's 64 features per PE fill half of the rows.
  EXPECT_DOUBLE_EQ(
      pe_work(find_layer(w, "attn.context"), make({{PartDim::OfmpW, 8}}), hw).utilisation, 0.5);
}

// A relayout layer's legal dimensions come from its factors (one walk of its blocks); they are
// what legal_part_dims says of the node.
TEST(Workload, ARelayoutsLegalDimensionsAreLegalPartDims) {
  Graph g = load_network("zoo:bert_base_layer", ZooOptions{1, 4});
  PassManager(parse_pass_list("default")).run(g);
  const Workload w = build_workload(g);
  int relayouts = 0, split = 0;
  for (const Layer& l : w.layers) {
    const OpKind kind = g.node(l.id).kind;
    if (kind != OpKind::Reshape && kind != OpKind::Flatten && kind != OpKind::Transpose) continue;
    EXPECT_EQ(l.legal, legal_part_dims(g, l.id)) << l.name;
    ++relayouts;
    split += !l.legal.empty();
  }
  EXPECT_GE(relayouts, 4);
  EXPECT_GT(split, 0);
}

}  // namespace
}  // namespace nocflow::optimizer
