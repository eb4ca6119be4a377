// SPDX-License-Identifier: MIT
// Passes: CSE, DCE, identity, constant folding, batch-norm folding, fusion and the fixpoint.
#include <gtest/gtest.h>

#include <algorithm>

#include "noc/base/error.h"
#include "optimizer/frontend/graph_builder.h"
#include "optimizer/frontend/load_network.h"
#include "optimizer/graph/op_cost.h"
#include "optimizer/partition/workload.h"
#include "optimizer/passes/autodiff.h"
#include "optimizer/passes/fusion.h"
#include "optimizer/passes/pass_manager.h"

namespace nocflow::optimizer {
namespace {

const std::string kConfigs = std::string(NOCFLOW_SOURCE_DIR) + "/configs/networks/";
const std::string kData = std::string(NOCFLOW_SOURCE_DIR) + "/tests/optimizer/data/";

std::size_t count(const Graph& g, OpKind k) {
  std::size_t n = 0;
  for (NodeId id : g.node_ids()) n += g.node(id).kind == k;
  return n;
}

const PassStat& stat(const std::vector<PassStat>& s, const std::string& pass, int round = 1) {
  for (const auto& x : s)
    if (x.pass == pass && x.round == round) return x;
  throw std::runtime_error("no stat");
}

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

TEST(ConstantFolding, AComputationOfFixedConstantsIsAConstantButOneOfWeightsStays) {
  // Swin's attention scale, head_dim ** -0.5: two fixed scalars whose float result the graph
  // does not hold. It is a constant, not a layer that one PE computes and sends to every PE of
  // each block's Mul. A Transpose of a learned weight stays a layer: training updates it.
  GraphBuilder b("scale");
  const NodeId x = b.input({1, 4, 8});
  const NodeId scale = b.binary(OpKind::Pow, b.constant({}, {16}), b.constant({}, {-0.5}), "pow");
  OpAttrs w;
  w.shape = {8, 8};
  w.trainable = true;
  const NodeId wt = b.transpose(b.op(OpKind::Constant, w, {}, "w"), {1, 0}, "wt");
  b.matmul(b.binary(OpKind::Mul, x, scale, "mul"), wt, "mm");
  Graph g = b.finish();
  PassManager({"constfold", "dce"}).run(g);
  EXPECT_EQ(g.node(*g.find("pow")).kind, OpKind::Constant);
  EXPECT_TRUE(g.inputs(*g.find("pow")).empty());
  EXPECT_EQ(g.node(*g.find("pow")).output.shape, Shape{});
  EXPECT_EQ(g.node(*g.find("wt")).kind, OpKind::Transpose);
  EXPECT_EQ(count(g, OpKind::Constant), 2u);  // the scale and the weight; Pow's operands gone
}

TEST(ConstantFolding, ALayerWithItsOwnParametersOfAFixedConstantStays) {
  // A learned projection (and a layer norm) of a fixed table, as a network YAML's
  // `trainable: false` constant: the layer reads only that constant, but its weights are
  // learned. Folded into a constant, its parameters were dropped from the totals and training
  // left them without a gradient or an update.
  auto build = [] {
    GraphBuilder b("fixed_table");
    const NodeId x = b.input({1, 16, 32});
    const NodeId table = b.constant({1, 16, 32}, {}, "table");
    const NodeId pe = b.gemm(table, 32, true, "pe");
    const NodeId norm = b.layernorm(table, 1e-5, "norm");
    b.gemm(b.add(b.add(x, pe, "sum"), norm, "sum2"), 8, true, "out");
    return b.finish();
  };
  Graph g = build();
  run_passes(g, "default");
  EXPECT_EQ(g.node(*g.find("pe")).op_label(), "Gemm+Add");  // fused with the first sum
  EXPECT_EQ(g.node(*g.find("norm")).kind, OpKind::LayerNorm);
  EXPECT_EQ(graph_totals(g).params, (32 * 32 + 32) + 2 * 32 + (32 * 8 + 8));
  Graph t = build();
  const TrainingOptions sgd;
  run_passes(t, "default", &sgd);
  for (const char* name : {"pe.wgrad", "pe.update", "norm.update", "out.update"})
    EXPECT_TRUE(t.find(name)) << name;
}

TEST(ConstantFolding, AFoldedComputationKeepsTheValueAlgebraNeeds) {
  // x + 3 · 0: before constant-only nodes were folded, algebra made 3 · 0 zeros and then
  // x + 0 x. Folded first (constfold runs before algebra) into a constant without contents,
  // the Add stayed a layer. The fold computes small element-wise values itself: here 0, and
  // 4 ** 0 = 1, so x · 1 is x too; Swin's scale 16 ** -0.5 keeps its 0.25.
  GraphBuilder b("values");
  const NodeId x = b.input({2, 8});
  const NodeId zero = b.binary(OpKind::Mul, b.constant({}, {3}), b.constant({1}, {0}), "zero");
  const NodeId one = b.binary(OpKind::Pow, b.constant({1, 8}, std::vector<double>(8, 4)),
                              b.constant({}, {0}), "one");
  const NodeId sum = b.add(x, zero, "sum");
  const NodeId r = b.relu(x, "r");
  const NodeId product = b.binary(OpKind::Mul, r, one, "product");
  const NodeId scale =
      b.binary(OpKind::Pow, b.constant({}, {16}), b.constant({}, {-0.5}), "scale");
  const NodeId scaled = b.binary(OpKind::Mul, r, scale, "scaled");
  Graph g = b.finish({sum, product, scaled});
  run_passes(g, "default");
  EXPECT_FALSE(g.find("sum") && g.node(*g.find("sum")).kind == OpKind::Add);
  EXPECT_FALSE(g.find("product") && g.node(*g.find("product")).kind == OpKind::Mul);
  ASSERT_TRUE(g.find("scale"));
  const Node& s = g.node(*g.find("scale"));
  EXPECT_EQ(s.kind, OpKind::Constant);
  EXPECT_EQ(s.attrs.float_data, std::vector<double>{0.25});
  EXPECT_EQ(graph_totals(g).layers, 2u);  // r and scaled
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

TEST(Algebra, NeutralOperandsGoAndTimesZeroCutsWhatItMultiplied) {
  // Seed 002's example: D = C · 0 with C = X · A becomes zeros, and the MatMul and its weights
  // are then dead.
  GraphBuilder b("algebra");
  const NodeId x = b.input({4, 8});
  const NodeId w = b.parameter({8, 8}, "w");  // learned: its contents may change, never simplified
  const NodeId c = b.matmul(x, w, "c");
  const NodeId zero = b.constant({1}, {0.0}, "zero");
  const NodeId one = b.constant({1, 8}, std::vector<double>(8, 1.0), "one");
  const NodeId half = b.constant({1}, {0.5}, "half");
  const NodeId d = b.binary(OpKind::Mul, c, zero, "d");            // zeros of [4, 8]
  const NodeId e = b.binary(OpKind::Mul, one, b.relu(x, "r"), "e");  // relu(x)
  const NodeId f = b.binary(OpKind::Sub, e, zero, "f");             // relu(x)
  const NodeId h = b.binary(OpKind::Mul, f, half, "h");             // kept: not neutral
  const NodeId k = b.binary(OpKind::Div, one, b.input({4, 8}, "y"), "k");  // 1 / y: kept
  const NodeId zeros48 = b.constant({4, 8}, std::vector<double>(32, 0.0), "zeros48");
  const NodeId s = b.add(zeros48, b.input({1}, "z"), "s");  // z broadcast: not z
  Graph g = b.finish({d, h, k, s});
  const auto stats = PassManager({"algebra", "dce"}).run(g);
  EXPECT_FALSE(g.find("c"));  // the MatMul, cut off by · 0
  EXPECT_FALSE(g.find("w"));  // and its weights
  ASSERT_TRUE(g.find("d"));
  const Node& zeros = g.node(*g.find("d"));
  EXPECT_EQ(zeros.kind, OpKind::Constant);
  EXPECT_EQ(zeros.output.shape, (Shape{4, 8}));
  EXPECT_EQ(zeros.attrs.float_data, std::vector<double>(32, 0.0));
  EXPECT_FALSE(is_fixed_data(zeros));  // nothing a reader holds, unlike zeros48, written as data
  EXPECT_TRUE(is_fixed_data(g.node(*g.find("zeros48"))));
  EXPECT_FALSE(g.find("e"));
  EXPECT_FALSE(g.find("f"));
  EXPECT_EQ(g.inputs(*g.find("h")), (std::vector<NodeId>{*g.find("r"), half}));
  EXPECT_TRUE(g.find("k") && g.find("s"));
  EXPECT_FALSE(stat(stats, "algebra", 2).changed);  // fixpoint
  // Alone, without DCE to sweep what it left dead, it reaches a fixpoint too.
  GraphBuilder lone("lone");
  const NodeId in = lone.input({4, 8});
  lone.relu(lone.add(lone.relu(in, "r0"), lone.constant({1}, {0.0}, "z0"), "plus0"), "out");
  Graph only = lone.finish();
  const auto alone = PassManager({"algebra"}).run(only);
  EXPECT_TRUE(stat(alone, "algebra").changed);
  EXPECT_FALSE(stat(alone, "algebra", 2).changed);
  EXPECT_EQ(only.inputs(*only.find("out")), std::vector<NodeId>{*only.find("r0")});
}

// Zeros too many to keep their values (over 2^16 elements) are still zeros: a product by them
// is zeros, and adding them is neutral; a layer reading them holds nothing.
TEST(Algebra, ZerosTooManyToListAreStillZeros) {
  GraphBuilder b("big_zeros");
  const NodeId x = b.input({512, 256}, "x");
  const NodeId cut = b.binary(OpKind::Mul, b.relu(x, "r"), b.constant({1}, {0.0}, "zero"), "cut");
  const NodeId y = b.input({512, 256}, "y");
  const NodeId plus = b.relu(b.add(b.relu(y, "ry"), cut, "plus"), "out");  // ry + zeros: ry
  const NodeId times = b.binary(OpKind::Mul, cut, b.relu(x, "rx"), "times");  // zeros · rx
  const NodeId masked = b.add(cut, b.input({1, 256}, "row"), "masked");  // row broadcast: kept
  Graph g = b.finish({plus, times, masked});
  ASSERT_GT(g.node(cut).output.numel(), 1 << 16);
  PassManager({"algebra", "dce"}).run(g);
  const Node& zeros = g.node(cut);
  ASSERT_EQ(zeros.kind, OpKind::Constant);
  EXPECT_TRUE(zeros.attrs.float_data.empty());  // too many to list
  EXPECT_TRUE(zeros.attrs.zeros);
  EXPECT_EQ(g.node(*g.find("times")).kind, OpKind::Constant);  // zeros · anything
  EXPECT_EQ(g.inputs(*g.find("out")), std::vector<NodeId>{*g.find("ry")});  // ry + zeros is ry
  EXPECT_FALSE(g.find("r"));
  ASSERT_TRUE(g.find("masked"));
  EXPECT_EQ(fixed_input_bytes(g, *g.find("masked")), 0);
  EXPECT_EQ(graph_totals(g).fixed_bytes, 0);
}

TEST(Algebra, AConstantOfSeveralValuesIsNeverNeutral) {
  // [0, 1] and [0, 5] start with a neutral value but are not neutral: x · [0, 1] keeps x's
  // second column and x + [0, 5] shifts it.
  GraphBuilder b("mixed");
  const NodeId x = b.input({4, 2});
  const NodeId times = b.binary(OpKind::Mul, x, b.constant({2}, {0.0, 1.0}, "zero_one"), "times");
  const NodeId plus = b.add(x, b.constant({2}, {0.0, 5.0}, "zero_five"), "plus");
  const NodeId ones = b.binary(OpKind::Mul, x, b.constant({2}, {1.0, 2.0}, "one_two"), "ones");
  Graph g = b.finish({times, plus, ones});
  PassManager({"algebra", "dce"}).run(g);
  for (const char* name : {"times", "plus", "ones"}) {
    ASSERT_TRUE(g.find(name)) << name;
    EXPECT_EQ(g.node(*g.find(name)).kind, std::string(name) == "plus" ? OpKind::Add : OpKind::Mul)
        << name;
    EXPECT_EQ(g.inputs(*g.find(name)).size(), 2u) << name;
  }
}

TEST(Algebra, ChainsOfOneOperatorTakeOneOrderSoThatCseMergesThem) {
  // (a + x) + c and a + (c + x); a · (x · c) and (c · a) · x. Each chain's value is an output,
  // so that the chains stay apart.
  GraphBuilder b("chains");
  const NodeId a = b.input({2, 4}, "a");
  const NodeId x = b.input({2, 4}, "x");
  const NodeId c = b.input({2, 4}, "c");
  const NodeId ax = b.add(a, x, "ax");
  const NodeId s1 = b.add(ax, c, "s1");
  const NodeId s2 = b.add(a, b.add(c, x, "cx"), "s2");
  const NodeId xc = b.binary(OpKind::Mul, x, c, "xc");
  const NodeId p1 = b.binary(OpKind::Mul, a, xc, "p1");
  const NodeId p2 = b.binary(OpKind::Mul, b.binary(OpKind::Mul, c, a, "ca"), x, "p2");
  const NodeId shared = b.add(c, a, "shared");  // used twice: an operand of t, not its chain's
  const NodeId t = b.add(x, shared, "t");
  const NodeId sq = b.binary(OpKind::Mul, shared, shared, "sq");
  Graph g = b.finish({s1, s2, p1, p2, t, sq});
  PassManager({"algebra"}).run(g);
  // Operands sorted (a, x, c), added left to right: a + x, then + c.
  EXPECT_EQ(g.inputs(ax), (std::vector<NodeId>{a, x}));
  EXPECT_EQ(g.inputs(s1), (std::vector<NodeId>{ax, c}));
  EXPECT_EQ(g.inputs(*g.find("cx")), (std::vector<NodeId>{a, x}));
  EXPECT_EQ(g.inputs(s2), (std::vector<NodeId>{*g.find("cx"), c}));
  EXPECT_EQ(g.inputs(xc), (std::vector<NodeId>{a, x}));  // a · x ...
  EXPECT_EQ(g.inputs(p1), (std::vector<NodeId>{xc, c}));  // ... · c
  EXPECT_EQ(g.inputs(t), (std::vector<NodeId>{x, shared}));  // two operands: as it was
  // CSE then finds the equal chains: both sums read a + x once, both products a · x.
  PassManager({"algebra", "cse", "dce"}).run(g);
  EXPECT_FALSE(g.find("cx"));
  EXPECT_FALSE(g.find("ca"));
  EXPECT_EQ(g.inputs(s2), (std::vector<NodeId>{ax, c}));
  EXPECT_EQ(g.inputs(p2), (std::vector<NodeId>{xc, c}));
  // Operands of another element size stay where they are: (a + w) + x with a 4-byte w would
  // become a 2-byte a + x.
  GraphBuilder mixed("mixed");
  auto input = [&](int bytes, const std::string& name) {
    OpAttrs attrs;
    attrs.shape = {2, 4};
    attrs.elem_bytes = bytes;
    return mixed.op(OpKind::Input, attrs, {}, name);
  };
  const NodeId m_a = input(2, "a"), m_x = input(2, "x"), m_w = input(4, "w");
  const NodeId aw = mixed.add(m_a, m_w, "aw");
  const NodeId sum = mixed.add(aw, m_x, "sum");
  Graph m = mixed.finish();
  PassManager({"algebra"}).run(m);
  EXPECT_EQ(m.inputs(aw), (std::vector<NodeId>{m_a, m_w}));
  EXPECT_EQ(m.inputs(sum), (std::vector<NodeId>{aw, m_x}));
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
