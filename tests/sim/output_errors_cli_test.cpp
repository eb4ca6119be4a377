// SPDX-License-Identifier: MIT
// Output files that cannot be written (a folder of that name, a full disk) and program files
// that cannot be read: exit 2 naming the file, never "wrote ..." over lost results.
#include <gtest/gtest.h>

#include <fstream>

#include "tests/cli_runner.h"
#include "tests/sim/small_runs.h"

namespace nocflow::testing {
namespace {

namespace fs = std::filesystem;

/// Exit 2 with `message`, and no claim to have written the outputs.
void expect_refused(const CliRun& r, const std::string& message) {
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find(message), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("nocflow: wrote"), std::string::npos) << r.output;
}

TEST(OutputErrorsCli, OptimizeRefusesAPlanYamlThatIsAFolder) {
  const fs::path out = fresh_dir("output_errors_optimize");
  fs::create_directories(out / "plan.yaml");
  expect_refused(
      run_nocflow("optimize " + kHw2x2 + "--network " + kTwoConv + " --out " + out.string()),
      (out / "plan.yaml").string() + ": cannot write: it is a directory");
  // The last file it writes too, before the solve: no plan.yaml is left beside it.
  const fs::path last = fresh_dir("output_errors_optimize_summary");
  fs::create_directories(last / "summary.json");
  expect_refused(
      run_nocflow("optimize " + kHw2x2 + "--network " + kTwoConv + " --out " + last.string()),
      (last / "summary.json").string() + ": cannot write: it is a directory");
  EXPECT_FALSE(fs::exists(last / "plan.yaml"));
}

TEST(OutputErrorsCli, AnOutputFolderThatIsAFileIsRefusedBeforeAnyWork) {
  // Said before the tabulation and the solve (minutes on 16x16), naming the file in the way.
  const fs::path dir = fresh_dir("output_errors_out_file");
  std::ofstream(dir / "a_file") << "";
  for (const char* command : {"optimize", "simulate"})
    for (const fs::path& out : {dir / "a_file", dir / "a_file" / "sub"}) {
      const CliRun r = run_nocflow(std::string(command) + " --hw " + NOCFLOW_SOURCE_DIR +
                                   "/configs/hw/mesh8x8.yaml --network zoo:resnet50 --out " + out.string());
      expect_refused(r, out.string() + ": cannot create output folder: " +
                            (out == dir / "a_file" ? "it" : (dir / "a_file").string()) + " is a file, not a folder");
      EXPECT_EQ(r.output.find("tabulat"), std::string::npos) << command << ": refused after the work\n" << r.output;
    }
}

TEST(OutputErrorsCli, OptimizeRefusesAFullDisk) {
  if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full";
  const fs::path out = fresh_dir("output_errors_full");
  fs::create_symlink("/dev/full", out / "plan.yaml");
  expect_refused(
      run_nocflow("optimize " + kHw2x2 + "--network " + kTwoConv + " --out " + out.string()),
      (out / "plan.yaml").string() + ": cannot write: No space left on device");
}

// lp_solve's own writers report success on a full disk; the model is written by nocflow.
TEST(OutputErrorsCli, ExportLpRefusesAFullDisk) {
  if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full";
  const fs::path out = fresh_dir("output_errors_export_lp");
  for (const char* name : {"model.lp", "model.mps"}) {
    fs::create_symlink("/dev/full", out / name);
    expect_refused(
        run_nocflow("optimize " + kHw2x2 + "--network " + kTwoConv + " --solver ilp --export-lp " +
                    (out / name).string() + " --out " + (out / "plan").string()),
        (out / name).string() + ": cannot write the " + (name[6] == 'l' ? "LP" : "MPS") +
            " model: No space left on device");
  }
}

// --export-lp onto a file the run reads overwrote it (the hardware config held the LP, exit 0),
// and onto one of its outputs lost the LP under it.
TEST(OutputErrorsCli, ExportLpRefusesTheRunsInputsAndOutputs) {
  const fs::path dir = fresh_dir("output_errors_export_lp_clash");
  const fs::path config = dir / "hw.yaml";
  fs::copy_file(kSrc + "/configs/hw/mesh4x4.yaml", config);
  const std::string before = read_file(config);
  const fs::path out = dir / "out";
  const std::string args =
      "optimize --hw " + config.string() + " --network " + kTwoConv + " --solver ilp ";
  const CliRun onto_hw =
      run_nocflow(args + "--export-lp " + config.string() + " --out " + out.string());
  expect_refused(onto_hw, "the file --hw reads, which it would overwrite");
  EXPECT_EQ(read_file(config), before);
  fs::create_directories(out);
  expect_refused(
      run_nocflow(args + "--export-lp " + (out / "plan.yaml").string() + " --out " + out.string()),
      "this run writes its plan.yaml there");
  EXPECT_TRUE(fs::is_empty(out));
  // Into the --out folder the run creates: written (it was refused, "no folder").
  const fs::path fresh = dir / "fresh";
  const CliRun into_out =
      run_nocflow(args + "--export-lp " + (fresh / "m.lp").string() + " --out " + fresh.string());
  ASSERT_EQ(into_out.exit_code, 0) << into_out.output;
  EXPECT_NE(read_file(fresh / "m.lp").find("one_0"), std::string::npos);  // a layer's row
  EXPECT_TRUE(fs::exists(fresh / "plan.yaml"));
  // The same with a trailing slash on --out.
  const fs::path slash = dir / "slash";
  const CliRun into_slash = run_nocflow(args + "--export-lp " + (slash / "m.lp").string() +
                                        " --out " + slash.string() + "/");
  ASSERT_EQ(into_slash.exit_code, 0) << into_slash.output;
  EXPECT_TRUE(fs::exists(slash / "m.lp"));
}

TEST(OutputErrorsCli, SimulateRefusesASummaryJsonThatIsAFolder) {
  const fs::path out = fresh_dir("output_errors_simulate");
  fs::create_directories(out / "summary.json");
  expect_refused(run_nocflow("simulate " + kHw2x2 + "--network " + kTwoConv + " --quiet --out " +
                             out.string()),
                 (out / "summary.json").string() + ": cannot write: it is a directory");
}

TEST(OutputErrorsCli, SimulateRefusesATraceFileThatIsAFolderBeforeRunning) {
  // Refused before the simulation (minutes on a big network), which then wrote its other files
  // and ended on the trace.
  const fs::path out = fresh_dir("output_errors_trace");
  fs::create_directories(out / "trace.json");
  const CliRun r = run_nocflow("simulate " + kHw2x2 + "--network " + kTwoConv +
                               " --trace perfetto --out " + out.string());
  expect_refused(r, (out / "trace.json").string() + ": cannot write: it is a directory");
  EXPECT_FALSE(fs::exists(out / "summary.json")) << r.output;
  EXPECT_FALSE(fs::exists(out / "layers.csv")) << r.output;
  // Without --trace a folder of that name is no business of the run's.
  EXPECT_EQ(
      run_nocflow("simulate " + kHw2x2 + "--network " + kTwoConv + " --quiet --out " + out.string())
          .exit_code,
      0);
  // The same for the VCD.
  const fs::path vcd = fresh_dir("output_errors_vcd");
  fs::create_directories(vcd / "trace.vcd");
  const CliRun v =
      run_nocflow("simulate " + kHw2x2 + "--network " + kTwoConv + " --vcd --out " + vcd.string());
  expect_refused(v, (vcd / "trace.vcd").string() + ": cannot write: it is a directory");
  EXPECT_FALSE(fs::exists(vcd / "summary.json")) << v.output;
}

// Files an earlier run left that this one does not write are removed first, but for this run's
// inputs; a run that fails late leaves only its config.
TEST(OutputErrorsCli, AnOutputFolderHoldsOneRun) {
  const fs::path out = fresh_dir("output_one_run");
  const std::string dir = " --out " + out.string();
  ASSERT_EQ(
      run_nocflow("optimize " + kHw2x2 + "--network " + kTwoConv + " --compare" + dir).exit_code,
      0);
  ASSERT_TRUE(fs::exists(out / "compare.csv"));
  ASSERT_EQ(run_nocflow("optimize " + kHw2x2 + "--network " + kTwoConv + dir).exit_code, 0);
  EXPECT_FALSE(fs::exists(out / "compare.csv"));
  // The plan is read from the folder it is replayed into: kept as it was, with the user's
  // comment, though a barrier replay's plan would record its mode.
  { std::ofstream(out / "plan.yaml", std::ios::app) << "# my notes\n"; }
  const std::string plan = read_file(out / "plan.yaml");
  const CliRun replay = run_nocflow("simulate " + kHw2x2 + "--network " + kTwoConv + " --plan " +
                                    (out / "plan.yaml").string() + " --mode barrier --quiet" + dir);
  ASSERT_EQ(replay.exit_code, 0) << replay.output;
  EXPECT_TRUE(fs::exists(out / "layers.csv"));
  EXPECT_EQ(read_file(out / "plan.yaml"), plan);
  EXPECT_NE(replay.output.find("wrote " + out.string() + "/{summary.json, plan.dot,"),
            std::string::npos) << replay.output;
}

// Every command removes what any of them left in the folder, not only its own files: an
// optimize run into a simulate folder used to leave the replay's CSVs and trace beside its plan.
TEST(OutputErrorsCli, ARunRemovesTheFilesOfAnEarlierRunOfAnotherCommand) {
  const fs::path out = fresh_dir("output_other_command");
  const std::string dir = " --out " + out.string();
  const std::string sim = "simulate " + kHw2x2 + "--network " + kTwoConv + " --quiet";
  ASSERT_EQ(run_nocflow(sim + " --trace perfetto" + dir).exit_code, 0);
  const char* const replay_only[] = {"layers.csv", "transfers.csv", "links.csv", "memory.csv",
                                     "trace.json"};
  for (const char* f : replay_only) ASSERT_TRUE(fs::exists(out / f)) << f;
  ASSERT_EQ(run_nocflow("optimize " + kHw2x2 + "--network " + kTwoConv + dir).exit_code, 0);
  for (const char* f : replay_only) EXPECT_FALSE(fs::exists(out / f)) << f;
  EXPECT_TRUE(fs::exists(out / "plan.yaml") && fs::exists(out / "summary.json"));
  ASSERT_EQ(run_nocflow("traffic " + kHw2x2 + "--rate 0.05 --cycles 100" + dir).exit_code, 0);
  EXPECT_FALSE(fs::exists(out / "plan.yaml"));
  EXPECT_TRUE(fs::exists(out / "links.csv"));

  // A calibration stays for the runs and plans that read it; a validate run's plans/ goes with
  // its rank.csv, but not while a plan in it is replayed into the folder.
  const fs::path cal = fresh_dir("output_keeps_calibration");
  ASSERT_EQ(run_nocflow("validate --hw " + kSrc + "/configs/hw/mesh4x4.yaml --meshes 2 " +
                        "--crossbar 0 --sizes 4KiB,16KiB --calibrate --quiet --out " + cal.string())
                .exit_code,
            0);
  ASSERT_EQ(run_nocflow("optimize " + kHw2x2 + "--network " + kTwoConv + " --calibration " +
                        (cal / "calibration.yaml").string() + " --out " + cal.string())
                .exit_code,
            0);
  EXPECT_FALSE(fs::exists(cal / "validation.csv"));
  // The plan names the calibration it was priced with; a replay that is not given it keeps it.
  ASSERT_EQ(run_nocflow("simulate " + kHw2x2 + "--network " + kTwoConv + " --quiet --plan " +
                        (cal / "plan.yaml").string() + " --out " + cal.string())
                .exit_code,
            0);
  EXPECT_TRUE(fs::exists(cal / "calibration.yaml"));
  const fs::path rank = fresh_dir("output_validate_folders");
  ASSERT_EQ(run_nocflow("validate " + kHw2x2 + "--rank --network " + kTwoConv +
                        " --k 2 --placements 1 --quiet --out " + rank.string())
                .exit_code,
            0);
  ASSERT_TRUE(fs::exists(rank / "plans" / "plan_0.yaml"));
  const CliRun replay_ranked =
      run_nocflow("simulate " + kHw2x2 + "--network " + kTwoConv + " --quiet --plan " +
                  (rank / "plans" / "plan_0.yaml").string() + " --out " + rank.string());
  ASSERT_EQ(replay_ranked.exit_code, 0) << replay_ranked.output;
  EXPECT_TRUE(fs::exists(rank / "plans" / "plan_0.yaml"));  // read by the run
  EXPECT_FALSE(fs::exists(rank / "rank.csv"));
  ASSERT_EQ(run_nocflow("optimize " + kHw2x2 + "--network " + kTwoConv + " --out " + rank.string())
                .exit_code,
            0);
  EXPECT_FALSE(fs::exists(rank / "plans"));  // validate's, of the run before the one before

  // Programs replayed into the folder they were dumped in, with the run that dumped them: the
  // plan that made them stays, that run's other files go.
  const fs::path dump = fresh_dir("output_programs_folder");
  ASSERT_EQ(run_nocflow(sim + " --dump-programs " + dump.string() + " --out " + dump.string())
                .exit_code,
            0);
  ASSERT_TRUE(fs::exists(dump / "memory.csv"));
  const std::string plan = read_file(dump / "plan.yaml");
  const CliRun replay = run_nocflow("simulate " + kHw2x2 + "--programs " + dump.string() +
                                    " --quiet --out " + dump.string());
  ASSERT_EQ(replay.exit_code, 0) << replay.output;
  EXPECT_EQ(read_file(dump / "plan.yaml"), plan);
  EXPECT_FALSE(fs::exists(dump / "memory.csv"));  // a replay of programs has no memory plan
  EXPECT_TRUE(fs::exists(dump / "summary.json"));
  EXPECT_TRUE(fs::exists(dump / "pe_0.txt") && fs::exists(dump / "names.txt"));  // replayed: kept
  // Another run into the folder: the dump is not its programs, and goes.
  ASSERT_EQ(run_nocflow(sim + " --out " + dump.string()).exit_code, 0);
  EXPECT_FALSE(fs::exists(dump / "pe_0.txt") || fs::exists(dump / "names.txt"));
  EXPECT_TRUE(fs::exists(dump / "plan.yaml"));
}

TEST(OutputErrorsCli, SimulateRefusesAProgramDumpThatIsAFolder) {
  const fs::path dir = fresh_dir("output_errors_dump");
  fs::create_directories(dir / "programs" / "pe_1.txt");
  expect_refused(
      run_nocflow("simulate " + kHw2x2 + "--network " + kTwoConv + " --quiet --dump-programs " +
                  (dir / "programs").string() + " --out " + (dir / "out").string()),
      (dir / "programs" / "pe_1.txt").string() + ": cannot write: it is a directory");
}

// A dump for 4 PEs into a folder holding one for more would leave pe_4.txt ... behind, which a
// replay of the folder then trips over; the same PE count overwrites.
TEST(OutputErrorsCli, SimulateRefusesToDumpProgramsOverADumpForMorePes) {
  const fs::path dir = fresh_dir("output_errors_stale_dump");
  const std::string dump = " --network " + kTwoConv + " --quiet --dump-programs " +
                           (dir / "programs").string() + " --out ";
  ASSERT_EQ(run_nocflow("simulate --hw " + kSrc + "/configs/hw/mesh4x4.yaml" + dump +
                        (dir / "a").string())
                .exit_code,
            0);
  const CliRun fewer = run_nocflow("simulate " + kHw2x2 + dump + (dir / "b").string());
  EXPECT_EQ(fewer.exit_code, 2) << fewer.output;
  EXPECT_NE(fewer.output.find("from an earlier dump, but this run has 4 PEs"), std::string::npos)
      << fewer.output;
  EXPECT_FALSE(fs::exists(dir / "b"));
  for (int pe = 4; pe < 16; ++pe)
    fs::remove(dir / "programs" / ("pe_" + std::to_string(pe) + ".txt"));
  EXPECT_EQ(run_nocflow("simulate " + kHw2x2 + dump + (dir / "b").string()).exit_code, 0);
  EXPECT_EQ(run_nocflow("simulate " + kHw2x2 + dump + (dir / "c").string()).exit_code, 0);
}

TEST(OutputErrorsCli, SimulateRefusesAProgramThatIsAFolder) {
  const fs::path dir = fresh_dir("output_errors_programs");
  const fs::path programs = dir / "programs";
  fs::create_directories(programs / "pe_2.txt");
  for (const char* pe : {"pe_0.txt", "pe_1.txt", "pe_3.txt"}) std::ofstream(programs / pe);
  expect_refused(run_nocflow("simulate " + kHw2x2 + "--programs " + programs.string() +
                             " --quiet --out " + (dir / "out").string()),
                 (programs / "pe_2.txt").string() + ": cannot read: it is a directory");
}

TEST(OutputErrorsCli, SweepRefusesAResultsCsvThatIsAFolderAndKeepsItsRowsForResume) {
  const fs::path dir = fresh_dir("output_errors_sweep");
  const fs::path spec = dir / "spec.yaml";
  std::ofstream(spec) << "hw: " << kSrc << "/configs/hw/mesh4x4.yaml\n"
                      << "axes:\n  mesh: 2x2\n  network: zoo:vgg5\n  solver: greedy\n"
                         "  cost_model: paper\n";
  const fs::path out = dir / "out";
  fs::create_directories(out / "results.csv");
  const std::string sweep = "sweep --spec " + spec.string() + " --quiet --out " + out.string();
  expect_refused(run_nocflow(sweep),
                 (out / "results.csv").string() + ": cannot write: it is a directory");
  // The finished point stays in the partial file: a resume needs not run it again.
  fs::remove(out / "results.csv");
  const CliRun resumed =
      run_nocflow("sweep --spec " + spec.string() + " --resume --out " + out.string());
  EXPECT_EQ(resumed.exit_code, 0) << resumed.output;
  EXPECT_NE(resumed.output.find("1 already done, 0 to run"), std::string::npos) << resumed.output;
  EXPECT_EQ(read_csv_rows(out / "results.csv").size(), 1u);
}

}  // namespace
}  // namespace nocflow::testing
