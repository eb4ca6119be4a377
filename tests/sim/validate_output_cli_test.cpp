// SPDX-License-Identifier: MIT
// `nocflow validate`'s output folder: what an interrupted run leaves in it, that a run into a
// folder of an earlier run leaves none of that run's files, and that its figures keep their digits.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>

#include "tests/cli_runner.h"
#include "tests/sim/validate_runner.h"

namespace nocflow::testing {
namespace {

namespace fs = std::filesystem;

// validation.csv's cycle columns read back as the console's figures: 6 significant digits wrote
// linkload's 1,572,875 cycles (a 64 MiB LOCAL move on 2x2) as 1.57288e+06.
TEST(ValidateCli, ValidationCsvKeepsEveryDigit) {
  const Validation v =
      validate("validate_digits", "--meshes 2 --sizes 64MiB --crossbar 0 --types LOCAL");
  ASSERT_EQ(v.run.exit_code, 0) << v.run.output;
  ASSERT_EQ(v.rows.size(), 1u);
  const auto& row = v.rows.front();
  const std::int64_t simulated = std::stoll(row.at("simulated_cycles"));
  ASSERT_GT(simulated, 1000000);
  for (const char* column :
       {"linkload_cycles", "linkload_fitted_cycles", "round_robin_cycles", "paper_cycles"}) {
    EXPECT_EQ(row.at(column).find('e'), std::string::npos) << column << " " << row.at(column);
    const double cycles = std::stod(row.at(column));
    // The error column is computed from the exact figure: it recomputes from the written one.
    const std::string error =
        std::string(column).replace(std::string(column).find("cycles"), 6, "error");
    EXPECT_DOUBLE_EQ(std::stod(row.at(error)), (cycles - simulated) / simulated) << column;
  }
}

TEST(ValidateCli, AnInterruptedRunKeepsTheRowsOfTheMachinesItFinished) {
  // A machine's rows are written once all its cases have run (its router contention is fitted
  // on them); stopped during the next machine (SIGTERM: a shell's background job ignores
  // SIGINT, and so does nocflow then), it keeps them and says what is there.
  const fs::path dir = fresh_dir("validate_interrupted"), out = dir / "out";
  const std::string script =
      std::string(NOCFLOW_BINARY) + " validate " + kHw +
      " --meshes 2,16 --crossbar 0 --types SCATTER --sizes 1KiB,4MiB --quiet --out " + out.string() +
      " > " + (dir / "said.txt").string() + " 2>&1 & pid=$!; i=0; "
      "while [ \"$({ wc -l < " + (out / "validation.csv").string() + "; } 2>/dev/null || echo 0)\" -lt 3 ] "
      "&& [ $i -lt 1200 ]; do sleep 0.05; i=$((i + 1)); done; kill -TERM $pid; wait $pid; echo $?";
  FILE* shell = popen(script.c_str(), "r");
  char status[16] = {};
  ASSERT_NE(std::fgets(status, sizeof status, shell), nullptr);
  pclose(shell);
  EXPECT_EQ(std::string(status), "143\n");  // ended by SIGTERM
  const auto rows = read_csv_rows(out / "validation.csv");
  ASSERT_EQ(rows.size(), 2u);
  for (const auto& row : rows) EXPECT_EQ(row.at("topology"), "mesh 2x2");
  EXPECT_FALSE(fs::exists(out / "summary.csv"));
  const std::string said = read_file(dir / "said.txt");
  EXPECT_NE(said.find("nocflow validate: interrupted after "), std::string::npos) << said;
  EXPECT_NE(said.find(" of 4 cases; " + out.string() +
                      "/validation.csv holds the 2 cases of mesh 2x2, and summary.csv is not written"),
            std::string::npos)
      << said;
}

TEST(ValidateCli, ARunLeavesNothingAnEarlierRunIntoItsFolderWroteAndItDoesNot) {
  // An earlier run's calibration, dumped messages or ranked plans would read as this run's.
  const fs::path dir = fresh_dir("validate_rerun"), out = dir / "out";
  auto run = [&](const std::string& args) {
    const CliRun r = run_nocflow("validate " + kHw + " " + args + " --quiet --out " + out.string());
    EXPECT_EQ(r.exit_code, 0) << args << "\n" << r.output;
  };
  auto holds = [&](std::initializer_list<const char*> names) {
    std::vector<std::string> files;
    for (const auto& entry : fs::directory_iterator(out)) files.push_back(entry.path().filename());
    std::sort(files.begin(), files.end());
    return files == std::vector<std::string>(names.begin(), names.end());
  };
  const std::string cases = "--meshes 2 --crossbar 0 --sizes 4KiB,16KiB --types ALL_GATHER,HALO ";
  run(cases + "--calibrate --dump-messages");
  EXPECT_TRUE(holds({"calibration.yaml", "config.resolved.yaml", "messages", "summary.csv",
                     "validation.csv"}));
  // Figures plot_validation.py drew of the earlier run would describe it beside this run's rows.
  std::ofstream(out / "validation_error_vs_size.png") << "figure";
  run("--meshes 2 --crossbar 0 --sizes 4KiB --types ALL_GATHER");
  EXPECT_TRUE(holds({"config.resolved.yaml", "summary.csv", "validation.csv"}));
  run("--rank --network zoo:vgg5 --k 2 --placements 1");
  EXPECT_TRUE(holds({"config.resolved.yaml", "plans", "rank.csv", "rank_placements.csv",
                     "rank_summary.csv"}));
  const auto plans = [&] {
    return std::distance(fs::directory_iterator(out / "plans"), fs::directory_iterator());
  };
  const auto two_best = plans();
  run("--rank --network zoo:vgg5 --k 1 --placements 1");
  EXPECT_LT(plans(), two_best);  // the ids of the k = 2 run's other plans are gone
  run(cases + "--dump-messages");
  EXPECT_TRUE(holds({"config.resolved.yaml", "messages", "summary.csv", "validation.csv"}));
  // A calibration this run reads stays, though a rank run would otherwise clear it (fitted
  // on the 4x4 mesh the ranking runs on).
  run("--meshes 4 --crossbar 0 --sizes 4KiB,16KiB --types ALL_GATHER,HALO --calibrate");
  run("--rank --network zoo:vgg5 --k 1 --placements 1 --calibration " +
      (out / "calibration.yaml").string());
  EXPECT_TRUE(holds({"calibration.yaml", "config.resolved.yaml", "plans", "rank.csv",
                     "rank_placements.csv", "rank_summary.csv"}));
  // A folder that holds no validate run keeps what it holds.
  const fs::path other = dir / "other";
  fs::create_directories(other / "plans");
  std::ofstream(other / "plans" / "mine.yaml") << "x: 1\n";
  const CliRun r = run_nocflow("validate " + kHw + " " + cases + "--quiet --out " + other.string());
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(fs::exists(other / "plans" / "mine.yaml"));
}

}  // namespace
}  // namespace nocflow::testing
