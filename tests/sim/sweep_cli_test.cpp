// SPDX-License-Identifier: MIT
// `nocflow sweep` runs: points against `nocflow simulate`, SRAM fit, --resume after an
// interruption, and the same sweep under mpirun (spec errors and --list: sweep_spec_cli_test.cpp).
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <vector>

#include "tests/cli_runner.h"
#include "tests/sim/sweep_spec.h"

namespace nocflow::testing {
namespace {

namespace fs = std::filesystem;

/// results.csv without the wall-clock columns, which vary run to run.
std::string deterministic(const fs::path& csv) {
  std::istringstream in(read_file(csv));
  std::string line, out;
  std::vector<bool> keep;
  while (std::getline(in, line)) {
    const auto fields = split_csv(line);
    if (keep.empty())
      for (const auto& f : fields) keep.push_back(f.find("seconds") == std::string::npos);
    for (std::size_t i = 0; i < fields.size(); ++i)
      if (keep.at(i)) out += fields[i] + ",";
    out += "\n";
  }
  return out;
}

// A YAML network whose input leaves its batch open (`batch`) takes a batch axis as a zoo
// network does, and a plan made at one batch says which --batch replays it.
TEST(SweepCli, ANetworkFileThatLeavesItsBatchOpenTakesTheBatchAxis) {
  const fs::path dir = fresh_dir("sweep_open_batch");
  std::ofstream(dir / "net.yaml") << "input: [batch, 3, 16, 16]\nlayers:\n  - {op: conv, out: 8, kernel: 3, pad: 1}\n"
                                     "  - relu\n  - {op: reshape, shape: [0, -1]}\n  - {op: gemm, out: 10}\n";
  const fs::path spec = write_spec(dir, "hw: " + kHw + "\naxes:\n  network: net.yaml\n  batch: [1, 4]\n");
  const CliRun r = run_nocflow("sweep --spec " + spec.string() + " --out " + (dir / "out").string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.find("runs the same"), std::string::npos) << r.output;
  const auto rows = read_csv_rows(dir / "out/results.csv");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[1].at("status"), "ok") << rows[1].at("message");
  const std::string simulate = "simulate --hw " + kHw + " --network " + (dir / "net.yaml").string() + " --quiet ";
  const CliRun four = run_nocflow(simulate + "--batch 4 --out " + (dir / "b4").string());
  ASSERT_EQ(four.exit_code, 0) << four.output;
  EXPECT_EQ(rows[1].at("total_cycles"),
            std::to_string(nlohmann::json::parse(read_file(dir / "b4/summary.json"))["total_cycles"].get<long long>()));
  EXPECT_GT(std::stoll(rows[1].at("total_cycles")), std::stoll(rows[0].at("total_cycles")));
  const CliRun replay = run_nocflow(simulate + "--plan " + (dir / "b4/plan.yaml").string() + " --out " +
                                    (dir / "replay").string());
  EXPECT_EQ(replay.exit_code, 2) << replay.output;
  EXPECT_NE(replay.output.find("(the plan was made for batch 4, this network has batch 1: add --batch 4)"),
            std::string::npos)
      << replay.output;
}

// A point whose network does not fit a PE's SRAM says what the whole network needs, in the
// progress line and in results.csv.
TEST(SweepCli, AnInfeasiblePointSaysTheSramTheWholeNetworkNeeds) {
  const fs::path dir = fresh_dir("sweep_sram_need");
  const fs::path spec = write_spec(dir, "hw: " + kHw + "\naxes:\n  network: zoo:gpt2_block\n");
  const CliRun r = run_nocflow("sweep --spec " + spec.string() + " --out " + (dir / "out").string());
  EXPECT_EQ(r.exit_code, 0) << r.output;
  // attn.masked on 16 PEs: 12 x 1024 x 1024 scores of 2 bytes in and out, and the 1024 x 1024
  // causal mask's rows (OptimizeCli.ASramRefusalGivesWhatTheWholeNetworkNeedsSoOneRaiseIsEnough)
  const std::int64_t need = (2 * (12 * 1024 * 1024 * 2) + 1024 * 1024 * 2) / 16;
  const std::string needs = "the limit (pe.sram_bytes) is 1048576 bytes; the network needs at least " +
                            std::to_string(need) +
                            " bytes per PE (layer 'attn.masked'); raise pe.sram_bytes or use more PEs";
  EXPECT_NE(r.output.find("network=zoo:gpt2_block: infeasible: layer 'attn.scores' does not fit"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find(needs), std::string::npos) << r.output;
  EXPECT_NE(read_file(dir / "out" / "results.csv").find(needs), std::string::npos);
}

// Every layer fits 64 KiB alone but the data live across them does not: the point runs, as
// `simulate` does, and its row and progress line say so; at 1 MiB it fits.
TEST(SweepCli, APointThatPassesItsSramRunsAndSaysSo) {
  const fs::path dir = fresh_dir("sweep_sram_pass");
  const fs::path spec =
      write_spec(dir, "hw: " + kHw + "\naxes:\n  network: zoo:vgg5\n  pe.sram_bytes: [64KiB, 1MiB]\n");
  const CliRun r = run_nocflow("sweep --spec " + spec.string() + " --out " + (dir / "out").string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto rows = read_csv_rows(dir / "out/results.csv");
  ASSERT_EQ(rows.size(), 2u);
  const CliRun s = run_nocflow("simulate --hw " + kHw + " --set pe.sram_bytes=64KiB --network zoo:vgg5 --quiet --out " +
                               (dir / "sim").string());
  ASSERT_EQ(s.exit_code, 0) << s.output;
  const auto plan = nlohmann::json::parse(read_file(dir / "sim/summary.json")).at("memory_plan");
  const auto peak = plan.at("peak_bytes").get<std::int64_t>();
  EXPECT_GT(peak, 65536);
  EXPECT_EQ(rows[0].at("status"), "ok");
  EXPECT_EQ(rows[0].at("memory_plan_bytes"), std::to_string(peak));
  EXPECT_EQ(rows[0].at("fits_sram"), "false");
  const std::string note = "needs " + std::to_string(peak) +
                           " bytes, more than a PE's SRAM (pe.sram_bytes 65536): data of several layers "
                           "is live at once; the cycles assume it fits";
  EXPECT_NE(rows[0].at("message").find(note), std::string::npos) << rows[0].at("message");
  EXPECT_NE(s.output.find(note), std::string::npos) << s.output;  // the note simulate prints
  EXPECT_NE(r.output.find("pe.sram_bytes=64KiB: " + rows[0].at("total_cycles") + " cycles"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("; note: the memory plan of PE"), std::string::npos) << r.output;
  EXPECT_EQ(rows[1].at("fits_sram"), "true");
  EXPECT_EQ(rows[1].at("message"), "");
  EXPECT_LE(std::stoll(rows[1].at("memory_plan_bytes")), 1 << 20);
}

/// Four points: two meshes x two solvers, vgg5 under the paper model (fast).
const std::string kSmall = "set: {pe.sram_bytes: 67108864}\naxes:\n  mesh: [2x2, 4x4]\n  network: zoo:vgg5\n"
                           "  solver: [greedy, dp]\n  cost_model: paper\n";

TEST(SweepCli, PointsMatchSimulateAndRunInParallel) {
  const fs::path dir = fresh_dir("sweep_small");
  const fs::path spec = write_spec(dir, "hw: " + kHw + "\n" + kSmall);
  const CliRun r = run_nocflow("sweep --spec " + spec.string() + " --jobs 2 --out " + (dir / "out").string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto rows = read_csv_rows(dir / "out/results.csv");
  ASSERT_EQ(rows.size(), 4u);
  // Point order: first axis slowest.
  EXPECT_EQ(rows[0].at("point"), "mesh=2x2 network=zoo:vgg5 solver=greedy cost_model=paper");
  EXPECT_EQ(rows[3].at("point"), "mesh=4x4 network=zoo:vgg5 solver=dp cost_model=paper");
  EXPECT_EQ(rows[3].at("mesh"), "4x4");
  for (const auto& row : rows) EXPECT_EQ(row.at("status"), "ok") << row.at("point");
  EXPECT_EQ(rows[3].at("pes"), "16");
  // The 4x4 dp point is what `nocflow simulate` gives for the same machine and solver.
  const CliRun s = run_nocflow("simulate --hw " + kHw + " --set pe.sram_bytes=67108864 --network zoo:vgg5 "
                               "--solver dp --cost-model paper --quiet --out " + (dir / "sim").string());
  ASSERT_EQ(s.exit_code, 0) << s.output;
  const auto summary = nlohmann::json::parse(read_file(dir / "sim/summary.json"));
  EXPECT_EQ(summary["batch"], 1);
  EXPECT_TRUE(summary["train"].is_null());  // inference
  EXPECT_EQ(rows[3].at("total_cycles"), std::to_string(summary["total_cycles"].get<long long>()));
  EXPECT_EQ(rows[3].at("communication_cycles"),
            std::to_string(summary["communication_cycles"].get<long long>()));
  EXPECT_NEAR(std::stod(rows[3].at("total_us")), summary["total_seconds"].get<double>() * 1e6,
              1e-3);
  // Greedy is never better than the optimum under the model it optimises.
  EXPECT_GE(std::stod(rows[2].at("predicted_cycles")), std::stod(rows[3].at("predicted_cycles")));

  // Each point's line gives its figures with their units.
  EXPECT_NE(r.output.find(rows[3].at("total_cycles") + " cycles = "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(" cycles, error "), std::string::npos) << r.output;
  // A second run into the same folder is refused: the sweep there is finished.
  const CliRun again = run_nocflow("sweep --spec " + spec.string() + " --out " + (dir / "out").string());
  EXPECT_EQ(again.exit_code, 2) << again.output;
  EXPECT_NE(again.output.find("already holds this sweep, finished (results.csv has all 4 points): give another "
                              "--out to run it again"),
            std::string::npos)
      << again.output;
  const CliRun resumed = run_nocflow("sweep --spec " + spec.string() + " --resume --out " + (dir / "out").string());
  EXPECT_EQ(resumed.exit_code, 0) << resumed.output;
  EXPECT_NE(resumed.output.find("4 already done, 0 to run"), std::string::npos) << resumed.output;
  EXPECT_EQ(resumed.output.find("holds no sweep"), std::string::npos) << resumed.output;
  // --resume into a folder without a sweep (a mistyped --out) says it runs everything; --quiet
  // keeps that note and the wrote line, as it keeps every command's.
  const CliRun fresh =
      run_nocflow("sweep --spec " + spec.string() + " --resume --quiet --jobs 2 --out " + (dir / "typo").string());
  EXPECT_EQ(fresh.exit_code, 0) << fresh.output;
  EXPECT_NE(fresh.output.find("note: --resume: " + (dir / "typo").string() + " holds no sweep; running every point"),
            std::string::npos)
      << fresh.output;
  EXPECT_NE(fresh.output.find("nocflow: wrote " + (dir / "typo").string() + "/results.csv (4 of 4 points)"),
            std::string::npos)
      << fresh.output;
}

TEST(SweepCli, MoreJobsThanTheCoresItMayUseIsNoted) {
  // Confined to one core (as mpirun binds a rank), two jobs share it: said, with the way out.
  const fs::path dir = fresh_dir("sweep_cores");
  const fs::path spec = write_spec(dir, "hw: " + kHw + "\n" + kSmall);
  const CliRun confined =
      run_shell("taskset -c 0 " + std::string(NOCFLOW_BINARY) + " sweep --spec " + spec.string() +
                " --jobs 2 --out " + (dir / "one").string());
  ASSERT_EQ(confined.exit_code, 0) << confined.output;
  const std::string& out = confined.output;
  EXPECT_NE(out.find("note: 2 jobs share 1 core this process may use"), std::string::npos) << out;
  EXPECT_NE(out.find("mpirun --bind-to none"), std::string::npos) << out;
  const CliRun one_job =
      run_nocflow("sweep --spec " + spec.string() + " --out " + (dir / "alone").string());
  ASSERT_EQ(one_job.exit_code, 0) << one_job.output;
  EXPECT_EQ(one_job.output.find("jobs share"), std::string::npos) << one_job.output;
}

TEST(SweepCli, ResumeRunsOnlyTheMissingPoints) {
  const fs::path dir = fresh_dir("sweep_resume");
  const fs::path spec = write_spec(dir, "hw: " + kHw + "\n" + kSmall);
  const CliRun full =
      run_nocflow("sweep --spec " + spec.string() + " --out " + (dir / "full").string());
  ASSERT_EQ(full.exit_code, 0) << full.output;
  // One job runs the 4x4 points first (heaviest first), and results.csv keeps point order.
  EXPECT_NE(full.output.find("[1/4] mesh=4x4 network=zoo:vgg5 solver=greedy"), std::string::npos)
      << full.output;
  EXPECT_NE(full.output.find("[3/4] mesh=2x2 network=zoo:vgg5 solver=greedy"), std::string::npos)
      << full.output;
  // An interrupted run leaves the spec and a partial file with the points finished so far
  // (here two, the second one cut short mid-line as a kill might leave it: past its status, in
  // its cycles, with no line end; lines ended CRLF as an editor on another system would save
  // them).
  fs::create_directories(dir / "cut");
  fs::copy_file(dir / "full/sweep.yaml", dir / "cut/sweep.yaml");
  {
    std::istringstream in(read_file(dir / "full/results.csv"));
    std::string head, a, b;
    std::getline(in, head);
    std::getline(in, a);
    std::getline(in, b);
    ASSERT_NE(b.find(",ok,"), std::string::npos) << b;
    std::ofstream(dir / "cut/results.partial-0.csv") << head << "\r\n"
                                                     << a << "\r\n"
                                                     << b.substr(0, b.find(",ok,") + 6);
  }
  // Without --resume an unfinished sweep is refused, saying how to finish it.
  const CliRun plain = run_nocflow("sweep --spec " + spec.string() + " --out " + (dir / "cut").string());
  EXPECT_EQ(plain.exit_code, 2) << plain.output;
  EXPECT_NE(plain.output.find("already holds a sweep: use --resume to finish it"), std::string::npos) << plain.output;
  const CliRun r = run_nocflow("sweep --spec " + spec.string() + " --resume --out " + (dir / "cut").string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("1 already done, 3 to run"), std::string::npos) << r.output;
  EXPECT_EQ(deterministic(dir / "cut/results.csv"), deterministic(dir / "full/results.csv"));
  EXPECT_FALSE(fs::exists(dir / "cut/results.partial-0.csv"));
  // A comment or a blank line changes nothing; a changed spec cannot resume into the folder.
  std::ofstream(spec, std::ios::app) << "\n# the same points\n";
  const CliRun commented =
      run_nocflow("sweep --spec " + spec.string() + " --resume --out " + (dir / "cut").string());
  EXPECT_EQ(commented.exit_code, 0) << commented.output;
  EXPECT_NE(commented.output.find("4 already done, 0 to run"), std::string::npos)
      << commented.output;
  std::ofstream(spec, std::ios::app) << "  mode: barrier\n";  // another axis
  const CliRun changed = run_nocflow("sweep --spec " + spec.string() + " --resume --out " + (dir / "cut").string());
  EXPECT_EQ(changed.exit_code, 2) << changed.output;
  EXPECT_NE(changed.output.find("differs from"), std::string::npos) << changed.output;
}

// inputs.txt names the build that started the sweep; a resume by another build runs, and says
// so (it did not), keeping the first build's name; a folder from before that line resumes as
// it did.
TEST(SweepCli, AResumeByAnotherBuildIsNoted) {
  const fs::path dir = fresh_dir("sweep_resume_build");
  const fs::path spec =
      write_spec(dir, "hw: " + kHw + "\naxes:\n  network: zoo:vgg5\n  mesh: 2x2\n");
  const std::string run = "sweep --spec " + spec.string() + " --out " + (dir / "out").string();
  ASSERT_EQ(run_nocflow(run).exit_code, 0);
  const CliRun version = run_nocflow("version");
  const std::string inputs = read_file(dir / "out/inputs.txt");
  ASSERT_EQ(inputs.rfind("# " + version.output.substr(0, version.output.find('\n')) + "\n", 0), 0u)
      << inputs;
  const std::string digests = inputs.substr(inputs.find('\n') + 1);
  const CliRun same = run_nocflow(run + " --resume");
  EXPECT_EQ(same.exit_code, 0) << same.output;
  EXPECT_EQ(same.output.find("the sweep started on"), std::string::npos) << same.output;
  std::ofstream(dir / "out/inputs.txt") << "# nocflow 0.1.0 (commit 0123456789ab)\n" << digests;
  const CliRun other = run_nocflow(run + " --resume");
  EXPECT_EQ(other.exit_code, 0) << other.output;
  EXPECT_NE(
      other.output.find("note: --resume: the sweep started on nocflow 0.1.0 (commit 0123456789ab), "
                        "this run is " +
                        version.output.substr(0, version.output.find('\n')) +
                        ": a change between the two may show in the rows of the 1 already done"),
      std::string::npos)
      << other.output;
  EXPECT_EQ(read_file(dir / "out/inputs.txt"), "# nocflow 0.1.0 (commit 0123456789ab)\n" + digests);
  std::ofstream(dir / "out/inputs.txt") << digests;  // as written before session 79
  const CliRun old = run_nocflow(run + " --resume");
  EXPECT_EQ(old.exit_code, 0) << old.output;
  EXPECT_EQ(old.output.find("the sweep started on"), std::string::npos) << old.output;
  EXPECT_EQ(read_file(dir / "out/inputs.txt"), digests)
      << "a build that did not start it is not named";
}

TEST(SweepCli, ResumeRefusesAConfigOrNetworkFileThatChanged) {
  // The rows already in the folder were run on the old files: resuming would mix two machines.
  const fs::path dir = fresh_dir("sweep_resume_inputs");
  const std::string hw = read_file(kHw);
  const std::string net = read_file(std::string(NOCFLOW_SOURCE_DIR) + "/configs/networks/vgg5.yaml");
  std::ofstream(dir / "hw.yaml") << hw;
  std::ofstream(dir / "net.yaml") << net;
  const fs::path spec = write_spec(dir, "hw: hw.yaml\naxes:\n  network: net.yaml\n  mesh: 2x2\n");
  const std::string resume = "sweep --spec " + spec.string() + " --resume --out " + (dir / "out").string();
  ASSERT_EQ(run_nocflow("sweep --spec " + spec.string() + " --out " + (dir / "out").string()).exit_code, 0);
  const CliRun same = run_nocflow(resume);
  EXPECT_EQ(same.exit_code, 0) << same.output;
  EXPECT_NE(same.output.find("1 already done, 0 to run"), std::string::npos) << same.output;
  // The same files by another path to the spec (another working folder): nothing changed.
  const CliRun other_path = run_nocflow("sweep --spec " + (dir / ".." / dir.filename() / "spec.yaml").string() +
                                        " --resume --out " + (dir / "out").string());
  EXPECT_EQ(other_path.exit_code, 0) << other_path.output;
  // Another command's run into the sweep's folder is refused: its config.resolved.yaml, of
  // another machine, would make the resume refuse an unchanged config.
  const std::string sweeps_config = read_file(dir / "out/config.resolved.yaml");
  for (const std::string& other : {"simulate --hw " + kHw + " --network zoo:vgg5 --quiet --out ",
                                   "config --check " + (dir / "hw.yaml").string() + " --out "}) {
    const CliRun into = run_nocflow(other + (dir / "out").string());
    EXPECT_EQ(into.exit_code, 2) << into.output;
    EXPECT_NE(into.output.find((dir / "out").string() + " holds a sweep (sweep.yaml, results.csv): this run "
                               "would mix with it and break its --resume; give another --out"),
              std::string::npos)
        << into.output;
  }
  EXPECT_EQ(read_file(dir / "out/config.resolved.yaml"), sweeps_config);
  EXPECT_FALSE(fs::exists(dir / "out/summary.json"));
  EXPECT_EQ(run_nocflow(resume).exit_code, 0);

  const std::size_t at = hw.find("macs_per_cycle: 256");
  ASSERT_NE(at, std::string::npos);
  std::ofstream(dir / "hw.yaml") << hw.substr(0, at) << "macs_per_cycle: 128" << hw.substr(at + 19);
  const CliRun config = run_nocflow(resume);
  EXPECT_EQ(config.exit_code, 2) << config.output;
  EXPECT_NE(config.output.find("resolves to another machine than"), std::string::npos) << config.output;
  EXPECT_NE(config.output.find("'  macs_per_cycle: 256  # MACs/cycle' then, '  macs_per_cycle: 128  # "
                               "MACs/cycle' now"),
            std::string::npos)
      << config.output;

  std::ofstream(dir / "hw.yaml") << hw;
  std::ofstream(dir / "net.yaml", std::ios::app) << "# edited\n";
  const CliRun network = run_nocflow(resume);
  EXPECT_EQ(network.exit_code, 2) << network.output;
  EXPECT_NE(network.output.find("a network file changed since the sweep started"), std::string::npos)
      << network.output;
  EXPECT_NE(network.output.find("net.yaml"), std::string::npos) << network.output;
  // The line it names is the file's line of that text (it was one short, the build line left
  // out of the count).
  const std::smatch named = [&] {
    std::smatch m;
    std::regex_search(network.output, m, std::regex("inputs.txt, line (\\d+): '([^']*)' then"));
    return m;
  }();
  ASSERT_EQ(named.size(), 3u) << network.output;
  std::istringstream inputs(read_file(dir / "out/inputs.txt"));
  std::string line;
  for (int i = std::stoi(named[1]); i > 0; --i) std::getline(inputs, line);
  EXPECT_EQ(line, named[2].str());
}

TEST(SweepCli, MpiRanksClaimPointsAsTheyFreeAJobAndGatherOneResult) {
  const fs::path dir = fresh_dir("sweep_mpi");
  // One point takes seconds, three take a fraction of one: the rank that claims the heavy
  // point runs it alone while the other claims the three (dealt in turn, each would run two).
  const fs::path spec = write_spec(dir, "hw: " + kHw +
                                            "\nset: {pe.sram_bytes: 67108864}\naxes:\n"
                                            "  mesh: [12x12, 1x2, 2x1, 2x2]\n  network: zoo:vgg5\n"
                                            "  solver: greedy\n  cost_model: paper\n");
  ASSERT_EQ(run_nocflow("sweep --spec " + spec.string() + " --jobs 2 --out " + (dir / "local").string()).exit_code, 0);
  // Root may run mpirun only when it says so; two ranks on however many cores there are. Open
  // MPI's own allocations outlive MPI_Finalize, which LeakSanitizer (asan preset) would report.
  const CliRun mpi = run_shell(
      "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 ASAN_OPTIONS=detect_leaks=0 " +
      std::string(NOCFLOW_MPIEXEC) + " --oversubscribe -np 2 " + NOCFLOW_BINARY + " sweep --spec " +
      spec.string() + " --out " + (dir / "mpi").string());
  ASSERT_EQ(mpi.exit_code, 0) << mpi.output;
  const std::string& out = mpi.output;
  EXPECT_NE(out.find("4 to run among 2 ranks"), std::string::npos) << out;
  EXPECT_NE(out.find("   [1 done here] mesh=12x12"), std::string::npos) << out;
  EXPECT_NE(out.find("   [3 done here] mesh="), std::string::npos) << out;
  EXPECT_EQ(out.find("   [2 done here] mesh=12x12"), std::string::npos) << out;
  EXPECT_EQ(deterministic(dir / "mpi/results.csv"), deterministic(dir / "local/results.csv"));
}

// Every rank reads the spec before MPI starts; rank 0 alone reports what is wrong with it (each
// rank printed it).
TEST(SweepCli, UnderMpiABadSpecIsReportedOnce) {
  const fs::path dir = fresh_dir("sweep_mpi_bad");
  const fs::path spec = write_spec(dir, "axes:\n  network: zoo:vgg5\n");
  const CliRun mpi = run_shell(
      "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 ASAN_OPTIONS=detect_leaks=0 " +
      std::string(NOCFLOW_MPIEXEC) + " --oversubscribe -np 2 " + NOCFLOW_BINARY + " sweep --spec " +
      spec.string() + " --out " + (dir / "out").string());
  EXPECT_NE(mpi.exit_code, 0) << mpi.output;
  const std::string error = "missing key 'hw'";
  const std::size_t first = mpi.output.find(error);
  ASSERT_NE(first, std::string::npos) << mpi.output;
  EXPECT_EQ(mpi.output.find(error, first + 1), std::string::npos) << mpi.output;
}

}  // namespace
}  // namespace nocflow::testing
