// SPDX-License-Identifier: MIT
// What `nocflow simulate` says about its inputs and leaves in its output folder: the batch and
// element size a plan was priced for, plans and queues that cannot work (exit 2), and one run's
// files per folder.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "tests/cli_runner.h"
#include "tests/sim/small_runs.h"

namespace nocflow::testing {
namespace {

namespace fs = std::filesystem;

// A run into a folder an earlier run wrote leaves one run's files: traces not asked for go.
TEST(SimulateCli, ARunIntoAnEarlierRunsFolderLeavesNoFileItDidNotWrite) {
  const fs::path out = fresh_dir("simulate_stale") / "out";
  const std::string run =
      "simulate " + kHw2x2 + " --network " + kTwoConv + " --quiet --out " + out.string();
  ASSERT_EQ(run_nocflow(run + " --trace perfetto --vcd").exit_code, 0);
  ASSERT_TRUE(fs::exists(out / "trace.json") && fs::exists(out / "trace.vcd"));
  ASSERT_EQ(run_nocflow(run + " --vcd").exit_code, 0);
  EXPECT_FALSE(fs::exists(out / "trace.json"));
  EXPECT_TRUE(fs::exists(out / "trace.vcd"));
  ASSERT_EQ(run_nocflow(run).exit_code, 0);
  EXPECT_FALSE(fs::exists(out / "trace.vcd"));
  EXPECT_TRUE(fs::exists(out / "summary.json"));
  // Programs replayed into a plan run's folder: its plan files go. Replayed into their own
  // folder (dumped there with the plan, as README's workflow does): the plan that made them stays,
  // the rest of that run goes.
  const fs::path own = out.parent_path() / "own";
  ASSERT_EQ(run_nocflow("simulate " + kHw2x2 + " --network " + kTwoConv +
                        " --quiet --trace perfetto --dump-programs " + own.string() + " --out " +
                        own.string())
                .exit_code,
            0);
  const std::string programs =
      "simulate " + kHw2x2 + " --quiet --programs " + own.string() + " --out ";
  ASSERT_EQ(run_nocflow(programs + out.string()).exit_code, 0);
  for (const char* gone : {"plan.yaml", "plan.dot", "memory.csv"})
    EXPECT_FALSE(fs::exists(out / gone)) << gone;
  ASSERT_EQ(run_nocflow(programs + own.string()).exit_code, 0);
  for (const char* kept : {"plan.yaml", "plan.dot"}) EXPECT_TRUE(fs::exists(own / kept)) << kept;
  // The plan run's other files go (a replay of programs has no memory plan, and asked for no
  // trace).
  for (const char* gone : {"memory.csv", "trace.json"}) EXPECT_FALSE(fs::exists(own / gone)) << gone;
}

// A plan records the batch of the network it was priced for, a file's own as well as a zoo
// network's --batch: a file that is zoo:vgg5 at batch 2 and the zoo network at --batch 2 replay
// the file's plan without a note; the file replaying the zoo network's batch-1 plan gets a note
// naming both batches.
TEST(SimulateCli, APlanRecordsTheBatchOfTheNetworkItWasPricedFor) {
  const fs::path dir = fresh_dir("simulate_plan_batch");
  std::string text = read_file(kSrc + "/configs/networks/vgg5.yaml");
  text.replace(text.find("input: [1, "), 11, "elem_bytes: 2\ninput: [2, ");
  std::ofstream(dir / "vgg5_b2.yaml") << text;
  const std::string hw = "--hw " + kSrc + "/configs/hw/mesh4x4.yaml ";
  ASSERT_EQ(run_nocflow("optimize " + hw + "--network " + (dir / "vgg5_b2.yaml").string() +
                        " --out " + (dir / "opt").string())
                .exit_code,
            0);
  const std::string plan = " --quiet --plan " + (dir / "opt" / "plan.yaml").string() + " --out ";
  const CliRun same =
      run_nocflow("simulate " + hw + "--network zoo:vgg5 --batch 2" + plan + (dir / "b2").string());
  ASSERT_EQ(same.exit_code, 0) << same.output;
  EXPECT_EQ(same.output.find("note:"), std::string::npos) << same.output;
  ASSERT_EQ(run_nocflow("optimize " + hw + "--network zoo:vgg5 --out " + (dir / "opt1").string())
                .exit_code,
            0);
  const CliRun other = run_nocflow(
      "simulate " + hw + "--network " + (dir / "vgg5_b2.yaml").string() + " --quiet --plan " +
      (dir / "opt1" / "plan.yaml").string() + " --out " + (dir / "file").string());
  ASSERT_EQ(other.exit_code, 0) << other.output;
  EXPECT_NE(other.output.find("note: the plan was priced for batch 1, this run is batch 2"),
            std::string::npos)
      << other.output;
}

// A plan's layers are matched by name: a plan that names another network replays on the one
// loaded, which the run and summary.json name, with a note naming the plan's.
TEST(SimulateCli, ARunNamesTheNetworkLoadedNotThePlans) {
  const fs::path dir = fresh_dir("simulate_plan_network");
  const std::string hw = "--hw " + kSrc + "/configs/hw/mesh4x4.yaml --network zoo:vgg5 ";
  ASSERT_EQ(run_nocflow("optimize " + hw + "--out " + (dir / "opt").string()).exit_code, 0);
  std::string plan = read_file(dir / "opt" / "plan.yaml");
  const auto line = plan.find("network: vgg5\n");
  ASSERT_NE(line, std::string::npos) << plan;
  plan.replace(line, 14, "network: vgg16\n");
  std::ofstream(dir / "renamed.yaml") << plan;
  const CliRun r = run_nocflow("simulate " + hw + "--quiet --plan " +
                               (dir / "renamed.yaml").string() + " --out " + (dir / "sim").string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("nocflow simulate: vgg5 ("), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("note: the plan names the network vgg16; its layers are matched by name "
                          "to vgg5's"),
            std::string::npos)
      << r.output;
  const auto summary = nlohmann::json::parse(read_file(dir / "sim" / "summary.json"));
  EXPECT_EQ(summary["network"], "vgg5");
}

// An fp32 ONNX export run as the hardware's fp16 (data.onnx_floats: width): every byte it moves
// is halved (tiny_unet's tensors are all floats), and no note says the file's size is used.
TEST(SimulateCli, AnOnnxModelsFloatsTakeTheHardwaresWidthWhenAsked) {
  const fs::path dir = fresh_dir("simulate_onnx_floats");
  const std::string run = "simulate " + kHw2x2 + " --network " + kSrc +
                          "/tests/optimizer/data/tiny_unet.onnx --quiet --out ";
  const CliRun file = run_nocflow(run + (dir / "file").string());
  ASSERT_EQ(file.exit_code, 0) << file.output;
  EXPECT_NE(file.output.find("note: the network's inputs have 4-byte elements (from its file)"),
            std::string::npos)
      << file.output;
  const CliRun width =
      run_nocflow(run + (dir / "width").string() + " --set data.onnx_floats=width");
  ASSERT_EQ(width.exit_code, 0) << width.output;
  EXPECT_EQ(width.output.find("-byte elements (from its file)"), std::string::npos) << width.output;
  const auto as_file = nlohmann::json::parse(read_file(dir / "file" / "summary.json"));
  const auto as_width = nlohmann::json::parse(read_file(dir / "width" / "summary.json"));
  EXPECT_GT(as_file["bytes"].get<std::int64_t>(), 0);
  EXPECT_EQ(2 * as_width["bytes"].get<std::int64_t>(), as_file["bytes"].get<std::int64_t>());
  EXPECT_LT(as_width["total_cycles"].get<std::int64_t>(), as_file["total_cycles"].get<std::int64_t>());
}

// A network file keeps its own element size; the run says so when the hardware's differs.
TEST(SimulateCli, ANetworkFileWhoseElementSizeIsNotTheHardwaresGetsANote) {
  const fs::path dir = fresh_dir("simulate_element_size");
  const std::string run =
      "simulate " + kHw2x2 + " --network " + kSrc + "/configs/networks/vgg5.yaml --quiet --out ";
  const CliRun two = run_nocflow(run + (dir / "two").string());  // mesh4x4.yaml: 2-byte elements
  ASSERT_EQ(two.exit_code, 0) << two.output;
  EXPECT_NE(two.output.find("note: the network's inputs have 4-byte elements (from its file), not "
                            "data.width_bytes 2, which only zoo networks take"),
            std::string::npos)
      << two.output;
  const CliRun four = run_nocflow(run + (dir / "four").string() + " --set data.width_bytes=4");
  ASSERT_EQ(four.exit_code, 0) << four.output;
  EXPECT_EQ(four.output.find("-byte elements (from its file)"), std::string::npos) << four.output;
  // Same file, same sizes either way: the element size comes from the file.
  EXPECT_EQ(nlohmann::json::parse(read_file(dir / "two" / "summary.json"))["total_cycles"],
            nlohmann::json::parse(read_file(dir / "four" / "summary.json"))["total_cycles"]);
}

// A layer whose dimensions no divisor splits (7 tokens, prime, on 4 PEs) ran on PE 0 alone
// without a word; balanced splits would offer it uneven blocks.
TEST(SimulateCli, ALayerNoDivisorSplitsGetsANoteThatBalancedSplitsWould) {
  const fs::path dir = fresh_dir("simulate_single_pe");
  std::ofstream(dir / "prime.yaml")
      << "inputs:\n  tokens: [1, 7, 32]\nlayers:\n"
         "  - {name: q, op: fc, inputs: [tokens], out: 32}\n"
         "  - {name: mean, op: reduce_mean, axes: [-1]}\n"
         "  - {name: centred, op: sub, inputs: [q, mean]}\n";
  const std::string run =
      "simulate " + kHw2x2 + "--network " + (dir / "prime.yaml").string() + " --quiet --out ";
  const CliRun divisors = run_nocflow(run + (dir / "divisors").string());
  ASSERT_EQ(divisors.exit_code, 0) << divisors.output;
  EXPECT_NE(divisors.output.find("\n  note: 1 layer runs on one PE since no divisor of its "
                                 "dimensions splits it (7 is prime); --set "
                                 "partition.splits=balanced offers uneven blocks\n"),
            std::string::npos)
      << divisors.output;
  const CliRun balanced =
      run_nocflow(run + (dir / "balanced").string() + " --set partition.splits=balanced");
  ASSERT_EQ(balanced.exit_code, 0) << balanced.output;
  EXPECT_EQ(balanced.output.find("on one PE"), std::string::npos) << balanced.output;
  const CliRun zoo = run_nocflow("simulate " + kHw2x2 + "--network zoo:vgg5 --quiet --out " +
                                 (dir / "vgg5").string());
  ASSERT_EQ(zoo.exit_code, 0) << zoo.output;
  EXPECT_EQ(zoo.output.find("on one PE"), std::string::npos) << zoo.output;
}

// A plan written before plans recorded priced_for (session 21 and earlier) names its hardware
// in that session's one-line format: it replays without a note on that hardware, with one on
// other hardware. So does one in the format of sessions 22 to 85 ("link 1 cycle(s)"), edited
// to say nothing of priced_for.
TEST(SimulateCli, APlanOfEarlierSessionsComparesItsHardwareLine) {
  const fs::path dir = fresh_dir("simulate_legacy_plan");
  ASSERT_EQ(run_nocflow("optimize " + kHw2x2 + "--network " + kTwoConv + " --out " +
                        (dir / "opt").string())
                .exit_code,
            0);
  for (const bool session21 : {true, false}) {
    std::istringstream plan(read_file(dir / "opt" / "plan.yaml"));
    std::string old;
    for (std::string line; std::getline(plan, line);) {
      if (line.rfind("priced_for:", 0) == 0) continue;
      if (line.rfind("hardware:", 0) == 0 && session21)  // the format plans of session 21 wrote
        line =
            "hardware: \"mesh 2x2 (4 PEs), router lookahead: 4 VCs x 8 flits, xy, 32 B/flit, link "
            "1 cycle(s), NI 8 channels, 1.0 GHz, 256 MACs/cycle/PE\"";
      else if (line.rfind("hardware:", 0) == 0) {
        const std::size_t at = line.find("link 1 cycle,");
        ASSERT_NE(at, std::string::npos) << line;
        line.replace(at, 13, "link 1 cycle(s),");
      }
      old += line + "\n";
    }
    const fs::path file = dir / (session21 ? "old21.yaml" : "old85.yaml");
    std::ofstream(file) << old;
    const std::string replay = "simulate " + kHw2x2 + "--network " + kTwoConv + " --quiet --plan " +
                               file.string() + " --out ";
    const CliRun same = run_nocflow(replay + (dir / "same").string());
    ASSERT_EQ(same.exit_code, 0) << same.output;
    EXPECT_EQ(same.output.find("note:"), std::string::npos) << same.output;
    const CliRun other =
        run_nocflow(replay + (dir / "other").string() + " --set link.width_bytes=16");
    ASSERT_EQ(other.exit_code, 0) << other.output;
    EXPECT_NE(other.output.find("note: the plan was priced for mesh 2x2 (4 PEs), router lookahead"),
              std::string::npos)
        << other.output;
  }
}

// A training plan records its optimizer: adam's updates cost more than sgd's, so a replay with
// another says its prediction does not apply, and summary.json says why.
TEST(SimulateCli, ATrainingPlanRecordsItsOptimizer) {
  const fs::path dir = fresh_dir("simulate_train_optimizer");
  ASSERT_EQ(run_nocflow("optimize " + kHw2x2 + "--network " + kTwoConv + " --train adam --out " +
                        (dir / "opt").string())
                .exit_code,
            0);
  EXPECT_NE(read_file(dir / "opt" / "plan.yaml").find("train: adam"), std::string::npos);
  const std::string replay = "simulate " + kHw2x2 + "--network " + kTwoConv + " --quiet --plan " +
                             (dir / "opt" / "plan.yaml").string();
  const CliRun same = run_nocflow(replay + " --train adam --out " + (dir / "adam").string());
  ASSERT_EQ(same.exit_code, 0) << same.output;
  EXPECT_EQ(same.output.find("note:"), std::string::npos) << same.output;
  EXPECT_TRUE(nlohmann::json::parse(
                  read_file(dir / "adam" / "summary.json"))["predicted_total_does_not_apply"]
                  .empty());
  const CliRun other = run_nocflow(replay + " --train sgd --out " + (dir / "sgd").string());
  ASSERT_EQ(other.exit_code, 0) << other.output;
  EXPECT_NE(
      other.output.find("note: the plan was priced for training with adam, this run trains with "
                        "sgd: its predicted total does not apply"),
      std::string::npos)
      << other.output;
  EXPECT_EQ(nlohmann::json::parse(
                read_file(dir / "sgd" / "summary.json"))["predicted_total_does_not_apply"],
            nlohmann::json::array({"train"}));
}

// A plan records the graph passes its network was prepared with, and a replay without --passes
// prepares the network with them; another --passes is refused, naming the plan's. A plan from
// before the key replays with --passes as given (the default), as it did.
TEST(SimulateCli, APlanRecordsItsPassesAndReplaysWithThem) {
  const fs::path dir = fresh_dir("simulate_plan_passes");
  const std::string network = kSrc + "/tests/sim/data/conv_residual.yaml";
  ASSERT_EQ(run_nocflow("optimize " + kHw2x2 + "--network " + network +
                        " --passes none --quiet --out " + (dir / "opt").string())
                .exit_code,
            0);
  const std::string plan_text = read_file(dir / "opt" / "plan.yaml");
  EXPECT_NE(plan_text.find("\npasses: none\n"), std::string::npos) << plan_text;
  EXPECT_NE(plan_text.find("name: relu1"), std::string::npos);  // unfused: its own layer
  const std::string replay = "simulate " + kHw2x2 + "--network " + network + " --quiet --plan ";
  const std::string plan = (dir / "opt" / "plan.yaml").string();

  const CliRun same = run_nocflow(replay + plan + " --out " + (dir / "same").string());
  ASSERT_EQ(same.exit_code, 0) << same.output;
  EXPECT_NE(same.output.find("note: graph passes none, as the plan's passes say"),
            std::string::npos)
      << same.output;
  EXPECT_NE(same.output.find("(5 layers"), std::string::npos) << same.output;
  EXPECT_TRUE(nlohmann::json::parse(
                  read_file(dir / "same" / "summary.json"))["predicted_total_does_not_apply"]
                  .empty());
  EXPECT_EQ(
      run_nocflow(replay + plan + " --passes none --out " + (dir / "given").string()).exit_code, 0);

  const CliRun other =
      run_nocflow(replay + plan + " --passes default --out " + (dir / "other").string());
  EXPECT_EQ(other.exit_code, 2) << other.output;
  EXPECT_NE(other.output.find("--passes default: " + plan +
                              " was optimized with --passes none (leave --passes out to "
                              "replay it with the plan's)"),
            std::string::npos)
      << other.output;

  std::string old_text = plan_text;
  old_text.erase(old_text.find("passes: none\n"), std::string("passes: none\n").size());
  const fs::path old_plan = dir / "old.yaml";
  std::ofstream(old_plan) << old_text;
  const CliRun old_default =
      run_nocflow(replay + old_plan.string() + " --out " + (dir / "old_default").string());
  EXPECT_EQ(old_default.exit_code, 2) << old_default.output;
  EXPECT_NE(old_default.output.find("plan layer 'relu1' is not a layer of the network"),
            std::string::npos)
      << old_default.output;
  EXPECT_EQ(run_nocflow(replay + old_plan.string() + " --passes none --out " +
                        (dir / "old_none").string())
                .exit_code,
            0);
}

// A plan whose BATCH split does not fit this run's batch is refused, and the message says the
// plan's batch and how to give it.
TEST(SimulateCli, APlanForAnotherBatchSaysWhichAndHow) {
  const fs::path dir = fresh_dir("simulate_plan_other_batch");
  const std::string hw = "--hw " + kSrc + "/configs/hw/mesh4x4.yaml ";
  ASSERT_EQ(
      run_nocflow("optimize " + hw + "--network zoo:vgg5 --batch 4 --out " + (dir / "opt").string())
          .exit_code,
      0);
  ASSERT_NE(read_file(dir / "opt" / "plan.yaml").find("BATCH=4"), std::string::npos);
  const CliRun r =
      run_nocflow("simulate " + hw + "--network zoo:vgg5 --quiet --plan " +
                  (dir / "opt" / "plan.yaml").string() + " --out " + (dir / "b1").string());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(
      r.output.find("(the plan was made for batch 4, this network has batch 1: add --batch 4)"),
      std::string::npos)
      << r.output;
}

// A network of one layer moves nothing between layers: the transfers line says so instead of
// an empty table.
TEST(SimulateCli, ANetworkWithoutTransfersSaysSo) {
  const fs::path dir = fresh_dir("simulate_no_transfers");
  std::ofstream(dir / "one.yaml") << "input: [1, 8]\nlayers:\n  - {op: fc, out: 4}\n";
  const CliRun r = run_nocflow("simulate " + kHw2x2 + "--network " + (dir / "one.yaml").string() +
                               " --quiet --out " + (dir / "out").string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("transfers        none (no layer reads another's output"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("edge  "), std::string::npos) << r.output;
}

// A bounded source queue smaller than vgg5's messages: each longer message waits for its NI's
// queue to empty (it used to be refused), and the run moves the same messages.
TEST(SimulateCli, MessagesLongerThanTheInjectionQueueWaitForItToEmpty) {
  const fs::path dir = fresh_dir("simulate_small_queue");
  const std::string run = "simulate " + kHw2x2 + " --network zoo:vgg5 --quiet --out ";
  const CliRun bounded = run_nocflow(run + (dir / "bounded").string() + " --set ni.injection_queue_flits=4");
  ASSERT_EQ(bounded.exit_code, 0) << bounded.output;
  ASSERT_EQ(run_nocflow(run + (dir / "free").string()).exit_code, 0);
  const auto b = nlohmann::json::parse(read_file(dir / "bounded/summary.json"));
  const auto f = nlohmann::json::parse(read_file(dir / "free/summary.json"));
  EXPECT_EQ(b["messages"], f["messages"]);
  EXPECT_EQ(b["flits"], f["flits"]);
  EXPECT_NE(b["total_cycles"], f["total_cycles"]);  // the sends wait for room
}

TEST(SimulateCli, PlansThatDoNotFitAreRejectedWithExitCode2) {
  const fs::path dir = fresh_dir("simulate_bad");
  ASSERT_EQ(run_nocflow("optimize " + kHw2x2 + " --network " + kTwoConv + " --out " +
                        (dir / "opt").string())
                .exit_code,
            0);
  const std::string plan = read_file(dir / "opt" / "plan.yaml");
  // A plan without conv2.
  const std::string missing = plan.substr(0, plan.find("  - name: conv2")) + "edges: []\n";
  std::ofstream(dir / "missing.yaml") << missing;
  // A plan with a layer the network does not have (made after other passes).
  const auto conv2 = plan.find("  - name: conv2"), edges = plan.find("edges:", conv2);
  std::string block = plan.substr(conv2, edges - conv2);
  block.replace(block.find("conv2"), 5, "relu9");
  std::ofstream(dir / "extra.yaml") << plan.substr(0, edges) + block + plan.substr(edges);
  // A layer with a key the reader does not know (a typo, or a plan of another version).
  std::string typo = plan;
  typo.insert(typo.find("    choice:"), "    colour: red\n");
  std::ofstream(dir / "typo.yaml") << typo;
  const std::pair<std::string, std::string> cases[] = {
      {kHw2x2 + " --plan " + (dir / "missing.yaml").string(),
       "missing.yaml: the plan (for network two_conv) has no layer 'conv2' of the network "
       "simulated (two_conv); a plan fits the graph it was optimized for: give the --network, "
       "--passes and --train optimize was given"},
      {kHw2x2 + " --plan " + (dir / "extra.yaml").string(),
       "extra.yaml: plan layer 'relu9' is not a layer of the network simulated (two_conv); a plan fits "
       "the graph it was optimized for"},
      {kHw2x2 + " --plan " + (dir / "typo.yaml").string(),
       "unknown key 'colour' (known: name, op, choice, nodes,"},
      {"--hw " + kSrc + "/configs/hw/mesh4x4.yaml --plan " + (dir / "opt" / "plan.yaml").string(),
       "plan.yaml: the plan is for 4 PEs (mesh 2x2), the hardware has 16"},
      {"--hw " + kSrc + "/configs/hw/crossbar16.yaml --set topology.ports=4 --plan " +
           (dir / "opt" / "plan.yaml").string(),
       "the plan is for mesh 2x2, the hardware is crossbar 4"},
      {kHw2x2 + " --set pe.sram_bytes=1KiB --plan " + (dir / "opt" / "plan.yaml").string(),
       "a PE's SRAM holds 1024 (pe.sram_bytes)"},
      // Solved here: the limit cannot be lifted as optimize's can, so say what can.
      {kHw2x2 + " --set pe.sram_bytes=1KiB",
       "the limit (pe.sram_bytes) is 1024 bytes; the network needs at least 10272 bytes per PE "
       "(layer 'conv1'); raise pe.sram_bytes or use more PEs"},
      {kHw2x2 + " --mode lockstep", "--mode: unknown mode 'lockstep'"},
      // --trace without a format takes the next option as one: named, not "--network is required".
      {kHw2x2 + " --trace", "--trace: unknown trace format '--network' (known: perfetto)"},
      {kHw2x2 + " --trace perfetto --trace-window 0", "--trace-window: must be at least 1, got 0"},
      {kHw2x2 + " --trace-window 50", "--trace-window: samples links for --trace or --vcd"},
      // A directory opens as a stream and fails on the first read: named, not an internal error.
      {kHw2x2 + " --plan " + (dir / "opt").string(), "cannot read the plan: it is a directory"},
      {"--hw " + (dir / "opt").string(), "cannot open hardware config: it is a directory"},
      {kHw2x2 + " --dump-programs /proc/nocflow",
       "--dump-programs /proc/nocflow: cannot create folder"},
  };
  for (const auto& [args, message] : cases) {
    const CliRun r = run_nocflow("simulate " + args + " --network " + kTwoConv + " --out " +
                                 (dir / "out").string());
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.output;
    EXPECT_NE(r.output.find(message), std::string::npos) << args << "\n" << r.output;
    EXPECT_FALSE(fs::exists(dir / "out")) << args;
  }
}

}  // namespace
}  // namespace nocflow::testing
