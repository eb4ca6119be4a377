// SPDX-License-Identifier: MIT
// The value passes: constant folding and algebra (neutral operands, products by zero, one order
// for chains of one operator).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "optimizer/frontend/graph_builder.h"
#include "optimizer/graph/op_cost.h"
#include "optimizer/passes/autodiff.h"
#include "optimizer/passes/pass_manager.h"
#include "tests/optimizer/pass_test_util.h"

namespace nocflow::optimizer {
namespace {

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
  const NodeId scale = b.binary(OpKind::Pow, b.constant({}, {16}), b.constant({}, {-0.5}), "scale");
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
  const NodeId d = b.binary(OpKind::Mul, c, zero, "d");                    // zeros of [4, 8]
  const NodeId e = b.binary(OpKind::Mul, one, b.relu(x, "r"), "e");        // relu(x)
  const NodeId f = b.binary(OpKind::Sub, e, zero, "f");                    // relu(x)
  const NodeId h = b.binary(OpKind::Mul, f, half, "h");                    // kept: not neutral
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
  const NodeId plus = b.relu(b.add(b.relu(y, "ry"), cut, "plus"), "out");     // ry + zeros: ry
  const NodeId times = b.binary(OpKind::Mul, cut, b.relu(x, "rx"), "times");  // zeros · rx
  const NodeId masked = b.add(cut, b.input({1, 256}, "row"), "masked");       // row broadcast: kept
  Graph g = b.finish({plus, times, masked});
  ASSERT_GT(g.node(cut).output.numel(), 1 << 16);
  PassManager({"algebra", "dce"}).run(g);
  const Node& zeros = g.node(cut);
  ASSERT_EQ(zeros.kind, OpKind::Constant);
  EXPECT_TRUE(zeros.attrs.float_data.empty());  // too many to list
  EXPECT_TRUE(zeros.attrs.zeros);
  EXPECT_EQ(g.node(*g.find("times")).kind, OpKind::Constant);               // zeros · anything
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
  EXPECT_EQ(g.inputs(xc), (std::vector<NodeId>{a, x}));      // a · x ...
  EXPECT_EQ(g.inputs(p1), (std::vector<NodeId>{xc, c}));     // ... · c
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

}  // namespace
}  // namespace nocflow::optimizer
