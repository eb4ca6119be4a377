// SPDX-License-Identifier: MIT
// Malformed inputs found by fuzzing: each is refused with an InputError naming the file and the
// node, never a crash, an internal error or a wrapped (negative or zero) size.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "noc/base/error.h"
#include "optimizer/frontend/load_network.h"
#include "optimizer/frontend/network_yaml.h"
#include "optimizer/graph/op_cost.h"
#include "optimizer/graph/shape_inference.h"
#include "tests/input_error.h"
#include "tests/optimizer/onnx_model.h"
#include "tests/scratch.h"

namespace nocflow::optimizer {
namespace {

using testing::error_of;

// --- graph files: fused parts -------------------------------------------------------------

/// A graph file with one fused node whose parts are `parts` (flow maps, one per line).
std::string fused_graph(const std::vector<std::string>& parts, const std::string& inputs = "[x]") {
  std::string text =
      "format: nocflow-graph-1\nname: g\noutputs: [f]\nnodes:\n"
      "  - {name: x, op: Input, attrs: {shape: [1, 4, 8, 8]}}\n"
      "  - {name: y, op: Input, attrs: {shape: [1, 4, 8, 8]}}\n"
      "  - name: f\n    op: Fused\n    inputs: " +
      inputs + "\n    parts:\n";
  for (const auto& p : parts) text += "      - " + p + "\n";
  return text;
}

TEST(Robustness, FusedPartWithAnInputCountItsOperatorCannotTakeIsRefusedWithItsPlace) {
  const std::string conv = "{name: c, op: Conv, num_inputs: 1, attrs: {out_channels: 4}}";
  const struct {
    std::vector<std::string> parts;
    std::string inputs;
    const char* message;
  } cases[] = {
      // Each of these read past the inputs in infer_output and crashed.
      {{conv, "{name: relu, op: Relu, num_inputs: -1}"},
       "[x]",
       "g.yaml:12:44: nodes[2].parts[1].num_inputs: expected 0 for Relu after the previous "
       "part's output, got -1"},
      {{"{name: c, op: Conv, num_inputs: 0, attrs: {out_channels: 4}}"},
       "[x]",
       "g.yaml:11:41: nodes[2].parts[0].num_inputs: expected 1 for Conv, got 0"},
      {{conv, "{name: add, op: Add, num_inputs: 0}"},
       "[x]",
       "g.yaml:12:42: nodes[2].parts[1].num_inputs: expected 1 for Add after"},
      {{conv, "{name: relu, op: Relu, num_inputs: 5}"}, "[x]", "parts[1].num_inputs: expected 0"},
      {{conv, "{name: add, op: Add, num_inputs: 1, chain_input: 7}"},
       "[x, y]",
       "g.yaml:12:58: nodes[2].parts[1].chain_input: expected an input position in 0..1"},
      {{conv, "{name: n, op: Fused, num_inputs: 0}"},
       "[x]",
       "nodes[2].parts[1].op: a part cannot itself be Fused"},
  };
  for (const auto& c : cases) {
    const std::string msg =
        error_of([&] { parse_network_yaml(fused_graph(c.parts, c.inputs), "g.yaml"); });
    EXPECT_HAS(msg, c.message);
  }
  // The same parts well formed are read.
  EXPECT_EQ(
      parse_network_yaml(
          fused_graph({conv, "{name: add, op: Add, num_inputs: 1, chain_input: 1}"}, "[x, y]"),
          "g.yaml")
          .node(2)
          .output.shape,
      (Shape{1, 4, 8, 8}));
}

TEST(Robustness, FusedNodeBuiltInMemoryIsCheckedByShapeInferenceToo) {
  Graph g("g");
  OpAttrs in;
  in.shape = {1, 4, 8, 8};
  const NodeId x = g.add_node(Node{"x", OpKind::Input, in, {}});
  OpAttrs f;
  FusedPart conv{"c", OpKind::Conv, {}, 0, 0, {}, {}};  // no inputs: Conv takes 1
  conv.attrs.out_channels = 4;
  f.parts = {conv};
  g.set_outputs({g.add_node(Node{"f", OpKind::Fused, f, {}}, {x})});
  EXPECT_HAS(error_of([&] { infer_shapes(g); }),
             "node 'f' (Conv): fused part 'c' (Conv): takes 1 inputs, has 0");
}

// --- ONNX import -----------------------------------------------------------------------------

/// Input [1,3,8,8], weight w [4,3,3,3], Conv "conv" → y.
Model conv_model(const Shape& input = {1, 3, 8, 8}) {
  Model m(input);
  m.weight("w", {4, 3, 3, 3});
  return m;
}

TEST(Robustness, OnnxConvWithBadStridesOrInputRankIsRefusedBeforeOnnxShapeInference) {
  {  // SIGFPE in onnx convPoolShapeInference
    Model m = conv_model();
    Model::ints(m.node("Conv", {"x", "w"}, "y", "conv"), "strides", {0, 0});
    const std::string msg = m.import("stride0.onnx");
    EXPECT_HAS(msg,
               "robustness_stride0.onnx: node 'conv' (Conv): strides [0,0] must be at least 1");
  }
  {  // SIGSEGV there: a 3-D input with a 4-D weight
    Model m = conv_model({1, 3, 8});
    m.node("Conv", {"x", "w"}, "y", "conv");
    EXPECT_HAS(m.import("rank3.onnx"),
               "robustness_rank3.onnx: node 'conv' (Conv): Conv needs a rank-4 input, got [1,3,8]");
  }
  {  // the same through an intermediate tensor, whose rank only shape inference knows
    Model m = conv_model();
    m.int64s("s", {1, 3, 64});
    m.node("Reshape", {"x", "s"}, "r", "flat");
    m.node("Conv", {"r", "w"}, "y", "conv");
    EXPECT_HAS(m.import("reshape_rank3.onnx"), "node 'conv' (Conv): Conv needs a rank-4 input");
  }
  {
    Model m = conv_model();
    Model::ints(m.node("Conv", {"x", "w"}, "y", "conv"), "dilations", {1, 0});
    EXPECT_HAS(m.import("dilation0.onnx"),
               "node 'conv' (Conv): dilations [1,0] must be at least 1");
  }
  {
    Model m = conv_model();
    Model::ints(m.node("Conv", {"x", "w"}, "y", "conv"), "pads", {1, 1, -1, 1});
    EXPECT_HAS(m.import("padneg.onnx"), "node 'conv' (Conv): pads [1,1,-1,1] must be at least 0");
  }
}

TEST(Robustness, OnnxWindowAttributesOfTheWrongLengthAreInputErrors) {
  // Each was std::out_of_range from s.at(1): an internal error.
  {
    Model m = conv_model();
    Model::ints(m.node("Conv", {"x", "w"}, "y", "conv"), "strides", {2});
    EXPECT_HAS(m.import("strides1.onnx"),
               "robustness_strides1.onnx: node 'conv' (Conv): strides [2] must have 2 values for a "
               "2-D window");
  }
  {
    Model m = conv_model();
    Model::ints(m.node("Conv", {"x", "w"}, "y", "conv"), "dilations", {1});
    EXPECT_HAS(m.import("dil1.onnx"), "node 'conv' (Conv): dilations [1] must have 2 values");
  }
  {
    Model m({1, 3, 8, 8});
    auto* pool = m.node("MaxPool", {"x"}, "y", "pool");
    Model::ints(pool, "kernel_shape", {2, 2});
    Model::ints(pool, "strides", {2});
    EXPECT_HAS(m.import("pool_str1.onnx"),
               "robustness_pool_str1.onnx: node 'pool' (MaxPool): strides [2] must have 2 values");
  }
  {
    Model m({1, 3, 8, 8});
    Model::ints(m.node("AveragePool", {"x"}, "y", "pool"), "kernel_shape", {0, 2});
    EXPECT_HAS(m.import("pool_k0.onnx"),
               "node 'pool' (AveragePool): kernel [0,2] must be at least 1");
  }
}

TEST(Robustness, OnnxParameterShapesMustMatchTheOperator) {
  {  // was .dims.at(0) out_of_range
    Model m({1, 3, 8, 8});
    m.weight("s", {});
    for (const char* p : {"b", "mean", "var"}) m.weight(p, {3});
    m.node("BatchNormalization", {"x", "s", "b", "mean", "var"}, "y", "bn");
    EXPECT_HAS(m.import("bn_scalar.onnx"),
               "robustness_bn_scalar.onnx: node 'bn' (BatchNormalization): scale must be 1-D");
  }
  {  // MACs were counted for 5x5 while the weight is 3x3
    Model m = conv_model();
    Model::ints(m.node("Conv", {"x", "w"}, "y", "conv"), "kernel_shape", {5, 5});
    EXPECT_HAS(m.import("ks_mismatch.onnx"),
               "node 'conv' (Conv): kernel_shape [5,5] contradicts the weight [4,3,3,3]");
  }
  {
    Model m = conv_model();
    m.weight("b", {99});
    m.node("Conv", {"x", "w", "b"}, "y", "conv");
    EXPECT_HAS(m.import("bias99.onnx"),
               "node 'conv' (Conv): bias [99] does not match the weight's 4 output channels");
  }
  {  // a bias computed at run time was dropped, with the layers that compute it
    Model m = conv_model();
    m.node("ReduceMean", {"x"}, "s", "side");  // any computed tensor
    m.node("Conv", {"x", "w", "s"}, "y", "conv");
    EXPECT_HAS(m.import("conv_bias_computed.onnx"),
               "node 'conv' (Conv): bias (input 2) must be an initializer or constant");
  }
  // Gemm's C: a constant bias of one value per output column, or refused (it was taken as one
  // whatever its shape, and dropped when computed).
  auto gemm = [](const Shape& c, bool computed = false) {
    Model m({2, 16});
    m.weight("w", {16, 8});
    std::string c_name = "c";
    if (computed) {
      m.node("Sigmoid", {"x"}, "s", "side");
      m.weight("w2", {16, 8});
      m.node("Gemm", {"s", "w2"}, "z", "side_gemm");
      c_name = "z";
    } else {
      m.weight("c", c);
    }
    m.node("Gemm", {"x", "w", c_name}, "y", "fc");
    return m;
  };
  EXPECT_HAS(gemm({}, true).import("gemm_c_computed.onnx"),
             "node 'fc' (Gemm): C (input 2) must be an initializer or constant");
  int file = 0;
  for (const Shape& c : {Shape{2, 8}, Shape{1}, Shape{2, 1}, Shape{3, 8}})
    EXPECT_HAS(gemm(c).import("gemm_c" + std::to_string(++file) + ".onnx"),
               "node 'fc' (Gemm): C " + shape_str(c) +
                   " is not supported: only a bias of one value per output column, [8] or [1,8]");
  for (const Shape& c : {Shape{8}, Shape{1, 8}}) {
    Model m = gemm(c);
    const Graph g = m.load("gemm_bias_" + std::to_string(c.size()) + ".onnx");
    bool bias = false;
    for (NodeId id : g.node_ids())
      if (g.node(id).kind == OpKind::Gemm) bias = g.node(id).attrs.bias;
    EXPECT_TRUE(bias) << shape_str(c);
  }
  for (const bool shift : {false, true}) {  // LayerNormalization's B is optional: 4 or 8 params
    Model m({2, 3, 4});
    m.m.mutable_opset_import(0)->set_version(17);  // LayerNormalization's first
    m.weight("scale", {4});
    std::vector<std::string> ins{"x", "scale"};
    if (shift) {
      m.weight("b", {4});
      ins.push_back("b");
    }
    m.node("LayerNormalization", ins, "y", "ln");
    const Graph g = m.load(shift ? "ln_shift.onnx" : "ln_no_shift.onnx");
    EXPECT_EQ(graph_totals(g).params, shift ? 8 : 4);
  }
  {  // ONNX's Gemm multiplies matrices: a batched A, which onnxruntime refuses, is a MatMul's
    Model m({2, 3, 16});
    m.weight("w", {16, 8});
    m.node("Gemm", {"x", "w"}, "y", "fc");
    EXPECT_HAS(m.import("gemm_rank3.onnx"),
               "node 'fc' (Gemm): A must be 2-D (ONNX's Gemm), got [2,3,16]: export the product "
               "as a MatMul");
  }
  {  // beta = 0: C is ignored, whatever its shape
    Model m = gemm({2, 8});
    auto* beta = m.g->mutable_node(m.g->node_size() - 1)->add_attribute();
    beta->set_name("beta");
    beta->set_type(onnx::AttributeProto::FLOAT);
    beta->set_f(0.0F);
    EXPECT_EQ(m.import("gemm_beta0.onnx"), "(no InputError)");
  }
  {  // a matching kernel_shape and bias are fine
    Model m = conv_model();
    m.weight("b", {4});
    Model::ints(m.node("Conv", {"x", "w", "b"}, "y", "conv"), "kernel_shape", {3, 3});
    EXPECT_EQ(m.import("conv_ok.onnx"), "(no InputError)");
  }
}

TEST(Robustness, OnnxMessagesNameWhatIsWrong) {
  for (const std::int64_t d : {0, -3}) {  // said "has a dynamic dimension ''"
    Model m({1, d, 8, 8});
    m.node("Relu", {"x"}, "y");
    const std::string msg = m.import("dim" + std::to_string(d) + ".onnx");
    EXPECT_HAS(msg, "input 'x' dimension 1 is " + std::to_string(d) + ", not positive");
  }
  {  // unnamed nodes on a cycle are named by their output tensor, not ''
    Model m({1, 4});
    m.node("Add", {"x", "z"}, "y");
    m.node("Relu", {"y"}, "z");
    const std::string msg = m.import("cycle.onnx", "z");
    EXPECT_HAS(msg, "tensor 'z' used by node 'y' is produced only later, by node 'z'");
  }
  {  // nocflow's own shape-inference errors carry the file
    Model m({1, 3, 8, 8});
    m.weight("p", {5});
    m.node("Add", {"x", "p"}, "y", "sum");
    const std::string msg = m.import("bcast.onnx");
    EXPECT_EQ(msg.rfind(nocflow::testing::scratch_path("robustness_bcast.onnx").string() +
                            ": node 'sum' (Add): input shapes [1,3,8,8] and [5] do not broadcast",
                        0),
              0u)
        << msg;
  }
  {  // a missing operand was a protobuf CHECK failure
    Model m({1, 4});
    m.node("Add", {"x"}, "y", "sum");
    EXPECT_HAS(m.import("add1.onnx"), "node 'sum' (Add): input 1 is missing");
  }
  // These read input 0 before it was checked: a protobuf CHECK failure (found by fuzzing).
  for (const char* op : {"MaxPool", "Gemm", "Pad"}) {
    Model m({1, 4});
    onnx::NodeProto* n = m.node(op, {}, "y", "n");
    if (op == std::string("MaxPool")) Model::ints(n, "kernel_shape", {2, 2});
    EXPECT_HAS(m.import(std::string("none_") + op + ".onnx"),
               "node 'n' (" + std::string(op) + "): input 0 is missing");
  }
  {  // data types without a fixed size, and a graph without outputs, used to import
    Model m({1, 4});
    auto* cast = m.node("Cast", {"x"}, "y", "c");
    auto* to = cast->add_attribute();
    to->set_name("to");
    to->set_type(onnx::AttributeProto::INT);
    to->set_i(999);
    EXPECT_HAS(m.import("cast.onnx"), "node 'c' (Cast): to=999 is not a data type of fixed size");
    Model u({1, 4});
    u.g->mutable_input(0)->mutable_type()->mutable_tensor_type()->set_elem_type(
        onnx::TensorProto::UNDEFINED);
    u.node("Relu", {"x"}, "y");
    EXPECT_HAS(u.import("undefined.onnx"), "input 'x' has data type 0, which has no fixed");
    Model none({1, 4});
    none.node("Relu", {"x"}, "y");
    EXPECT_HAS(none.import("nooutputs.onnx", ""), "the graph has no outputs");
    // An initializer listed as an output is computed by no node: it was
    // counted as the network's parameter, and --train took its loss in place of y's.
    Model constant({2, 3});
    constant.weight("w", {3, 3});
    constant.node("Relu", {"x"}, "y");
    constant.g->add_output()->set_name("w");
    const Graph g = constant.load("constant_output.onnx");
    ASSERT_EQ(g.outputs().size(), 1u);
    EXPECT_EQ(g.node(g.outputs()[0]).name, "y");
    EXPECT_EQ(graph_totals(g).params, 0);
    ASSERT_EQ(g.notes().size(), 1u);
    EXPECT_NE(g.notes()[0].find("graph output w left out: an initializer, which no node computes"),
              std::string::npos)
        << g.notes()[0];
    Model only({2, 3});
    only.weight("w", {3, 3});
    only.node("Relu", {"x"}, "y");
    EXPECT_HAS(only.import("constant_output_only.onnx", "w"),
               "the graph has no outputs but initializers (w), which no node computes");
  }
  {  // two producers of one tensor: the second silently won
    Model m({1, 4});
    m.node("Relu", {"x"}, "y", "a");
    m.node("Sigmoid", {"x"}, "y", "b");
    EXPECT_HAS(m.import("dupout.onnx"),
               "node 'b' (Sigmoid): output tensor 'y' is already produced");
  }
}

// From opset 18 ReduceMean takes its axes as an input (current PyTorch exports): reading only
// the attribute reduced every axis, and ONNX's own shape inference then disagreed (exit 1).
TEST(Robustness, OnnxReduceMeanOfOpset18TakesItsAxesFromItsSecondInput) {
  for (const int keepdims : {1, 0}) {
    Model m({2, 16, 32});
    m.m.mutable_opset_import(0)->set_version(18);
    m.int64s("axes", {-1});
    auto* keep = m.node("ReduceMean", {"x", "axes"}, "y", "mean")->add_attribute();
    keep->set_name("keepdims");
    keep->set_type(onnx::AttributeProto::INT);
    keep->set_i(keepdims);
    const std::string file = "reducemean18_" + std::to_string(keepdims) + ".onnx";
    ASSERT_EQ(m.import(file), "(no InputError)");  // error_of's answer when it loads
    const Graph g = load_network(nocflow::testing::scratch_path("robustness_" + file).string());
    EXPECT_EQ(g.node(*g.find("mean")).output.shape, keepdims ? Shape({2, 16, 1}) : Shape({2, 16}));
  }
}

// --- sizes that do not fit ---------------------------------------------------------------

TEST(Robustness, TensorsAndLayersPastTwoToThe53AreRefusedNotWrapped) {
  auto load = [](const std::string& text) {
    return error_of([&] { parse_network_yaml(text, "net.yaml"); });
  };
  // Was exit 0 with negative MACs, bytes and cycles.
  EXPECT_HAS(
      load("input: [100000, 100000, 100000, 100000]\nlayers:\n  - {op: conv, out: 8, kernel: 3}\n"),
      "net.yaml:1:8: node 'input' (Input): output [100000,100000,100000,100000] has 1e+20 "
      "elements, more than 2^53");
  EXPECT_HAS(load("input: [1, 3, 4000000000, 4000000000]\nlayers:\n  - relu\n"), "more than 2^53");
  // 2^52 elements fit, their 2^54 bytes do not.
  EXPECT_HAS(load("input: [8192, 8192, 8192, 8192]\nlayers:\n  - relu\n"),
             "node 'input' (Input): output [8192,8192,8192,8192] is 1.8e+16 bytes, more than 2^53");
  // Tensors that fit, a layer whose MACs do not: 2^36 outputs x 2^16 channels x 9.
  EXPECT_HAS(load("input: [1, 65536, 1024, 1024]\nlayers:\n  - {op: conv, out: 65536, kernel: 3, "
                  "pad: 1}\n"),
             "net.yaml:3:5: node 'conv1' (Conv): needs 4.05e+16 operations");
  EXPECT_HAS(load("input: [1048576, 1048576]\nlayers:\n  - {op: fc, out: 1048576}\n"),
             "node 'gemm1' (Gemm): needs 1.15e+18 operations");
  // 1.6e+20 MACs pass int64, where the count stops: it is not 9.22e+18 (as it printed).
  EXPECT_HAS(load("input: [1, 65536, 65536, 65536]\nlayers:\n  - {op: conv, out: 65536, kernel: 3, "
                  "pad: 1}\n"),
             "node 'conv1' (Conv): needs more than 2^63 operations (multiply-accumulates or "
             "element-wise)");
  // Pads that would wrap the window arithmetic.
  EXPECT_HAS(load("input: [1, 3, 8, 8]\nlayers:\n  - {op: conv, out: 4, kernel: 3, pad: "
                  "4611686018427387904}\n"),
             "node 'conv1' (Conv): padded input size 9.22e+18 is more than 2^53");
  // Just below the bound still loads.
  EXPECT_EQ(
      load("input: [1, 65536, 1024, 1024]\nlayers:\n  - {op: conv, out: 8, kernel: 3, pad: 1}\n"),
      "(no InputError)");
}

TEST(Robustness, OnnxInputPastTwoToThe53IsRefused) {
  Model m({std::int64_t{1} << 40, std::int64_t{1} << 40});  // gave 0 activation bytes
  m.node("Relu", {"x"}, "y");
  EXPECT_HAS(m.import("hugedim.onnx"),
             "robustness_hugedim.onnx: node 'x' (Input): output [1099511627776,1099511627776] has "
             "1.21e+24 elements, more than 2^53");
}

TEST(Robustness, NamesThatAreNotUtf8AreRefusedWhereTheyAreRead) {
  // JSON outputs (summary.json, trace.json) need UTF-8: such a name failed there, late in the
  // run, as an internal error (exit 1).
  EXPECT_EQ(error_of([] {
              parse_network_yaml("input: [1, 3, 8, 8]\nlayers:\n  - {op: relu, name: r\xe9}\n",
                                 "net.yaml");
            }),
            "net.yaml:3: column 23: byte 0xe9 is not UTF-8");
  Graph g;  // ONNX names and edited graph files come in through add_node and set_name
  EXPECT_HAS(error_of([&] {
               g.add_node(Node{"x\xff", OpKind::Input, {}, {}});
             }),
             "node name 'x\xff': column 2: byte 0xff is not UTF-8");
  EXPECT_HAS(error_of([&] { g.set_name("net\xc0\xaf"); }), "network name");
  EXPECT_EQ(error_of([&] {
              g.add_node(Node{"r\xc3\xa9lu", OpKind::Input, {}, {}});
            }),
            "(no InputError)");
  // A file name need not be UTF-8: a network named after it has the bad bytes replaced.
  const std::string text = "input: [1, 3, 8, 8]\nlayers:\n  - relu\n";
  EXPECT_EQ(parse_network_yaml(text, "/tmp/n\xe9t.yaml").name(), "n\xef\xbf\xbdt");
  EXPECT_EQ(parse_network_yaml("name: net\n" + text, "/tmp/n\xe9t.yaml").name(), "net");
}

TEST(Robustness, GraphFileNodesOfTheWrongKindOrCountAreRefusedAtTheirPlace) {
  const std::string head =
      "format: nocflow-graph-1\nname: g\noutputs: [u]\nnodes:\n"
      "  - {name: x, op: Input, attrs: {shape: [1, 4, 8, 8]}}\n";
  auto load = [&](const std::string& last) {
    return error_of([&] { parse_network_yaml(head + last, "g.yaml"); });
  };
  // Both were exit 1 (found by fuzzing); negative params ran, to negative cycles and energy.
  EXPECT_EQ(load("  - {name: u, op: Relu, inputs: [x], output: 5}\n"),
            "g.yaml:6:46: nodes[1].output: expected a map: {shape: [...], elem_bytes: N}");
  EXPECT_HAS(load("  - {name: u, op: WeightUpdate, inputs: [x], attrs: {params: -1000000, "
                  "optimizer: adam}}\n"),
             "g.yaml:6:5: node 'u' (WeightUpdate): params -1000000: an update updates at least 1");
  EXPECT_HAS(
      load("  - {name: u, op: WeightUpdate, inputs: [x], attrs: {params: 0, optimizer: sgd}}\n"),
      "params 0: an update updates at least 1");
  EXPECT_EQ(
      load("  - {name: u, op: WeightUpdate, inputs: [x], attrs: {params: 10, optimizer: sgd}}\n"),
      "(no InputError)");
}

TEST(Robustness, NestedAliasesAreWalkedOnce) {
  // Twelve levels of nine aliases each: 9^12 lists, were the duplicate-key check to follow
  // every alias (nine levels took 20 s). The reader refuses the unknown key at once.
  std::string text = "a: &a [x, x, x, x, x, x, x, x, x]\n";
  for (char c = 'b'; c < 'a' + 12; ++c) {
    const std::string prev(1, static_cast<char>(c - 1));
    text += std::string(1, c) + ": &" + std::string(1, c) + " [";
    for (int i = 0; i < 9; ++i) text += (i ? ", *" : "*") + prev;
    text += "]\n";
  }
  EXPECT_HAS(error_of([&] { parse_network_yaml(text, "bomb.yaml"); }),
             "bomb.yaml:1:1: a: unknown key");
  // Walked once by position: a map on the line of its list is still checked.
  EXPECT_HAS(error_of([&] {
               parse_network_yaml("input: [1, 3, 8, 8]\nlayers: [{op: relu, name: a, name: b}]\n",
                                  "dup.yaml");
             }),
             "dup.yaml:2:30: key 'name' given twice");
}

TEST(Robustness, ZooBatchIsBounded) {
  EXPECT_HAS(error_of([] {
               load_network("zoo:gpt2_block", {2147483647, 4});
             }),
             "zoo: batch 2147483647 is outside 1 .. 4096");
  EXPECT_EQ(load_network("zoo:vgg5", {4096, 4}).node(0).output.shape[0], 4096);
}

}  // namespace
}  // namespace nocflow::optimizer
