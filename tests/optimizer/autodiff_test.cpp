// SPDX-License-Identifier: MIT
// Autodiff (seed 003): the training graph's structure against counts computed from the forward
// graph, the transposed-window regions against brute force, and the weight-gradient mapping.
#include "optimizer/passes/autodiff.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>
#include <set>
#include <tuple>

#include "noc/base/error.h"
#include "optimizer/cost/cost_model.h"
#include "optimizer/cost/pe_model.h"
#include "optimizer/frontend/graph_builder.h"
#include "optimizer/frontend/load_network.h"
#include "optimizer/frontend/network_yaml.h"
#include "optimizer/graph/op_cost.h"
#include "optimizer/graph/shape_inference.h"
#include "optimizer/partition/region.h"
#include "optimizer/partition/relayout.h"
#include "optimizer/partition/workload.h"
#include "optimizer/passes/pass_manager.h"
#include "tests/optimizer/make_choice.h"

namespace nocflow::optimizer {
namespace {

Graph forward(const std::string& net) {
  Graph g = load_network("zoo:" + net, ZooOptions{2, 2});
  PassManager({"identity", "constfold", "cse", "dce"}).run(g);
  return g;
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

class ZooTraining : public ::testing::TestWithParam<std::string> {};

// What the training graph must hold follows from the forward graph alone: an update per
// parameterised operator with its parameter count; a weight gradient and, unless it reads the
// network input, an input gradient per Conv/Gemm, each costing the forward MACs; one gradient
// sum per extra consumer of a tensor; every gradient shaped like its tensor.
TEST_P(ZooTraining, GradientsUpdatesAndSumsFollowFromTheForwardGraph) {
  const Graph fwd = forward(GetParam());
  const Graph train = training_graph(fwd);
  std::int64_t params = 0, updates = 0, macs_expected = 0;
  std::size_t sums_expected = 0;
  for (NodeId id : fwd.node_ids()) {
    const Node& n = fwd.node(id);
    const OpCost c = op_cost(fwd, id);
    if (c.params > 0) {
      params += c.params;
      ++updates;
      const auto u = train.find(n.name + ".update");
      ASSERT_TRUE(u) << n.name;
      EXPECT_EQ(train.node(*u).kind, OpKind::WeightUpdate);
      EXPECT_EQ(train.node(*u).attrs.params, c.params) << n.name;
    }
    bool reads_input = false;
    for (NodeId in : fwd.inputs(id))
      reads_input = reads_input || fwd.node(in).kind == OpKind::Input;
    macs_expected += c.macs * (reads_input ? 2 : 3);  // no gradient for the network input
    if (n.kind != OpKind::Input && n.kind != OpKind::Constant && fwd.num_uses(id) > 1)
      sums_expected += fwd.num_uses(id) - 1;
    if (n.kind == OpKind::Conv || n.kind == OpKind::Gemm) {
      const auto grad = train.find(n.name + ".grad");
      ASSERT_EQ(grad.has_value(), !reads_input) << n.name;
      if (grad) {
        EXPECT_EQ(train.node(*grad).output.shape, fwd.node(fwd.input(id, 0)).output.shape);
      }
      EXPECT_EQ(op_cost(train, *train.find(n.name + ".wgrad")).macs, c.macs) << n.name;
    }
  }
  std::int64_t macs = 0, update_params = 0;
  std::size_t sums = 0;
  for (NodeId id : train.node_ids()) {
    const Node& n = train.node(id);
    macs += op_cost(train, id).macs;
    if (n.kind == OpKind::WeightUpdate) update_params += n.attrs.params;
    const auto dot = n.name.rfind(".gradsum");
    if (dot != std::string::npos) {
      ++sums;
      EXPECT_EQ(n.output.shape, fwd.node(*fwd.find(n.name.substr(0, dot))).output.shape) << n.name;
    }
  }
  EXPECT_EQ(update_params, params);
  EXPECT_EQ(static_cast<std::int64_t>(train.outputs().size()), updates);
  EXPECT_EQ(macs, macs_expected);
  EXPECT_EQ(sums, sums_expected);
  EXPECT_EQ(graph_totals(train).params, graph_totals(fwd).params);
}

INSTANTIATE_TEST_SUITE_P(Zoo, ZooTraining,
                         ::testing::Values("vgg5", "resnet18", "mobilenet_v2", "googlenet",
                                           "bert_base_layer", "gpt2_block"));

TEST(Autodiff, ResidualAddsPassTheirGradientOnAndForksSumIt) {
  GraphBuilder b("block");
  const NodeId x = b.input({1, 8, 6, 6});
  const NodeId c0 = b.conv(x, 8, 3, 1, 1, 1, false, "c0");
  const NodeId c1 = b.conv(c0, 8, 3, 1, 1, 1, false, "c1");
  const NodeId s = b.add(c0, c1, "sum");  // c0 forks: into c1 and the residual add
  Graph g = b.finish({b.relu(s, "out")});
  const Graph t = training_graph(g, {"momentum"});
  // sum's two inputs get out's gradient itself; c0's two gradients are summed once.
  const NodeId relu_grad = *t.find("out.grad");
  EXPECT_EQ(t.input(*t.find("c1.grad"), 0), relu_grad);
  const NodeId gradsum = *t.find("c0.gradsum");
  EXPECT_EQ(t.node(gradsum).kind, OpKind::Add);
  std::set<NodeId> summed{t.input(gradsum, 0), t.input(gradsum, 1)};
  EXPECT_EQ(summed, (std::set<NodeId>{relu_grad, *t.find("c1.grad")}));
  EXPECT_FALSE(t.find("sum.grad"));
  EXPECT_FALSE(t.find("c0.grad"));  // c0 reads the network input
  EXPECT_EQ(t.input(*t.find("c0.wgrad"), 1), gradsum);
  const Node& update = t.node(*t.find("c1.update"));
  EXPECT_EQ(update.attrs.optimizer, "momentum");
  EXPECT_EQ(op_cost(t, *t.find("c1.update")).weight_bytes, 2 * update.attrs.params * 4);
}

// Two branches of equal shapes fed the same gradient: their input gradients read different
// weights and their updates write different ones, so the passes after autodiff merge neither.
TEST(Autodiff, EqualBranchesKeepTheirOwnGradientsAndUpdates) {
  Graph g = parse_network_yaml(
      "name: branches\ninputs:\n  x: [1, 16, 16, 16]\nlayers:\n"
      "  - {name: c0, op: conv, inputs: [x], out: 16, kernel: 3, pad: 1}\n"
      "  - {name: A1, op: conv, inputs: [c0], out: 64, kernel: 1}\n"
      "  - {name: B1, op: conv, inputs: [c0], out: 64, kernel: 1}\n"
      "  - {name: A2, op: conv, inputs: [A1], out: 4, kernel: 1}\n"
      "  - {name: B2, op: conv, inputs: [B1], out: 4, kernel: 1}\n"
      "  - {name: sum, op: add, inputs: [A2, B2]}\n"
      "outputs: [sum]\n",
      "branches.yaml");
  TrainingOptions sgd;
  run_passes(g, "default", &sgd);
  for (const char* layer : {"c0", "A1", "B1", "A2", "B2"}) {
    const auto update = g.find(std::string(layer) + ".update");
    ASSERT_TRUE(update) << layer;
    EXPECT_TRUE(g.is_output(*update)) << layer;
  }
  for (const char* grad : {"A2.grad", "B2.grad", "A1.grad", "B1.grad"}) EXPECT_TRUE(g.find(grad)) << grad;
  const NodeId gradsum = *g.find("c0.gradsum");
  EXPECT_NE(g.input(gradsum, 0), g.input(gradsum, 1));
}

TEST(Autodiff, DropoutGradientsAndUnreadUpdatesSurviveCseAndDce) {
  // Two dropouts of one tensor: each gradient applies its own mask, which it does not read as
  // an input, so CSE must not merge them (seed 002: non-deterministic operators are never
  // merged). The default passes remove dropout before autodiff; cse and dce alone keep it.
  Graph g = parse_network_yaml(
      "name: drops\ninput: [2, 16]\nlayers:\n"
      "  - {name: fc1, op: fc, out: 16}\n"
      "  - {name: d1, op: dropout, inputs: [fc1], ratio: 0.5}\n"
      "  - {name: d2, op: dropout, inputs: [fc1], ratio: 0.5}\n"
      "  - {name: s, op: add, inputs: [d1, d2]}\n"
      "  - {name: fc2, op: fc, out: 4}\n",
      "drops.yaml");
  Graph t = training_graph(g);
  // A weight update writes its layer's parameters: a root for DCE, output or not.
  t.set_outputs({*t.find("fc2.update")});
  PassManager({"cse", "dce"}).run(t);
  ASSERT_TRUE(t.find("d1.grad") && t.find("d2.grad"));
  EXPECT_NE(*t.find("d1.grad"), *t.find("d2.grad"));
  const NodeId gradsum = *t.find("fc1.gradsum");
  EXPECT_NE(t.input(gradsum, 0), t.input(gradsum, 1));
  ASSERT_TRUE(t.find("fc1.update"));
  EXPECT_TRUE(t.find("fc1.wgrad"));
}

TEST(Autodiff, TheTrainingGraphIsAFixpointOfThePassesSoItReadsBackTheSame) {
  // Two MatMuls by one weight: the backward graph transposes it twice, a duplicate that the
  // passes after autodiff remove (a saved graph reruns them when it is read back).
  Graph g = parse_network_yaml(
      "name: twice\ninputs:\n  x: [2, 8, 16]\nlayers:\n"
      "  - {name: h, op: fc, inputs: [x], out: 16}\n"
      "  - {name: w, op: constant, shape: [16, 16], trainable: true}\n"
      "  - {name: a, op: matmul, inputs: [h, w]}\n"
      "  - {name: b, op: matmul, inputs: [a, w]}\n",
      "twice.yaml");
  const Graph unpassed = training_graph(g);
  TrainingOptions sgd;
  run_passes(g, "default", &sgd);
  EXPECT_LT(g.num_nodes(), unpassed.num_nodes());
  const std::size_t nodes = g.num_nodes();
  for (const PassStat& s : run_passes(g, "default", nullptr)) EXPECT_FALSE(s.changed) << s.pass;
  EXPECT_EQ(g.num_nodes(), nodes);
}

// A Where passes dy to the operand its condition selects, 0 to the other: one select per
// element for each operand that needs a gradient, reading dy and the condition; the condition
// (booleans, here a run-time Equal) has none.
TEST(Autodiff, AWhereSelectsItsGradientByItsCondition) {
  GraphBuilder b("masked");
  const NodeId x = b.input({2, 4, 16}, "x");
  const NodeId h = b.gemm(x, 16, true, "h");
  const NodeId zero = b.constant({1, 1, 16}, std::vector<double>(16, 0.0), "zero");
  const NodeId keep = b.op(OpKind::Equal, {}, {x, zero}, "keep");
  const NodeId masked =
      b.op(OpKind::Where, {}, {keep, h, b.constant({}, {-1e9}, "fill")}, "masked");
  const Graph g = b.finish({b.gemm(masked, 8, true, "out")});
  const Graph t = training_graph(g);
  const NodeId dh = *t.find("masked.grad");  // only h needs one
  EXPECT_EQ(t.node(dh).kind, OpKind::Grad);
  EXPECT_EQ(t.node(dh).attrs.grad_of, OpKind::Where);
  EXPECT_EQ(t.node(dh).output.shape, (Shape{2, 4, 16}));
  EXPECT_EQ(t.node(t.input(dh, 1)).name, "keep");
  EXPECT_EQ(op_cost(t, dh).vector_ops, 2 * 4 * 16);
  EXPECT_FALSE(t.find("keep.grad") || t.find("keep.grad0"));
  EXPECT_TRUE(t.find("h.update") && t.find("out.update"));
}

// An embedding's gradient adds each token's dy row onto the table row its id picked: a table-
// shaped gradient reading dy and the ids, one add per dy element, that the table's update
// reads; the ids have none. A block of its rows reads every token's dy (any id may pick them),
// only its own features.
TEST(Autodiff, AnEmbeddingsGradientAddsEachTokensRowOntoItsTableRow) {
  GraphBuilder b("embed");
  const NodeId table = b.parameter({100, 32}, "table");
  OpAttrs along_rows;
  along_rows.axis = 0;
  const NodeId ids = b.input({2, 8}, "ids");
  const NodeId rows = b.op(OpKind::Gather, along_rows, {table, ids}, "rows");
  const Graph g = b.finish({b.gemm(rows, 16, true, "proj")});
  const Graph t = training_graph(g);
  const NodeId dtable = *t.find("rows.wgrad");  // the table is a weight
  EXPECT_EQ(t.node(dtable).attrs.grad_of, OpKind::Gather);
  EXPECT_EQ(t.node(dtable).output.shape, (Shape{100, 32}));
  EXPECT_EQ(t.node(t.input(dtable, 1)).name, "ids");
  EXPECT_EQ(op_cost(t, dtable).vector_ops, 2 * 8 * 32);
  EXPECT_EQ(t.input(*t.find("table.update"), 0), dtable);
  EXPECT_FALSE(t.find("ids.grad"));
  // Rows 0-49 and features 8-15 of the table's gradient: all 2 x 8 tokens' dy, features 8-15.
  const Box block = view_box({{0, 50}, {8, 16}}, Shape{100, 32});
  EXPECT_EQ(input_region(t, dtable, 0, block, {0, 1}).r,
            view_box({{0, 2}, {0, 8}, {8, 16}}, Shape{2, 8, 32}).r);
  EXPECT_EQ(input_region(t, dtable, 1, block, {0, 1}).r,
            view_box({{0, 2}, {0, 8}}, Shape{2, 8}).r);
}

// A training step computes what leads to a weight update: a declared output that does not (a
// pool of the input beside the network) is left out, and said so (it vanished unsaid).
TEST(Autodiff, AnOutputThatLeadsToNoParameterIsLeftOutWithANote) {
  Graph g = parse_network_yaml(
      "name: side\ninputs:\n  x: [1, 4, 8, 8]\nlayers:\n"
      "  - {name: c, op: conv, inputs: [x], out: 4, kernel: 3, pad: 1}\n"
      "  - {name: side, op: maxpool, inputs: [x], kernel: 2, stride: 2}\n"
      "outputs: [c, side]\n",
      "side.yaml");
  const TrainingOptions sgd;
  run_passes(g, "default", &sgd);
  EXPECT_FALSE(g.find("side"));
  EXPECT_TRUE(g.find("c"));
  const auto& notes = g.notes();
  EXPECT_EQ(std::count_if(notes.begin(), notes.end(),
                          [](const std::string& n) {
                            return n ==
                                   "output 'side' leads to no parameter: the training step "
                                   "does not compute it";
                          }),
            1)
      << ::testing::PrintToString(notes);
  // An output the step computes gets none, though fusion renames it (vgg5's relu5 is conv5's).
  Graph vgg5 = load_network("zoo:vgg5");
  run_passes(vgg5, "default", &sgd);
  for (const std::string& note : vgg5.notes())
    EXPECT_EQ(note.find("leads to no parameter"), std::string::npos) << note;
}

TEST(Autodiff, RefusesWhatItCannotDifferentiate) {
  GraphBuilder b("plain");
  Graph g = b.finish({b.relu(b.input({1, 4}), "r")});
  EXPECT_THROW(training_graph(g), InputError);  // no parameters
  Graph fused = forward("vgg5");
  PassManager({"fuse"}).run(fused);
  try {  // as a graph file inspect --save wrote after the default passes: says so, and what to do
    training_graph(fused);
    ADD_FAILURE() << "a fused graph was differentiated";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("layer 'conv1' is fused"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("--passes none"), std::string::npos) << e.what();
  }
  EXPECT_THROW(training_graph(forward("vgg5"), {"lbfgs"}), InputError);
  {  // a fixed lower-rank operand needs no gradient: the other's is batched as the forward
    GraphBuilder m("fixed");
    const NodeId h = m.gemm(m.input({2, 4, 16}), 16, true, "fc");
    const Graph t = training_graph(m.finish({m.matmul(m.constant({8, 4}), h, "bmm")}));
    EXPECT_EQ(t.node(*t.find("bmm.grad")).output.shape, (Shape{2, 4, 16}));
  }
  {  // a MatMul that broadcasts its first operand: the message names the layer and both shapes
    GraphBuilder m("broadcast");
    const NodeId a = m.gemm(m.input({8, 4}), 4, true, "fa");
    const NodeId h = m.gemm(m.input({2, 4, 16}), 16, true, "fc");
    Graph bmm = m.finish({m.matmul(a, h, "bmm")});
    try {
      training_graph(bmm);
      ADD_FAILURE() << "a broadcasting MatMul was differentiated";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(
                    "layer 'bmm' (MatMul) multiplies [8,4] by [2,4,16], broadcasting its first "
                    "operand"),
                std::string::npos)
          << e.what();
    }
  }
  // Of equal ranks, an operand broadcast over a batch axis: refused naming the layer and the
  // operand (a [1, 4, 5] activation failed in an internal node, 'fa.wgrad'; a [2, 1, 4, 5]
  // weight summed nothing).
  for (const auto& [x, w, which] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {"[1, 4, 8]", "[3, 16, 6]", "first"}, {"[3, 2, 4, 8]", "[3, 1, 16, 6]", "second"}}) {
    const Graph bmm =
        parse_network_yaml("name: broadcast\ninputs:\n  x: " + x + "\nlayers:\n" +
                               "  - {name: fc, op: fc, inputs: [x], out: 16}\n" +
                               "  - {name: w, op: constant, shape: " + w + ", trainable: true}\n" +
                               "  - {name: bmm, op: matmul, inputs: [fc, w]}\n",
                           "broadcast.yaml");
    try {
      training_graph(bmm);
      ADD_FAILURE() << "a MatMul broadcasting its " << which << " operand was differentiated";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("layer 'bmm' (MatMul) multiplies"), std::string::npos)
          << e.what();
      EXPECT_NE(
          std::string(e.what()).find("broadcasting its " + which + " operand over a batch axis"),
          std::string::npos)
          << e.what();
    }
  }
  const TrainingOptions sgd;
  Graph named = load_network("zoo:resnet18");
  EXPECT_THROW(run_passes(named, "identity,bnfold", &sgd), InputError);  // inference only
  Graph r18 = load_network("zoo:resnet18");
  auto norms = [](const Graph& g) {
    std::size_t n = 0;
    for (NodeId id : g.node_ids()) n += g.node(id).kind == OpKind::BatchNorm;
    return n;
  };
  const std::size_t loaded = norms(r18);
  const auto stats = run_passes(r18, "default", &sgd);  // default leaves bnfold out
  std::size_t autodiff = 0;
  for (const PassStat& st : stats) autodiff += st.pass == "autodiff";
  EXPECT_GT(loaded, 0u);
  EXPECT_EQ(norms(r18), loaded);
  EXPECT_EQ(autodiff, 1u);
}

// Brute force: the dY rows (and channels) a ConvGradInput block reads are the bounding range of
// the output positions whose windows touch the block.
TEST(Autodiff, TransposedWindowsAreTheBoundingRangeOfTheTouchingOutputs) {
  std::mt19937 rng(7);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (int trial = 0; trial < 300; ++trial) {
    const std::int64_t k = pick(1, 5), s = pick(1, 3), d = pick(1, 2), p = pick(0, 2),
                       size = pick(k * d, 14), groups = pick(1, 2) == 1 ? 1 : 2;
    GraphBuilder b("t");
    const NodeId x = b.input({1, 4, size, size});
    OpAttrs a;
    a.out_channels = 6;
    a.kernel = {k, k};
    a.stride = {s, s};
    a.dilation = {d, d};
    a.pads = {p, p, p, p};
    a.groups = groups;
    const Graph g = b.finish({b.op(OpKind::Conv, a, {x}, "conv")});
    const Shape dy = g.node(*g.find("conv")).output.shape;
    // The input gradient as autodiff makes it.
    GraphBuilder b2("g");
    OpAttrs ga = a;
    ga.shape = {1, 4, size, size};
    const Graph g2 = b2.finish({b2.op(OpKind::ConvGradInput, ga, {b2.input(dy, "dy")}, "gi")});
    const NodeId gi = *g2.find("gi");
    const std::int64_t lo = pick(0, static_cast<int>(size) - 1),
                       hi = pick(static_cast<int>(lo) + 1, static_cast<int>(size));
    const std::int64_t c0 = pick(0, 3), c1 = pick(static_cast<int>(c0) + 1, 4);
    Box block{{Range{0, 1}, Range{c0, c1}, Range{lo, hi}, Range{0, size}}};
    const Box need = input_region(g2, gi, 0, block, {0, 6 / groups});
    std::int64_t first = -1, last = -1;
    for (std::int64_t oh = 0; oh < dy[2]; ++oh)
      for (std::int64_t r = 0; r < k; ++r) {
        const std::int64_t ih = oh * s - p + r * d;
        if (ih >= lo && ih < hi) {
          if (first < 0) first = oh;
          last = oh;
        }
      }
    const Range want = first < 0 ? Range{0, 0} : Range{first, last + 1};
    EXPECT_EQ(need.r[kH].empty(), want.empty()) << trial;
    if (!want.empty()) {
      EXPECT_EQ(need.r[kH], want) << "k" << k << " s" << s << " d" << d << " p" << p << " [" << lo
                                  << "," << hi << ")";
    }
    std::int64_t k_lo = 6, k_hi = 0;  // dY channels whose group meets the block's channels
    for (std::int64_t kk = 0; kk < 6; ++kk)
      for (std::int64_t c = c0; c < c1; ++c)
        if (kk / (6 / groups) == c / (4 / groups))
          k_lo = std::min(k_lo, kk), k_hi = std::max(k_hi, kk + 1);
    EXPECT_EQ(need.r[kC], (Range{k_lo, k_hi})) << trial;
  }
}

// A weight gradient maps the forward output channels onto the array's rows and the batch times
// the positions onto its columns, so it runs with the forward convolution's utilisation when
// both split their channels alike.
TEST(Autodiff, WeightGradientsFillTheArrayLikeTheirForwardConvolution) {
  const Graph fwd = forward("resnet18");
  const Graph train = training_graph(fwd);
  const Workload w = build_workload(train);
  HwDesc hw;
  hw.macs_per_cycle = 256;
  hw.array_rows = 16;
  hw.array_cols = 16;
  std::map<std::string, const Layer*> by_name;
  for (const Layer& l : w.layers) by_name[l.name] = &l;
  int checked = 0;
  for (const Layer& l : w.layers) {
    if (!ends_with(l.name, ".wgrad") || l.op != "ConvGradWeight") continue;
    const std::int64_t k = l.out[kN];
    const Choice c = make({{PartDim::Batch, k >= 4 ? 4 : 1}});
    const PeWork pw = pe_work(l, c, hw);
    const double rows = static_cast<double>(k / (k >= 4 ? 4 : 1));
    const double cols = static_cast<double>(l.reduction * l.reduction_span);
    auto fill = [](double n, double lanes) { return n / (std::ceil(n / lanes) * lanes); };
    EXPECT_DOUBLE_EQ(pw.utilisation, fill(rows, 16) * fill(cols, 16)) << l.name;
    EXPECT_EQ(l.reduction, 2);  // the batch
    ++checked;
  }
  std::size_t convs = 0;
  for (NodeId id : fwd.node_ids()) convs += fwd.node(id).kind == OpKind::Conv;
  EXPECT_EQ(static_cast<std::size_t>(checked), convs);
}

// Element-wise and channel-wise layers read only their output channels' inputs: OUTP splits
// their input share (the SRAM check), a dense convolution's it does not.
TEST(Autodiff, OutpSplitsTheInputShareOfChannelWiseLayersOnly) {
  const Graph train = training_graph(forward("mobilenet_v2"));
  const Workload w = build_workload(train);
  int dense = 0, channelwise = 0;
  for (const Layer& l : w.layers) {
    const LayerShares whole = layer_shares(l, make({}));
    const LayerShares half = layer_shares(l, make({{PartDim::Outp, 2}}));
    const Node& n = train.node(l.id);
    const bool depthwise = n.kind == OpKind::Conv && n.attrs.groups > 1;
    if ((n.kind == OpKind::Conv && !depthwise) || n.kind == OpKind::Gemm) {
      EXPECT_DOUBLE_EQ(half.input, whole.input) << l.name;
      ++dense;
    } else if (n.kind == OpKind::BatchNorm || n.kind == OpKind::Grad || depthwise) {
      if (l.out[kC] < 2) continue;
      EXPECT_DOUBLE_EQ(half.input, whole.input / 2) << l.name;
      ++channelwise;
    }
  }
  EXPECT_GT(dense, 30);  // 1x1 convolutions and the classifier
  EXPECT_GT(channelwise, 100);
}

}  // namespace
}  // namespace nocflow::optimizer
