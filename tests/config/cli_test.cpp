// SPDX-License-Identifier: MIT
// The command line on bad configs: one message naming file:line:col and key, exit code 2,
// nothing written. And --set overrides reaching config.resolved.yaml.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <regex>

#include "tests/cli_runner.h"

namespace {

namespace fs = std::filesystem;

using nocflow::testing::CliRun;
using nocflow::testing::run_nocflow;

fs::path temp_dir(const std::string& name) { return nocflow::testing::fresh_dir("cli_" + name); }

struct BadConfig {
  std::string name;
  std::string yaml;             // file content ("" = do not create the file; kDirectory: a directory)
  std::string extra_args;       // e.g. --set
  std::vector<std::string> expect;  // fragments of the message
};

void PrintTo(const BadConfig& c, std::ostream* os) { *os << c.name; }

const std::string kDirectory = "<directory>";

class BadConfigTest : public ::testing::TestWithParam<BadConfig> {};

TEST_P(BadConfigTest, GivesOneClearMessageAndExitCode2AndWritesNothing) {
  const BadConfig& c = GetParam();
  const fs::path dir = temp_dir(c.name);
  const fs::path file = dir / "hw.yaml";
  if (c.yaml == kDirectory) {
    fs::create_directory(file);
  } else if (!c.yaml.empty()) {
    std::ofstream(file) << c.yaml;
  }
  const fs::path out = dir / "out";
  const CliRun r = run_nocflow("config --check " + file.string() + " " + c.extra_args + " --out " +
                            out.string());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  for (const auto& fragment : c.expect) EXPECT_NE(r.output.find(fragment), std::string::npos)
      << "missing '" << fragment << "' in: " << r.output;
  EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;
  EXPECT_FALSE(fs::exists(out)) << "a failing command must write nothing";
}

const std::string kHeader = "topology:\n  kind: mesh\n";

INSTANTIATE_TEST_SUITE_P(
    Table, BadConfigTest,
    ::testing::Values(
        BadConfig{"unknown_key",
                  kHeader + "router:\n  vc: 2\n",
                  "",
                  {"hw.yaml:4:3:", "router.vc: unknown key", "did you mean 'router.vcs'"}},
        BadConfig{"unknown_section",
                  "routr:\n  vcs: 2\n",
                  "",
                  {"hw.yaml:1:1:", "routr: unknown key", "did you mean 'router'"}},
        BadConfig{"wrong_type_int",
                  kHeader + "router:\n  vcs: four\n",
                  "",
                  {"hw.yaml:4:8:", "router.vcs: expected an integer, got 'four'"}},
        BadConfig{"wrong_type_bool",
                  "router:\n  speculative: maybe\n",
                  "",
                  {"hw.yaml:2:16:", "router.speculative: expected true or false"}},
        // YAML 1.1's yes/on, which YAML 1.2 readers take as strings, are refused.
        BadConfig{"yaml_1_1_bool",
                  "router:\n  speculative: on\n",
                  "",
                  {"hw.yaml:2:16:", "router.speculative: expected true or false, got 'on'"}},
        BadConfig{"wrong_type_real",
                  "clock:\n  frequency_ghz: fast\n",
                  "",
                  {"hw.yaml:2:18:", "clock.frequency_ghz: expected a number, got 'fast'"}},
        // Decimal only: std::stod alone reads 0x10 as 16.
        BadConfig{"hex_real",
                  "clock:\n  frequency_ghz: 0x10\n",
                  "",
                  {"hw.yaml:2:18:", "clock.frequency_ghz: expected a number, got '0x10'"}},
        BadConfig{"out_of_range_int",
                  kHeader + "router:\n  vcs: 0\n",
                  "",
                  {"hw.yaml:4:8:", "router.vcs: value 0 is out of range [1, 64]"}},
        BadConfig{"out_of_range_real",
                  "clock:\n  frequency_ghz: -2\n",
                  "",
                  {"hw.yaml:2:18:", "clock.frequency_ghz: value -2 is out of range"}},
        BadConfig{"bad_choice",
                  "router:\n  routing: xz\n",
                  "",
                  {"hw.yaml:2:12:", "router.routing: unknown value 'xz'", "did you mean 'xy'",
                   "known: "}},
        BadConfig{"yaml_syntax",
                  "router:\n  vcs: [1, 2\nlink: {}\n",
                  "",
                  {"hw.yaml:", "YAML syntax error"}},
        BadConfig{"missing_file", "", "", {"hw.yaml: cannot open hardware config: no such file"}},
        BadConfig{"directory",
                  kDirectory,
                  "",
                  {"hw.yaml: cannot open hardware config: it is a directory"}},
        BadConfig{
            "section_not_map", "router: 4\n", "", {"hw.yaml:1:9:", "router: expected a mapping"}},
        BadConfig{"map_not_scalar",
                  "router:\n  vcs:\n    a: 1\n",
                  "",
                  {"hw.yaml:3:5:", "router.vcs: expected an integer, got a mapping"}},
        // Readers take the first document only: a second one would be ignored.
        BadConfig{"list_as_key",
                  "? [router]\n: {vcs: 2}\n",
                  "",
                  {"hw.yaml:1:3:", "a key must be a name"}},
        BadConfig{"second_document",
                  "router:\n  vcs: 2\n---\nrouter:\n  vcs: 3\n",
                  "",
                  {"hw.yaml:4:1:", "a second YAML document (after '---'): give one per file"}},
        BadConfig{"mesh_of_no_rows",
                  "topology:\n  kind: mesh\n  rows: 0\n  cols: 4\n",
                  "",
                  {"hw.yaml:3:9:", "topology.rows: value 0 is out of range [1, 64] routers"}},
        BadConfig{"crossbar_rows",
                  "topology:\n  kind: crossbar\n  rows: 4\n",
                  "",
                  {"hw.yaml:3:9:", "topology.rows: applies to kind: mesh only"}},
        BadConfig{"duplicate_key",
                  "router:\n  vcs: 2\n  vcs: 3\n",
                  "",
                  {"hw.yaml:3:3:", "router.vcs: key given twice"}},
        // Two sections of one name would merge (or one override the other) silently.
        BadConfig{"duplicate_section",
                  "router:\n  vcs: 2\nlink:\n  latency: 1\nrouter:\n  buffer_depth: 4\n",
                  "",
                  {"hw.yaml:5:1:", "router: section given twice"}},
        // yaml-cpp and CLI11 read 010 as octal 8, others as 10: refused rather than guessed.
        BadConfig{"leading_zero",
                  kHeader + "router:\n  vcs: 010\n",
                  "",
                  {"hw.yaml:4:8:", "router.vcs: expected an integer, got '010' (no leading zero"}},
        BadConfig{"set_plus_sign",
                  kHeader,
                  "--set router.vcs=+2",
                  {"--set router.vcs=+2: router.vcs: expected an integer, got '+2'"}},
        BadConfig{
            "set_leading_zero",
            kHeader,
            "--set router.buffer_depth=08",
            {"--set router.buffer_depth=08: router.buffer_depth: expected an integer, got '08'"}},
        // Two values for one key: the last won silently.
        BadConfig{"set_twice",
                  kHeader,
                  "--set router.vcs=2 --set \" router.vcs =4\"",
                  {"--set  router.vcs =4: router.vcs: given twice (also --set router.vcs=2): give "
                   "it once"}},
        BadConfig{"set_unknown_key",
                  kHeader,
                  "--set router.bufer_depth=3",
                  {"--set router.bufer_depth=3: router.bufer_depth: unknown key",
                   "did you mean 'router.buffer_depth'"}},
        // Too far to spell alike: the key holding both its words is named (there was no hint).
        BadConfig{
            "set_words_of_a_key",
            kHeader,
            "--set clock_ghz=1.5",
            {"--set clock_ghz=1.5: clock_ghz: unknown key; did you mean 'clock.frequency_ghz'?"}},
        BadConfig{"set_out_of_range",
                  kHeader,
                  "--set link.latency=0",
                  {"--set link.latency=0: link.latency: value 0 is out of range [1, 64]"}},
        BadConfig{"set_a_section",
                  kHeader,
                  "--set router=4",
                  {"--set router=4: router: is a section, not a key; its keys: router.preset, "
                   "router.vcs,"}},
        BadConfig{"set_no_equals",
                  kHeader,
                  "--set link.latency",
                  {"--set link.latency: expected key.path=value"}},
        // Each value in range, together beyond what the router supports: 5 x 64 > 256 input VCs.
        BadConfig{"too_many_vcs",
                  kHeader + "router:\n  vcs: 64\n",
                  "",
                  {"hw.yaml:4:8:",
                   "router.vcs: 5 ports x 64 VCs: a router supports at most 256 input VCs"}},
        // A 20-cycle link moves no flit for 20 cycles: a 10-cycle watchdog would cry deadlock.
        BadConfig{"watchdog_shorter_than_a_hop",
                  kHeader + "link:\n  latency: 20\n",
                  "--set run.watchdog_cycles=10",
                  {"--set run.watchdog_cycles=10: run.watchdog_cycles: 10 cycles is not longer "
                   "than one hop"}}),
    [](const auto& info) { return info.param.name; });

TEST(Cli, SetOverridesShowUpInResolvedConfig) {
  const fs::path dir = temp_dir("set");
  const CliRun r = run_nocflow(std::string("config --check ") + NOCFLOW_SOURCE_DIR +
                            "/configs/hw/mesh4x4.yaml --set router.vcs=3 --set link.latency=2 " +
                            "--set pe.sram_bytes=512KiB --out " + (dir / "out").string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string text = nocflow::testing::read_file(dir / "out" / "config.resolved.yaml");
  EXPECT_NE(text.find("vcs: 3"), std::string::npos) << text;
  EXPECT_NE(text.find("latency: 2"), std::string::npos) << text;
  EXPECT_NE(text.find("sram_bytes: 524288"), std::string::npos) << text;
  // Keys not overridden keep the file's values.
  EXPECT_NE(text.find("rows: 4"), std::string::npos) << text;
}

// Without --check, --set, --print and --out work on the built-in defaults (--print alone was
// refused while --set with --print was not); with none of them there is nothing to do.
TEST(Cli, ConfigWithoutAFileShowsTheDefaults) {
  const CliRun print = run_nocflow("config --print");
  EXPECT_EQ(print.exit_code, 0) << print.output;
  EXPECT_NE(print.output.find("(defaults, preset and --set applied)"), std::string::npos) << print.output;
  const fs::path dir = temp_dir("defaults_out");
  const CliRun out = run_nocflow("config --out " + (dir / "o").string());
  EXPECT_EQ(out.exit_code, 0) << out.output;
  EXPECT_NE(out.output.find("nocflow: wrote " + (dir / "o").string() + "/config.resolved.yaml"), std::string::npos)
      << out.output;
  EXPECT_TRUE(fs::exists(dir / "o" / "config.resolved.yaml"));
  // Into another run's folder it replaced the config that run's plan and summary were made on.
  std::ofstream(dir / "o" / "plan.yaml") << "a plan\n";
  const std::string before = nocflow::testing::read_file(dir / "o" / "config.resolved.yaml");
  const CliRun onto_run = run_nocflow("config --set router.vcs=2 --out " + (dir / "o").string());
  EXPECT_EQ(onto_run.exit_code, 2) << onto_run.output;
  EXPECT_NE(onto_run.output.find("holds another run's outputs (plan.yaml)"), std::string::npos)
      << onto_run.output;
  EXPECT_EQ(nocflow::testing::read_file(dir / "o" / "config.resolved.yaml"), before);
  const CliRun nothing = run_nocflow("config");
  EXPECT_EQ(nothing.exit_code, 2);
  EXPECT_NE(nothing.output.find("config: give --check FILE, --set, --print, --out or --reference"), std::string::npos)
      << nothing.output;
}

// Spaces around a --set key, as written in prose, are not part of it.
TEST(Cli, SetTakesAKeyWithSpacesAroundIt) {
  const CliRun r = run_nocflow("config --print --set \"router.vcs = 3\"");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("vcs: 3"), std::string::npos) << r.output;
  const CliRun empty = run_nocflow("config --set \" = 3\"");
  EXPECT_EQ(empty.exit_code, 2) << empty.output;
  EXPECT_NE(empty.output.find("expected key.path=value"), std::string::npos) << empty.output;
}

// --print's stdout is the YAML alone, so that it can be redirected into a config: notes and the
// "wrote" line go to stderr.
TEST(Cli, PrintedConfigReadsBackWithNotesAndOut) {
  const fs::path dir = temp_dir("print_notes");
  const std::string args = "config --print --set pe.array_rows=8 --set pe.array_cols=8 --out " +
                           (dir / "o").string();
  const CliRun both = run_nocflow(args);
  ASSERT_EQ(both.exit_code, 0) << both.output;
  ASSERT_NE(both.output.find("note: "), std::string::npos) << both.output;
  ASSERT_NE(both.output.find("nocflow: wrote "), std::string::npos) << both.output;
  const fs::path yaml = dir / "printed.yaml";
  ASSERT_EQ(run_nocflow(args + " 2>/dev/null | cat > " + yaml.string()).exit_code, 0);
  const CliRun check = run_nocflow("config --check " + yaml.string());
  EXPECT_EQ(check.exit_code, 0) << check.output;
  EXPECT_NE(check.output.find("ok: "), std::string::npos) << check.output;
}

TEST(Cli, CheckPrintsOneLineSummary) {
  const CliRun r = run_nocflow(std::string("config --check ") + NOCFLOW_SOURCE_DIR +
                            "/configs/hw/mesh8x8.yaml");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("mesh 8x8 (64 PEs)"), std::string::npos) << r.output;
}

// A file that sets nothing loads as the defaults; the check and the commands that run it say
// so (a file the user meant to fill, or the wrong one), and a file that sets a key gets no such
// note.
TEST(Cli, CheckNotesAFileThatSetsNoKey) {
  const fs::path dir = temp_dir("empty_config");
  { std::ofstream(dir / "empty.yaml") << "# to be written\n"; }
  const CliRun empty = run_nocflow("config --check " + (dir / "empty.yaml").string());
  EXPECT_EQ(empty.exit_code, 0) << empty.output;
  const std::string note = "empty.yaml sets no key: every value not given by --set is its default";
  EXPECT_NE(empty.output.find(note), std::string::npos) << empty.output;
  // The commands that run the machine say it too (they ran the defaults without a word).
  const CliRun traffic = run_nocflow("traffic --hw " + (dir / "empty.yaml").string() +
                                     " --cycles 100 --quiet --out " + (dir / "traffic").string());
  EXPECT_EQ(traffic.exit_code, 0) << traffic.output;
  EXPECT_NE(traffic.output.find(note), std::string::npos) << traffic.output;
  const CliRun set = run_nocflow(std::string("config --check ") + NOCFLOW_SOURCE_DIR +
                                 "/configs/hw/mesh8x8.yaml");
  EXPECT_EQ(set.output.find("sets no key"), std::string::npos) << set.output;
}

TEST(Cli, DevicesAndNamesTooLongAreRefusedAsInputs) {
  // /dev/zero was read until memory ran out, and a name past 255 bytes was an internal error
  // (exit 1), in every reader (found by fuzzing).
  const std::string hw = std::string(NOCFLOW_SOURCE_DIR) + "/configs/hw/mesh4x4.yaml";
  const std::string out = " --out " + temp_dir("devices").string();
  const std::string long_name = "/tmp/" + std::string(300, 'n') + ".yaml";
  for (const auto& [args, message] : std::vector<std::pair<std::string, std::string>>{
           {"config --check /dev/zero", "/dev/zero: cannot read: it is a device, not a file"},
           {"config --check " + long_name, long_name + ": cannot read: File name too long"},
           {"simulate --hw " + hw + " --network zoo:vgg5 --plan /dev/zero" + out,
            "/dev/zero: cannot read: it is a device"},
           {"traffic --hw " + hw + " --messages /dev/zero" + out,
            "--messages /dev/zero: cannot read: it is a device"},
           {"inspect --network " + long_name, "File name too long"}}) {
    const CliRun r = run_nocflow(args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.output;
    EXPECT_NE(r.output.find(message), std::string::npos) << args << "\n" << r.output;
  }
  // A block device too, where the machine has one to name (it is not opened).
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/dev", ec))
    if (std::error_code bad; entry.is_block_file(bad)) {
      const CliRun r = run_nocflow("config --check " + entry.path().string());
      EXPECT_EQ(r.exit_code, 2) << r.output;
      EXPECT_NE(r.output.find(": cannot read: it is a device, not a file"), std::string::npos)
          << r.output;
      break;
    }
}

TEST(Cli, UsageErrorsExitWith2) {
  const CliRun typo = run_nocflow("simulat --hw x");
  EXPECT_EQ(typo.exit_code, 2);
  EXPECT_NE(typo.output.find(
                "unknown command 'simulat'; did you mean 'simulate'? (known: version, config,"),
            std::string::npos)
      << typo.output;
  EXPECT_EQ(run_nocflow("no-such-command").exit_code, 2);
  const CliRun negative = run_nocflow("inspect --network zoo:vgg5 --elem-bytes 0");
  EXPECT_EQ(negative.exit_code, 2);
  EXPECT_NE(negative.output.find("--elem-bytes: must be at least 1, got 0"), std::string::npos)
      << negative.output;
  EXPECT_EQ(run_nocflow("config --no-such-flag").exit_code, 2);
  // CLI11's parse errors in our words: the option named, with a guess.
  const std::string optimize = "optimize --hw " NOCFLOW_SOURCE_DIR "/configs/hw/mesh4x4.yaml --network zoo:vgg5 ";
  const std::pair<std::string, std::string> worded[] = {
      {optimize + "--solvr greedy --out x",
       "unknown option '--solvr'; did you mean '--solver'? (nocflow optimize --help lists them)"},
      {optimize + "--batch 2 --batch 3 --out x", "--batch: given 2 times; give it once"},
      {optimize + "--quiet --quiet --out x", "--quiet: given 2 times; give it once"},  // flags too
      {optimize + "greedy --out x",
       "unexpected argument 'greedy' (nocflow optimize takes options only"},
      {"traffic --hw x --cycles 1e3 --out x", "--cycles: expected a whole number, got '1e3'"},
      // Every integer option words its errors alike, and takes no octal (CLI11 read 010 as 8).
      {optimize + "--batch abc --out x", "--batch: expected a whole number, got 'abc'"},
      {optimize + "--batch 2.5 --out x", "--batch: expected a whole number, got '2.5'"},
      {optimize + "--batch 010 --out x",
       "--batch: expected a whole number without a leading zero (it would read as octal), got "
       "'010'"},
      {optimize + "--batch 0x10 --out x", "--batch: expected a whole number, got '0x10'"},
      {optimize + "--batch +2 --out x", "--batch: expected a whole number, got '+2'"},
      {"traffic --hw x --seed 007 --out x",
       "--seed: expected a whole number without a leading zero (it would read as octal), got "
       "'007'"},
      {"", "give a command: version, config, inspect,"},
      {"--hlep", "unknown option '--hlep'; did you mean '--help'?"},
  };
  for (const auto& [args, message] : worded) {
    const CliRun r = run_nocflow(args);
    EXPECT_EQ(r.exit_code, 2) << args;
    EXPECT_EQ(r.output.rfind("nocflow: error: " + message, 0), 0u) << args << "\n" << r.output;
  }
  // Where to look, said once, naming the command.
  const CliRun missing = run_nocflow("validate --out x");
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_EQ(missing.output, "nocflow: error: --hw is required (nocflow validate --help lists the options)\n");
  for (const std::string& args : {optimize + "--solvr greedy --out x", optimize + "greedy --out x"}) {
    const CliRun r = run_nocflow(args);
    EXPECT_EQ(r.output.find("--help"), r.output.rfind("--help")) << r.output;
  }
  // A misspelt required option is named as unknown, not reported as the option missing.
  const CliRun misspelt = run_nocflow("optimize --hw x.yaml --netwrk zoo:vgg5 --out x");
  EXPECT_EQ(misspelt.exit_code, 2);
  EXPECT_EQ(misspelt.output.rfind("nocflow: error: unknown option '--netwrk'; did you mean '--network'?", 0), 0u)
      << misspelt.output;
  // A stray number is not an option: the error CLI11 found stands.
  const CliRun stray = run_nocflow("traffic --out x --seed 1 -5");
  EXPECT_EQ(stray.output, "nocflow: error: --hw is required (nocflow traffic --help lists the options)\n");
  EXPECT_EQ(run_nocflow("--help").exit_code, 0);
  EXPECT_EQ(run_nocflow("config --help").exit_code, 0);
  const CliRun v = run_nocflow("version");
  EXPECT_EQ(v.exit_code, 0);
  EXPECT_NE(v.output.find("nocflow " NOCFLOW_VERSION), std::string::npos);
  // ... and the commit it was built from: 12 hex digits, "+modified-" and 8 more when built
  // from changed files, "unknown" outside a git checkout.
  EXPECT_TRUE(std::regex_match(
      v.output, std::regex("nocflow " NOCFLOW_VERSION
                           R"( \(commit ([0-9a-f]{12}(\+modified-[0-9a-f]{8})?|unknown)\)\n)")))
      << v.output;
  EXPECT_EQ(run_nocflow("--version").output, v.output);
}

// "(default 1)" read as every network's default, but an ONNX model exported with a dynamic batch
// is refused without --batch ("give the batch (--batch N)").
TEST(Cli, BatchHelpSaysTheDefaultIsAZooNetworksAndADynamicBatchNeedsIt) {
  for (const char* command : {"inspect", "optimize", "simulate", "validate"}) {
    const CliRun r = run_nocflow(std::string(command) + " --help");
    EXPECT_EQ(r.exit_code, 0) << command;
    EXPECT_NE(r.output.find("batch size: default 1 for a zoo network and a YAML network whose input "
                            "says `batch`; an ONNX model exported with a dynamic batch needs it"),
              std::string::npos)
        << command << "\n" << r.output;
    EXPECT_EQ(r.output.find("(default 1)"), std::string::npos) << command << "\n" << r.output;
  }
}

// An empty value (`--hw "$HW"` with HW unset) is refused, never taken as "not given": each of
// these ran on the built-in machine, solved instead of replaying, or wrote nothing, with exit 0.
TEST(Cli, AnEmptyValueIsRefused) {
  const std::string hw = "--hw " NOCFLOW_SOURCE_DIR "/configs/hw/mesh4x4.yaml ";
  const fs::path dir = nocflow::testing::fresh_path("empty_value");
  const std::string out = " --out " + dir.string();
  const std::pair<std::string, std::string> cases[] = {
      {"optimize --hw '' --network zoo:vgg5" + out, "--hw: empty value"},
      {"simulate " + hw + "--network zoo:vgg5 --plan ''" + out, "--plan: empty value"},
      {"simulate " + hw + "--network zoo:vgg5 --calibration ''" + out, "--calibration: empty value"},
      {"traffic " + hw + "--messages ''" + out, "--messages: empty value"},
      {"inspect --network zoo:vgg5 --dot ''", "--dot: empty value"},
      {"validate " + hw + "--set ''" + out, "--set: empty value"},
  };
  for (const auto& [args, message] : cases) {
    const CliRun r = run_nocflow(args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.output;
    EXPECT_EQ(r.output, "nocflow: error: " + message + "\n") << args;
  }
  EXPECT_FALSE(fs::exists(dir));
}

// An error that echoes a huge value keeps its ends and leaves out the middle (it printed 100 KB).
TEST(Cli, AnErrorCutsAHugeValueShort) {
  const std::string huge(50000, 'n');
  for (const std::string& args :
       {"inspect --network zoo:" + huge,  // the command's own error
        "optimize --hw x.yaml --network zoo:vgg5 --batch " + huge + " --out x"}) {  // CLI11's
    const CliRun r = run_nocflow(args);
    EXPECT_EQ(r.exit_code, 2) << r.output.substr(0, 200);
    EXPECT_EQ(r.output.rfind("nocflow: error: ", 0), 0u) << r.output.substr(0, 200);
    EXPECT_NE(r.output.find(" bytes left out] ... "), std::string::npos) << r.output.substr(0, 200);
    EXPECT_LT(r.output.size(), 1200u);
  }
}

}  // namespace
