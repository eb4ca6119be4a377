// SPDX-License-Identifier: MIT
// `nocflow inspect` end to end: JSON contents, pass stats, and exit code 2 with one clear message
// for each kind of bad network input.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/cli_runner.h"

namespace {

namespace fs = std::filesystem;

using nocflow::testing::CliRun;
using nocflow::testing::run_nocflow;

fs::path temp_file(const std::string& name, const std::string& content) {
  const fs::path dir = nocflow::testing::scratch_path("inspect");
  fs::create_directories(dir);
  std::ofstream(dir / name, std::ios::binary) << content;
  return dir / name;
}

TEST(Inspect, JsonHasTotalsAndLayers) {
  const auto json_path = temp_file("resnet50.json", "");
  const CliRun r = run_nocflow("inspect --network zoo:resnet50 --passes none --json " + json_path.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::ifstream in(json_path);
  const auto j = nlohmann::json::parse(in);
  EXPECT_NEAR(j["total_macs"].get<double>(), 4.09e9, 0.02 * 4.09e9);
  EXPECT_NEAR(j["total_params"].get<double>(), 25.6e6, 0.02 * 25.6e6);
  EXPECT_EQ(j["num_layers"].get<std::size_t>(), j["layers"].size());
  const auto& first = j["layers"][0];
  EXPECT_EQ(first["name"], "conv1");
  EXPECT_EQ(first["op"], "Conv");
  EXPECT_EQ(first["output_shape"], nlohmann::json({1, 64, 112, 112}));
  // 7x7 conv, 3 -> 64 channels, 112x112 outputs: 64 x 112 x 112 x 3 x 7 x 7.
  EXPECT_EQ(first["macs"].get<std::int64_t>(), 64 * 112 * 112 * 3 * 7 * 7);
  EXPECT_NE(r.output.find("total:"), std::string::npos);
  // The element size the byte figures follow from: inspect's default, 4 bytes, and 2 asked for.
  EXPECT_EQ(j["elem_bytes"], 4);
  EXPECT_EQ(first["output_bytes"].get<std::int64_t>(), 64 * 112 * 112 * 4);
  const auto half_path = temp_file("resnet50_2.json", "");
  ASSERT_EQ(run_nocflow("inspect --network zoo:resnet50 --passes none --elem-bytes 2 --json " +
                        half_path.string())
                .exit_code,
            0);
  std::ifstream half_in(half_path);
  const auto half = nlohmann::json::parse(half_in);
  EXPECT_EQ(half["elem_bytes"], 2);
  EXPECT_EQ(half["total_activation_bytes"].get<double>(),
            j["total_activation_bytes"].get<double>() / 2);
}

TEST(Inspect, PassStatsAndDotFromOnnx) {
  const auto dot = temp_file("encoder.dot", "");
  const CliRun r = run_nocflow("inspect --network " + std::string(NOCFLOW_SOURCE_DIR) +
                               "/tests/optimizer/data/encoder.onnx --print-pass-stats --dot " + dot.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // The pass table: each pass starts from the nodes the one before left, "nodes" is the
  // signed change, DCE sweeps what constant folding and CSE left dead, and the last round
  // changes nothing (the fixpoint).
  struct Row {
    int round;
    std::string pass;
    long before, after, delta;
    std::string changed;
  };
  std::vector<Row> rows;
  std::istringstream table(r.output.substr(r.output.find("round  pass")));
  std::string line;
  std::getline(table, line);
  for (Row row;
       table >> row.round >> row.pass >> row.before >> row.after >> row.delta >> row.changed;
       std::getline(table, line))
    rows.push_back(row);
  ASSERT_EQ(rows.size(), 14u) << r.output;  // 7 passes, 2 rounds
  for (std::size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i].delta, rows[i].after - rows[i].before) << rows[i].pass;
    if (i > 0) {
      EXPECT_EQ(rows[i].before, rows[i - 1].after) << rows[i].pass;
    }
    if (rows[i].round == 2) {
      EXPECT_EQ(rows[i].changed, "no") << rows[i].pass;
    }
  }
  EXPECT_EQ(rows[4].pass, "dce");
  EXPECT_LT(rows[4].delta, 0);
  std::ifstream in(dot);
  std::string text((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ(text.rfind("digraph", 0), 0u);
}

/// A model with one 1x4 float input "x" and no nodes yet.
onnx::ModelProto onnx_with_input(const std::string& name) {
  onnx::ModelProto m;
  m.set_ir_version(7);
  m.add_opset_import()->set_version(13);
  auto* g = m.mutable_graph();
  g->set_name(name);
  auto* in = g->add_input();
  in->set_name("x");
  in->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  for (int d : {1, 4}) in->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(d);
  return m;
}

std::string onnx_with_unsupported_op() {
  onnx::ModelProto m = onnx_with_input("bad");
  auto* g = m.mutable_graph();
  auto* n = g->add_node();
  n->set_op_type("Hardmax");
  n->set_name("mystery");
  n->add_input("x");
  n->add_output("y");
  g->add_output()->set_name("y");
  return m.SerializeAsString();
}

/// x -> add(x, r) -> relu -> r: the relu feeds the add that feeds it.
std::string onnx_with_cycle() {
  onnx::ModelProto m = onnx_with_input("loop");
  auto* g = m.mutable_graph();
  auto* add = g->add_node();
  add->set_op_type("Add");
  add->set_name("sum");
  add->add_input("x");
  add->add_input("r");
  add->add_output("s");
  auto* relu = g->add_node();
  relu->set_op_type("Relu");
  relu->set_name("act");
  relu->add_input("s");
  relu->add_output("r");
  g->add_output()->set_name("r");
  return m.SerializeAsString();
}

struct BadNetwork {
  std::string name;
  std::string file;     // file name, with content below
  std::string content;
  std::string expect;   // substring of the message
};

void PrintTo(const BadNetwork& b, std::ostream* os) { *os << b.name; }

class InspectBadInput : public ::testing::TestWithParam<BadNetwork> {};

TEST_P(InspectBadInput, ExitsTwoWithAClearMessage) {
  const BadNetwork& b = GetParam();
  const auto path = temp_file(b.file, b.content);
  const CliRun r = run_nocflow("inspect --network " + path.string());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find(b.expect), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("internal error"), std::string::npos) << r.output;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, InspectBadInput,
    ::testing::Values(
        BadNetwork{"forward_reference", "forward.yaml",
                   "input: [1, 4]\nlayers:\n  - {name: a, op: add, inputs: [input, b]}\n"
                   "  - {name: b, op: relu, inputs: [a]}\n",
                   "'b' is layers[1], not defined yet"},
        BadNetwork{"shape_mismatch", "mismatch.yaml",
                   "inputs: {a: [1, 8], b: [1, 9]}\nlayers:\n  - {name: s, op: add, inputs: [a, b]}\n",
                   "mismatch.yaml:3:"},
        BadNetwork{"unknown_input", "unknown_input.yaml",
                   "input: [1, 4]\nlayers:\n  - {op: relu, inputs: [imput]}\n",
                   "did you mean 'input'"},
        BadNetwork{"unknown_operator", "unknown_op.yaml",
                   "input: [1, 4]\nlayers:\n  - {op: lstm}\n", "unknown operator 'lstm'"},
        BadNetwork{"wrong_attribute_type", "wrong_type.yaml",
                   "input: [1, 3, 8, 8]\nlayers:\n  - {op: conv, out: 8, kernel: 3, bias: maybe}\n",
                   "wrong_type.yaml:3:"},
        BadNetwork{"unsupported_onnx_operator", "unsupported.onnx", onnx_with_unsupported_op(),
                   "node 'mystery' (Hardmax): unsupported ONNX operator 'Hardmax'"},
        BadNetwork{"unreadable_onnx", "garbage.onnx", "not a protobuf at all",
                   "not a readable ONNX model"},
        BadNetwork{"cycle_in_graph", "loop.onnx", onnx_with_cycle(),
                   "tensor 'r' used by node 'sum' is produced only later, by node 'act': the graph has a cycle"}),
    [](const auto& info) { return info.param.name; });

TEST(Inspect, UnknownZooNameAndPass) {
  EXPECT_EQ(run_nocflow("inspect --network zoo:resnet").exit_code, 2);
  const CliRun r = run_nocflow("inspect --network zoo:vgg5 --passes fuze");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("--passes: unknown pass 'fuze'; did you mean 'fuse'"), std::string::npos)
      << r.output;
  // autodiff, which --print-pass-stats lists, is --train's.
  const CliRun autodiff = run_nocflow("inspect --network zoo:vgg5 --passes autodiff");
  EXPECT_EQ(autodiff.exit_code, 2);
  EXPECT_NE(autodiff.output.find("unknown pass 'autodiff' (known: "), std::string::npos)
      << autodiff.output;
  EXPECT_NE(autodiff.output.find("; autodiff runs with --train OPTIMIZER"), std::string::npos)
      << autodiff.output;
  // none and default mean the whole list: in a list they were "unknown passes".
  const CliRun mixed = run_nocflow("inspect --network zoo:vgg5 --passes none,fuse");
  EXPECT_EQ(mixed.exit_code, 2);
  EXPECT_NE(mixed.output.find("--passes: 'none' stands alone: give default, none or a list"),
            std::string::npos)
      << mixed.output;
}

// Output files: a name --network would not read back is refused, and a file that cannot be
// written fails the run before the layer table prints (it used to follow the whole table).
TEST(Inspect, OutputFilesAreCheckedBeforeTheTable) {
  const CliRun onnx = run_nocflow("inspect --network zoo:vgg5 --save " + temp_file("x.onnx", "").string());
  EXPECT_EQ(onnx.exit_code, 2) << onnx.output;
  EXPECT_NE(onnx.output.find("--save: writes a graph file, which --network reads back by its name: give FILE.yaml"),
            std::string::npos)
      << onnx.output;
  const CliRun dot = run_nocflow("inspect --network zoo:vgg5 --dot /nonexistent-nocflow/a.dot");
  EXPECT_EQ(dot.exit_code, 2) << dot.output;
  EXPECT_EQ(dot.output, "nocflow: error: /nonexistent-nocflow/a.dot: cannot write: No such file or directory\n");
  const std::filesystem::path saved = temp_file("saved.yaml", "");
  const CliRun ok = run_nocflow("inspect --network zoo:vgg5 --save " + saved.string());
  EXPECT_EQ(ok.exit_code, 0) << ok.output;
  EXPECT_NE(ok.output.find("nocflow: wrote " + saved.string() + "\n"), std::string::npos) << ok.output;
  EXPECT_EQ(run_nocflow("inspect --network " + saved.string()).exit_code, 0);
  // Two outputs into one file, spelt apart.
  const fs::path both = temp_file("both.txt", "");
  const CliRun twice = run_nocflow("inspect --network zoo:vgg5 --json " + both.string() +
                                   " --dot " + (both.parent_path() / "." / "both.txt").string());
  EXPECT_EQ(twice.exit_code, 2) << twice.output;
  EXPECT_NE(twice.output.find("--json: writes " + both.string()), std::string::npos) << twice.output;
  EXPECT_NE(twice.output.find("as --dot does: give each its own file"), std::string::npos)
      << twice.output;
  // An output onto the network it reads replaced the user's network with a graph or JSON file.
  const std::string network = nocflow::testing::read_file(saved);
  for (const char* option : {"--save", "--json", "--dot"}) {
    const CliRun onto = run_nocflow("inspect --network " + saved.string() + " " + option + " " +
                                    (saved.parent_path() / "." / "saved.yaml").string());
    EXPECT_EQ(onto.exit_code, 2) << option << ": " << onto.output;
    EXPECT_NE(onto.output.find(std::string(option) + ": writes "), std::string::npos)
        << onto.output;
    EXPECT_NE(onto.output.find("the network --network reads, which it would overwrite"),
              std::string::npos)
        << onto.output;
    EXPECT_EQ(nocflow::testing::read_file(saved), network) << option;
  }
}

// A network file fixes its batch and element size: --batch may repeat its own batch, anything
// else (1 included, which is the zoo networks' default) and any --elem-bytes are refused.
TEST(Inspect, ANetworkFileTakesOnlyItsOwnBatchAndNoOtherElementSize) {
  const auto file = temp_file("batch2.yaml", "input: [2, 4]\nlayers:\n  - {op: relu}\n");
  const std::string inspect = "inspect --network " + file.string();
  EXPECT_EQ(run_nocflow(inspect).exit_code, 0);
  EXPECT_EQ(run_nocflow(inspect + " --batch 2").exit_code, 0);
  for (const char* other : {" --batch 1", " --batch 3"}) {
    const CliRun r = run_nocflow(inspect + other);
    EXPECT_EQ(r.exit_code, 2) << other;
    EXPECT_NE(r.output.find("input 'input' has shape [2,4]; only zoo networks take a batch size"),
              std::string::npos)
        << r.output;
  }
  const CliRun r = run_nocflow(inspect + " --elem-bytes 2");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("--elem-bytes: only zoo networks (and an ONNX model's floats) take an "
                          "element size"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(run_nocflow("inspect --network zoo:vgg5 --batch 3 --elem-bytes 2").exit_code, 0);
}

// --elem-bytes equal to a YAML network's own elem_bytes changes nothing and is taken (written
// or the default 4); another is refused, naming the file's.
TEST(Inspect, ANetworkFileTakesItsOwnElementSizeRepeated) {
  const auto four =
      temp_file("elem4.yaml", "elem_bytes: 4\ninput: [1, 8]\nlayers:\n  - {op: relu}\n");
  const auto two =
      temp_file("elem2.yaml", "elem_bytes: 2\ninput: [1, 8]\nlayers:\n  - {op: relu}\n");
  const CliRun same = run_nocflow("inspect --network " + four.string() + " --elem-bytes 4");
  ASSERT_EQ(same.exit_code, 0) << same.output;
  EXPECT_EQ(run_nocflow("inspect --network " + four.string()).output, same.output);
  const auto json = temp_file("elem4.json", "");
  ASSERT_EQ(
      run_nocflow("inspect --network " + four.string() + " --elem-bytes 4 --json " + json.string())
          .exit_code,
      0);
  EXPECT_EQ(nlohmann::json::parse(nocflow::testing::read_file(json))["total_activation_bytes"],
            32);  // 8 elements of 4 bytes
  EXPECT_EQ(run_nocflow("inspect --network " + two.string() + " --elem-bytes 2").exit_code, 0);
  const CliRun other = run_nocflow("inspect --network " + two.string() + " --elem-bytes 4");
  EXPECT_EQ(other.exit_code, 2) << other.output;
  EXPECT_NE(other.output.find("--elem-bytes: only zoo networks (and an ONNX model's floats) take "
                              "an element size; " +
                              two.string() +
                              " has its own (a YAML network's elem_bytes: 2), which --elem-bytes "
                              "may only repeat"),
            std::string::npos)
      << other.output;
}

// An ONNX model of an opset nocflow does not know is read as one of the newest it knows, and
// inspect says so; a known opset gets no note.
TEST(Inspect, AnOnnxOpsetNewerThanNocflowKnowsGetsANote) {
  for (const int opset : {21, 99}) {
    onnx::ModelProto m = onnx_with_input("future");
    m.mutable_opset_import(0)->set_version(opset);
    auto* relu = m.mutable_graph()->add_node();
    relu->set_op_type("Relu");
    relu->add_input("x");
    relu->add_output("y");
    m.mutable_graph()->add_output()->set_name("y");
    const auto file = temp_file("opset" + std::to_string(opset) + ".onnx", m.SerializeAsString());
    const CliRun r = run_nocflow("inspect --network " + file.string());
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const std::string note = "note: " + file.string() + " imports opset 99 of the default ONNX " +
                             "domain, newer than nocflow knows: its operators are read with the " +
                             "semantics of opset 21\n";
    EXPECT_EQ(r.output.find(note) != std::string::npos, opset == 99) << r.output;
    EXPECT_EQ(r.output.find("note:") != std::string::npos, opset == 99) << r.output;
  }
}

// A plan of a model exported with a dynamic batch replays at the plan's batch when --batch is
// not given (it was refused: "dimension 0 is dynamic ... give the batch"), with a note. (Here
// beside inspect's tests, which write ONNX models with the protobuf API.)
TEST(Inspect, APlanOfADynamicBatchModelReplaysAtItsBatch) {
  onnx::ModelProto m = onnx_with_input("dyn");
  auto* dims =
      m.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape();
  dims->mutable_dim(0)->set_dim_param("B");
  auto* relu = m.mutable_graph()->add_node();
  relu->set_op_type("Relu");
  relu->set_name("act");
  relu->add_input("x");
  relu->add_output("y");
  m.mutable_graph()->add_output()->set_name("y");
  const auto model = temp_file("dyn_batch.onnx", m.SerializeAsString());
  const std::string hw = " --hw " + std::string(NOCFLOW_SOURCE_DIR) +
                         "/configs/hw/mesh4x4.yaml --set topology.rows=1 --set topology.cols=2 ";
  const fs::path out = nocflow::testing::scratch_path("inspect") / "dyn_batch_plan";
  for (const char* run : {"", "_sim", "_plain"}) fs::remove_all(out.string() + run);
  const CliRun solved = run_nocflow("optimize" + hw + "--network " + model.string() +
                                    " --batch 2 --quiet --out " + out.string());
  ASSERT_EQ(solved.exit_code, 0) << solved.output;
  const std::string replay = "simulate" + hw + "--network " + model.string() + " --plan " +
                             (out / "plan.yaml").string() + " --quiet --out ";
  const CliRun r = run_nocflow(replay + (out.string() + "_sim"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("(1 layer, batch 2,"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("note: " + model.string() +
                          " leaves its batch open: it runs at the "
                          "plan's, 2 (--batch N for another)"),
            std::string::npos)
      << r.output;
  // Without a plan the batch is still asked for.
  const CliRun plain = run_nocflow("simulate" + hw + "--network " + model.string() +
                                   " --quiet --out " + out.string() + "_plain");
  EXPECT_EQ(plain.exit_code, 2) << plain.output;
  EXPECT_NE(plain.output.find("dimension 0 is dynamic ('B')"), std::string::npos) << plain.output;
}

// An ONNX model's floats take --elem-bytes, as data.onnx_floats: width makes them take the
// hardware's: an fp32 export inspected as fp16 holds half the weight bytes.
TEST(Inspect, AnOnnxModelsFloatsTakeTheElementSizeGiven) {
  const std::string inspect = "inspect --network " + std::string(NOCFLOW_SOURCE_DIR) +
                              "/tests/optimizer/data/tiny_unet.onnx --json ";
  const auto as_file = temp_file("tiny_unet_file.json", "");
  const auto half = temp_file("tiny_unet_half.json", "");
  const CliRun r = run_nocflow(inspect + as_file.string());
  const CliRun h = run_nocflow(inspect + half.string() + " --elem-bytes 2");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ASSERT_EQ(h.exit_code, 0) << h.output;
  const auto a = nlohmann::json::parse(nocflow::testing::read_file(as_file));
  const auto b = nlohmann::json::parse(nocflow::testing::read_file(half));
  EXPECT_GT(a["total_weight_bytes"].get<std::int64_t>(), 0);
  EXPECT_EQ(2 * b["total_weight_bytes"].get<std::int64_t>(),
            a["total_weight_bytes"].get<std::int64_t>());
  EXPECT_EQ(b["total_macs"], a["total_macs"]);
}

}  // namespace
