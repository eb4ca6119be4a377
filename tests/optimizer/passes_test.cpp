// SPDX-License-Identifier: MIT
// Passes: CSE, DCE, identity, batch-norm folding, fusion and the fixpoint (the value passes:
// value_passes_test.cpp).
#include <gtest/gtest.h>

#include <algorithm>

#include "noc/base/error.h"
#include "optimizer/frontend/graph_builder.h"
#include "optimizer/frontend/load_network.h"
#include "optimizer/frontend/network_yaml.h"
#include "optimizer/graph/op_cost.h"
#include "optimizer/partition/workload.h"
#include "optimizer/passes/autodiff.h"
#include "optimizer/passes/fusion.h"
#include "optimizer/passes/pass_manager.h"
#include "tests/optimizer/pass_test_util.h"

namespace nocflow::optimizer {
namespace {

const std::string kConfigs = std::string(NOCFLOW_SOURCE_DIR) + "/configs/networks/";
const std::string kData = std::string(NOCFLOW_SOURCE_DIR) + "/tests/optimizer/data/";

TEST(Cse, MergesCommutedDuplicatesButNotRandomOnes) {
  GraphBuilder b("cse");
  const NodeId x = b.input({1, 8});
  const NodeId y = b.input({1, 8}, "y");
  const NodeId s1 = b.add(x, y, "s1");
  const NodeId s2 = b.add(y, x, "s2");  // commuted: the same value
  const NodeId d1 = b.dropout(s1, "d1");
  const NodeId d2 = b.dropout(s1, "d2");  // non-deterministic: kept
  b.add(b.binary(OpKind::Mul, s1, s2, "m"), b.add(d1, d2, "dd"), "out");
  Graph g = b.finish();
  const auto stats = PassManager({"cse", "dce"}).run(g);
  EXPECT_FALSE(g.find("s2"));
  EXPECT_TRUE(g.find("d1") && g.find("d2"));
  EXPECT_EQ(stat(stats, "cse").nodes_after, stat(stats, "cse").nodes_before);  // rewires only
  EXPECT_EQ(stat(stats, "dce").nodes_before - stat(stats, "dce").nodes_after, 1u);
}

TEST(Cse, TwoOutputsOfOneValueKeepTheirNames) {
  GraphBuilder b("outputs");
  const NodeId x = b.input({1, 8});
  const NodeId r1 = b.relu(x, "r1");
  const NodeId r2 = b.relu(x, "r2");  // the same value as r1, also an output
  const NodeId r3 = b.relu(b.add(r1, r2, "s"), "r3");  // reads r1 twice once r2's use moves
  const NodeId copy = b.op(OpKind::Identity, {}, {r1}, "copy");  // only another output's value
  Graph g = b.finish({r1, r2, r3, copy});
  PassManager({"cse", "identity", "dce"}).run(g);
  std::vector<std::string> names;
  for (NodeId o : g.outputs()) names.push_back(g.node(o).name);
  EXPECT_EQ(names, (std::vector<std::string>{"r1", "r2", "r3", "copy"}));
  EXPECT_EQ(g.inputs(*g.find("s")), (std::vector<NodeId>{r1, r1}));  // the uses did move
}

TEST(Cse, ConvolutionsWithTheirOwnWeightsAreNotMerged) {
  GraphBuilder b("convs");
  const NodeId x = b.input({1, 8, 4, 4});
  b.add(b.conv(x, 8, 3), b.conv(x, 8, 3));
  Graph g = b.finish();
  PassManager({"cse", "dce"}).run(g);
  EXPECT_EQ(count(g, OpKind::Conv), 2u);
}

TEST(Cse, TransformerLayerNormDuplicatesAreRemoved) {
  // The exported encoder computes each layer norm's centred input twice (seed 002's example):
  // 4 layer norms × (ReduceMean + Sub) duplicated.
  Graph g = load_network(kData + "encoder.onnx");
  const std::size_t means_before = count(g, OpKind::ReduceMean);
  const GraphTotals before = graph_totals(g);
  const auto stats = PassManager({"identity", "constfold", "cse", "dce"}).run(g);
  EXPECT_EQ(means_before, 12u);
  EXPECT_EQ(count(g, OpKind::ReduceMean), 8u);
  EXPECT_EQ(count(g, OpKind::Sub), 4u);
  EXPECT_TRUE(stat(stats, "cse").changed);
  EXPECT_GT(stat(stats, "dce").nodes_before, stat(stats, "dce").nodes_after);
  EXPECT_EQ(count(g, OpKind::Shape), 0u);  // shape arithmetic folded and swept
  EXPECT_EQ(graph_totals(g).macs, before.macs);
  EXPECT_FALSE(stat(stats, "cse", 2).changed);  // fixpoint
}

TEST(Cse, ConstantsAreEqualBitForBit) {
  // x / 0.0 and x / -0.0 are +inf and -inf: the two constants are different.
  GraphBuilder b("zeros");
  const NodeId x = b.input({1, 4});
  const NodeId plus = b.binary(OpKind::Div, x, b.constant({1}, {0.0}, "plus"), "dp");
  const NodeId minus = b.binary(OpKind::Div, x, b.constant({1}, {-0.0}, "minus"), "dn");
  const NodeId again = b.binary(OpKind::Div, x, b.constant({1}, {0.0}, "plus2"), "dp2");
  b.add(b.add(plus, minus, "s"), again, "out");
  Graph g = b.finish();
  PassManager({"cse", "dce"}).run(g);
  EXPECT_TRUE(g.find("dp") && g.find("dn"));
  EXPECT_FALSE(g.find("dp2"));  // the same constant twice: merged
}

TEST(Cse, ConvolutionsOfOneInitializerDifferOnceEachHasFoldedItsOwnBatchNorm) {
  // conv_a and conv_b read one initializer W; their batch norms differ. Whatever the order of
  // the passes, both results stay.
  GraphBuilder b("bns");
  const NodeId x = b.input({1, 8, 16, 16});
  const NodeId ca = b.conv(x, 8, 3, 1, 1, 1, false, "conv_a");
  const NodeId cb = b.conv(x, 8, 3, 1, 1, 1, false, "conv_b");
  const NodeId na = b.batchnorm(ca, 1e-5, "bn_a");
  const NodeId nb = b.batchnorm(cb, 1e-5, "bn_b");
  Graph g = b.finish();
  g.set_outputs({na, nb});
  for (NodeId id : {ca, cb}) g.node(id).attrs.weights = "W";
  g.node(na).attrs.weights = "bn1";
  g.node(nb).attrs.weights = "bn2";
  Graph folded_first = g;
  PassManager({"bnfold", "cse", "dce"}).run(folded_first);
  EXPECT_EQ(count(folded_first, OpKind::Conv), 2u);
  EXPECT_EQ(folded_first.outputs().size(), 2u);
  EXPECT_EQ(folded_first.node(*folded_first.find("conv_a")).attrs.weights, "W|bn1");
  PassManager({"cse", "dce", "bnfold"}).run(g);
  EXPECT_EQ(count(g, OpKind::Conv), 1u);  // the convolutions alone are one value, as CSE finds
  EXPECT_EQ(count(g, OpKind::BatchNorm), 2u);  // its output feeds both norms: not folded
}

TEST(Dce, UnusedAuxiliaryHeadIsRemoved) {
  Graph g = load_network(kConfigs + "aux_head.yaml");
  const auto before = graph_totals(g);
  PassManager({"dce"}).run(g);
  EXPECT_FALSE(g.find("aux_fc"));
  EXPECT_FALSE(g.find("aux_pool"));
  EXPECT_TRUE(g.find("classifier"));
  EXPECT_EQ(before.params - graph_totals(g).params, 32 * 8 * 8 * 10 + 10);  // the aux fc: 32×8×8 → 10
}

TEST(Identity, NoOpsAreRemoved) {
  GraphBuilder b("noops");
  const NodeId x = b.input({1, 4, 2, 2});
  b.relu(b.reshape(b.transpose(b.op(OpKind::Identity, {}, {x}), {0, 1, 2, 3}), {1, 4, 2, 2}), "r");
  Graph g = b.finish();
  PassManager({"identity"}).run(g);
  EXPECT_EQ(g.num_nodes(), 2u);
  EXPECT_EQ(g.inputs(*g.find("r")), std::vector<NodeId>{x});
}

TEST(Identity, AnOutputThatRepeatsAnotherNodeKeepsItsNameThroughEveryPass) {
  // Each output's value is another node's, which is not an output: that node takes the output's
  // name (it took the other's: `logits` became `r`).
  GraphBuilder b("outputs");
  const NodeId x = b.input({1, 8});
  const NodeId r = b.relu(x, "r");
  const NodeId logits = b.dropout(r, "logits");                                 // identity
  const NodeId plus0 = b.add(b.relu(r, "q"), b.constant({1}, {0.0}), "plus0");  // algebra
  const NodeId s1 = b.add(r, x, "s1");
  const NodeId s2 = b.add(x, r, "s2");  // cse: s1's value
  const NodeId sum = b.add(s1, b.relu(s2, "u"), "sum");
  Graph g = b.finish({logits, plus0, s2, sum});
  const std::size_t nodes = g.num_nodes();
  PassManager(default_pass_names()).run(g);
  std::vector<std::string> names;
  for (NodeId o : g.outputs()) names.push_back(g.node(o).name);
  EXPECT_EQ(names, (std::vector<std::string>{"logits", "plus0", "s2", "sum"}));
  EXPECT_EQ(g.node(*g.find("logits")).kind, OpKind::Relu);  // the values moved, not the nodes
  EXPECT_EQ(g.node(*g.find("plus0")).kind, OpKind::Relu);
  EXPECT_EQ(g.inputs(*g.find("plus0")), std::vector<NodeId>{*g.find("logits")});
  EXPECT_FALSE(g.find("r") || g.find("q") || g.find("s1"));
  EXPECT_EQ(g.num_nodes(), nodes - 4);  // the dropout, the + 0 and its 0, s2's duplicate
}

TEST(Identity, AnOutputThatRepeatsTheNetworkInputLeavesTheInputItsName) {
  // An input is named by the network's users (an ONNX model's input, a plan's stage inputs):
  // it keeps its name, and the output becomes the input itself.
  GraphBuilder b("input_out");
  const NodeId x = b.input({1, 8}, "x");
  const NodeId copy = b.dropout(x, "copy");
  Graph g = b.finish({copy, b.relu(x, "r")});
  PassManager({"identity", "dce"}).run(g);
  ASSERT_TRUE(g.find("x"));
  EXPECT_EQ(g.node(*g.find("x")).kind, OpKind::Input);
  EXPECT_FALSE(g.find("copy"));
  EXPECT_EQ(g.outputs().front(), *g.find("x"));
}

TEST(Identity, ATransposeWithoutPermReversesTheAxesAndStays) {
  // ONNX's Transpose without perm reverses the axes: [2, 3] becomes [3, 2], no no-op.
  GraphBuilder b("reverse");
  const NodeId x = b.input({2, 3});
  b.relu(b.op(OpKind::Transpose, {}, {x}, "t"), "r");
  Graph g = b.finish();
  PassManager({"identity"}).run(g);
  ASSERT_TRUE(g.find("t"));
  EXPECT_EQ(g.inputs(*g.find("r")), std::vector<NodeId>{*g.find("t")});
  EXPECT_EQ(g.node(*g.find("r")).output.shape, (Shape{3, 2}));
}

TEST(BnFold, FoldsIntoConvAndKeepsMacs) {
  Graph g = load_network("zoo:resnet18");
  const auto before = graph_totals(g);
  // Each batch norm (2C parameters, C its channels) becomes a bias of its conv (C parameters,
  // none more when the conv had one).
  std::int64_t dropped = 0;
  for (NodeId id : g.node_ids())
    if (g.node(id).kind == OpKind::BatchNorm) {
      const std::int64_t channels = g.node(id).output.shape.at(1);
      dropped += g.node(g.input(id, 0)).attrs.bias ? 2 * channels : channels;
    }
  EXPECT_EQ(count(g, OpKind::BatchNorm), 20u);
  PassManager({"bnfold"}).run(g);
  EXPECT_EQ(count(g, OpKind::BatchNorm), 0u);
  EXPECT_EQ(graph_totals(g).macs, before.macs);
  EXPECT_EQ(before.params - graph_totals(g).params, dropped);
}

TEST(BnFold, LeavesANormWhoseChannelsAreNotTheGemmsFeatures) {
  // A batch norm scales axis 1. A rank-2 Gemm's features are there and it folds; a rank-3
  // Gemm's are last ([2, 4, 6]: the norm's 4 scales vary across its rows), and it stays.
  for (const bool rank3 : {false, true}) {
    Graph g = parse_network_yaml(std::string("input: ") + (rank3 ? "[2, 4, 8]" : "[2, 8]") +
                                     "\nlayers:\n  - {name: fc, op: gemm, out: 6}\n"
                                     "  - {name: bn, op: bn}\n",
                                 "net.yaml");
    const std::int64_t params = graph_totals(g).params;
    PassManager({"bnfold"}).run(g);
    EXPECT_EQ(g.find("bn").has_value(), rank3);
    // Kept: 8 · 6 + 6 and 2 · 4; folded: the scales go into the weights, the shifts into the
    // bias the Gemm has.
    EXPECT_EQ(graph_totals(g).params, rank3 ? params : 8 * 6 + 6) << rank3;
  }
}

// A convolution whose own output the network gives keeps it: the norm after it is not folded.
TEST(BnFold, LeavesTheNormOfAConvolutionTheNetworkOutputs) {
  Graph g = parse_network_yaml(
      "input: [1, 8, 16, 16]\nlayers:\n  - {name: c, op: conv, out: 8, kernel: 3, pad: 1, "
      "bias: false}\n  - {name: bn, op: bn}\noutputs: [c, bn]\n",
      "net.yaml");
  PassManager({"bnfold"}).run(g);
  EXPECT_TRUE(g.find("bn").has_value());
  EXPECT_FALSE(g.node(*g.find("c")).attrs.bias);
  EXPECT_EQ(g.outputs().size(), 2u);
}

// An added trainable constant becomes the layer's bias only if the layer has none and it holds
// one value per output channel: a second bias after a Gemm, or a scalar after a convolution,
// stays an addition with its own parameters.
TEST(Fusion, AnAddedConstantIsTakenAsABiasOnlyWhereItIsOne) {
  const std::pair<const char*, std::int64_t> cases[] = {
      {"input: [1, 8]\nlayers:\n  - {name: fc, op: gemm, out: 16}\n"
       "  - {name: b, op: constant, shape: [16], trainable: true}\n"
       "  - {name: s, op: add, inputs: [fc, b]}\n",
       8 * 16 + 16 + 16},
      {"input: [1, 3, 8, 8]\nlayers:\n  - {name: conv, op: conv, out: 8, kernel: 3, bias: false}\n"
       "  - {name: b, op: constant, shape: [1], trainable: true}\n"
       "  - {name: s, op: add, inputs: [conv, b]}\n",
       8 * 3 * 9 + 1}};
  for (const auto& [yaml, params] : cases) {
    Graph g = parse_network_yaml(yaml, "net.yaml");
    ASSERT_EQ(graph_totals(g).params, params) << yaml;
    run_passes(g, "default");
    EXPECT_EQ(graph_totals(g).params, params) << yaml;
  }
}

/// x → conv_a → relu_a ─┬─────────────────────────────→ add → out
///                      └→ conv_b → bn_b → relu_b ────↗
/// Naively fusing conv_a + relu_a + add (the direct path) would close a cycle through conv_b.
Graph diamond() {
  GraphBuilder b("diamond");
  const NodeId x = b.input({1, 8, 8, 8});
  const NodeId ra = b.relu(b.conv(x, 8, 3, 1, 1, 1, false, "conv_a"), "relu_a");
  const NodeId rb = b.relu(b.batchnorm(b.conv(ra, 8, 3, 1, 1, 1, false, "conv_b"), 1e-5, "bn_b"), "relu_b");
  b.add(ra, rb, "add");
  return b.finish();
}

TEST(Fusion, NaiveGroupInTheDiamondWouldCreateACycle) {
  const Graph g = diamond();
  const auto ts = topological_timestamps(g);
  EXPECT_TRUE(fusion_creates_cycle(g, {*g.find("conv_a"), *g.find("relu_a"), *g.find("add")}, ts));
  EXPECT_FALSE(fusion_creates_cycle(
      g, {*g.find("conv_b"), *g.find("bn_b"), *g.find("relu_b"), *g.find("add")}, ts));
}

TEST(Fusion, DiamondIsFusedWithoutACycle) {
  Graph g = diamond();
  const auto before = graph_totals(g);
  PassManager({"fuse"}).run(g);  // re-runs shape inference: throws if a cycle appeared
  ASSERT_TRUE(g.find("conv_a") && g.find("conv_b"));
  EXPECT_EQ(g.node(*g.find("conv_a")).op_label(), "Conv+Relu");
  EXPECT_EQ(g.node(*g.find("conv_b")).op_label(), "Conv+BatchNorm+Relu+Add");
  EXPECT_EQ(g.num_nodes(), 3u);
  EXPECT_EQ(graph_totals(g).macs, before.macs);
  EXPECT_EQ(graph_totals(g).params, before.params);
  EXPECT_EQ(g.node(g.outputs().front()).output.shape, (Shape{1, 8, 8, 8}));
}

TEST(Fusion, AFusedLayerKeepsItsHeadsReductionUnlessATailBroadcastsIt) {
  Graph g = diamond();
  PassManager({"fuse"}).run(g);
  // conv_b + bn_b + relu_b + add: INPP members all-reduce the conv's output, then each applies
  // the rest to the whole block.
  const PartDimSet b = legal_part_dims(g, *g.find("conv_b"));
  EXPECT_TRUE(b.contains(PartDim::Inpp));
  EXPECT_TRUE(b.contains(PartDim::Outp));
  // ... and every member holds bn_b's scale and shift whole: the tail's weights.
  const Workload w = build_workload(g);
  const auto it = std::find_if(w.layers.begin(), w.layers.end(),
                               [](const Layer& l) { return l.name == "conv_b"; });
  ASSERT_NE(it, w.layers.end());
  const std::int64_t channels = g.node(*g.find("conv_b")).output.shape.at(1);
  EXPECT_EQ(it->tail_weight_bytes, 2 * channels * it->elem_bytes);
  // An add that broadcasts the conv's batch of 1 to 2: the tail's output is not the block the
  // members reduce.
  GraphBuilder wide("wide");
  const NodeId x = wide.input({1, 8, 8, 8}, "x");
  const NodeId y = wide.input({2, 8, 8, 8}, "y");
  wide.add(wide.conv(x, 8, 3, 1, 1, 1, false, "conv"), y, "add");
  Graph h = wide.finish();
  PassManager({"fuse"}).run(h);
  ASSERT_EQ(h.node(*h.find("conv")).op_label(), "Conv+Add");
  EXPECT_FALSE(legal_part_dims(h, *h.find("conv")).contains(PartDim::Inpp));
  EXPECT_TRUE(legal_part_dims(h, *h.find("conv")).contains(PartDim::Outp));
}

TEST(Fusion, AGroupTakesOneTailAndItsActivationOnly) {
  // anchor, activation, tail, activation: the pattern's end; a second tail (· y) stays apart.
  GraphBuilder b("two_tails");
  const NodeId x = b.input({1, 8, 8, 8}, "x");
  const NodeId y = b.input({1, 8, 8, 8}, "y");
  const NodeId conv = b.relu(b.conv(x, 8, 3, 1, 1, 1, false, "conv"), "relu_a");
  const NodeId tail = b.relu(b.add(conv, x, "add"), "relu_b");
  b.binary(OpKind::Mul, tail, y, "mul");
  Graph g = b.finish();
  PassManager({"fuse"}).run(g);
  ASSERT_TRUE(g.find("conv") && g.find("mul"));
  EXPECT_EQ(g.node(*g.find("conv")).op_label(), "Conv+Relu+Add+Relu");
  EXPECT_EQ(g.node(*g.find("mul")).kind, OpKind::Mul);
  EXPECT_EQ(g.inputs(*g.find("mul")), (std::vector<NodeId>{*g.find("conv"), *g.find("y")}));
}

TEST(Fusion, ResNet50DefaultPipelineKeepsMacs) {
  Graph g = load_network("zoo:resnet50");
  const auto before = graph_totals(g);
  PassManager(default_pass_names()).run(g);
  EXPECT_EQ(graph_totals(g).macs, before.macs);
  EXPECT_EQ(count(g, OpKind::Relu), 0u);
  EXPECT_EQ(count(g, OpKind::Add), 0u);  // residual adds became element-wise tails
  EXPECT_EQ(count(g, OpKind::Fused), 53u - 4u);  // every conv but the 4 projection shortcuts
}

TEST(PassManager, UnknownPassListsKnownOnes) {
  try {
    parse_pass_list("cse,dcee");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("did you mean 'dce'"), std::string::npos) << e.what();
  }
  // Spaces around the names, as a list is written in prose, are not part of them.
  EXPECT_EQ(parse_pass_list(" dce, cse "), (std::vector<std::string>{"dce", "cse"}));
  EXPECT_EQ(parse_pass_list(" none"), std::vector<std::string>{});
  // Blanks alone (an unset variable in quotes) are no list, as an empty --passes is refused; they
  // meant none.
  EXPECT_THROW(parse_pass_list("  "), InputError);
}

// Plans record --passes one way: a list without its spaces, "default" as the word (with --train
// it leaves bnfold out, where the list naming every pass is refused).
TEST(PassManager, APassListIsRecordedOneWay) {
  EXPECT_EQ(canonical_pass_list(" dce, cse "), "dce,cse");
  EXPECT_EQ(canonical_pass_list(""), "none");
  EXPECT_EQ(canonical_pass_list(" none"), "none");
  EXPECT_EQ(canonical_pass_list(" default "), "default");
  EXPECT_THROW(canonical_pass_list("dce,defaults"), InputError);
}

}  // namespace
}  // namespace nocflow::optimizer
