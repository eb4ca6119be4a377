// SPDX-License-Identifier: MIT
// `nocflow sweep` specs: errors (exit 2, file:line:col, nothing written), bad options and output
// folders, and what `--list` notes about points that run the same.
#include <gtest/gtest.h>

#include <string>

#include "tests/cli_runner.h"
#include "tests/sim/sweep_spec.h"

namespace nocflow::testing {
namespace {

namespace fs = std::filesystem;

struct BadSpec {
  const char* name;
  const char* body;   ///< after "hw: <mesh4x4>\n"
  const char* place;  ///< expected "spec.yaml:L:C"
  const char* message;
};

void PrintTo(const BadSpec& c, std::ostream* os) { *os << c.name; }

class BadSpecTest : public ::testing::TestWithParam<BadSpec> {};

TEST_P(BadSpecTest, ExitsTwoNamingThePlaceAndWritesNothing) {
  const BadSpec& c = GetParam();
  const fs::path dir = fresh_dir(std::string("sweep_bad_") + c.name);
  const fs::path spec = write_spec(dir, "hw: " + kHw + "\n" + c.body);
  const CliRun r = run_nocflow("sweep --spec " + spec.string() + " --out " + (dir / "out").string());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find(std::string("spec.yaml:") + c.place), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(c.message), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(dir / "out"));
}

INSTANTIATE_TEST_SUITE_P(
    Sweep, BadSpecTest,
    ::testing::Values(
        BadSpec{"unknown_axis", "axes:\n  network: zoo:vgg5\n  meshes: [2, 4]\n", "4:3",
                "unknown axis 'meshes'; did you mean 'mesh'?"},
        BadSpec{"empty_axis", "axes:\n  network: zoo:vgg5\n  mesh: []\n", "4:9",
                "axis 'mesh' is empty"},
        BadSpec{"bad_mesh", "axes:\n  network: zoo:vgg5\n  mesh: [2x2, 4y4]\n", "4:15",
                "'4y4' is not a mesh shape"},
        BadSpec{"mesh_side_zero", "axes:\n  network: zoo:vgg5\n  mesh: [2, 0x4]\n", "4:13",
                "mesh side 0 is outside 1 .. 64"},
        BadSpec{"mesh_too_big", "axes:\n  network: zoo:vgg5\n  mesh: [128]\n", "4:10",
                "outside 1 .. 64"},
        BadSpec{"unknown_solver", "axes:\n  network: zoo:vgg5\n  solver: [greedy, dpp]\n", "4:20",
                "unknown solver 'dpp'; did you mean 'dp'?"},
        BadSpec{"unknown_zoo", "axes:\n  network: [zoo:resnet51]\n", "3:13",
                "unknown zoo network 'resnet51'"},
        BadSpec{"missing_network_file", "axes:\n  network: [nets/none.yaml]\n", "3:13",
                "does not exist"},
        BadSpec{"bad_batch", "axes:\n  network: zoo:vgg5\n  batch: [1, two]\n", "4:14",
                "batch 'two' is not an integer"},
        BadSpec{"batch_leading_zero", "axes:\n  network: zoo:vgg5\n  batch: [1, 010]\n", "4:14",
                "batch '010' is not an integer (no leading zero: it would read as octal)"},
        BadSpec{"config_key_range", "axes:\n  network: zoo:vgg5\n  router.vcs: [2, 0]\n", "4:19",
                "router.vcs"},
        BadSpec{"unknown_config_key", "axes:\n  network: zoo:vgg5\n  router.vcz: [2]\n", "4:16",
                "router.vcz"},
        BadSpec{"bad_placement", "axes:\n  network: zoo:vgg5\n  placement: [snake, rows]\n", "4:22",
                "unknown placement 'rows'"},
        BadSpec{"batch_of_a_file",
                "axes:\n  network: [" NOCFLOW_SOURCE_DIR
                "/configs/networks/vgg5.yaml]\n  batch: [1, 2]\n",
                " point network=", "only zoo networks take a batch size"},
        BadSpec{"other_batch_of_a_file",
                "axes:\n  network: [" NOCFLOW_SOURCE_DIR
                "/configs/networks/vgg5.yaml]\n  batch: [2]\n",
                " point network=", "vgg5.yaml: batch 2: input 'input' has shape [1,3,32,32]"},
        BadSpec{"unknown_pass",
                "axes:\n  network: zoo:vgg5\n  passes: [default, dce, \"cse,dec\"]\n", "4:26",
                "unknown pass 'dec'; did you mean 'dce'?"},
        // 10^6 x 2 points (every value valid): refused before anything is built.
        BadSpec{"too_many_points",
                "axes:\n  network: zoo:vgg5\n  link.latency: [1, 2]\n  router.vcs: [1, 2, 3, 4, 5, "
                "6, 7, 8, 9, 10]\n"
                "  router.buffer_depth: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\n"
                "  ni.channels: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\n"
                "  router.vc_alloc_delay: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\n"
                "  router.sw_alloc_delay: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\n"
                "  router.st_delay: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\n",
                "3:3", "more than 1000000 points"},
        BadSpec{"topology_key_beside_mesh",
                "axes:\n  network: zoo:vgg5\n  mesh: [2x2]\n  topology.rows: [3]\n", "5:3",
                "axis 'topology.rows' beside a mesh or topology axis"},
        BadSpec{"topology_set_beside_mesh",
                "set:\n  topology.rows: 2\naxes:\n  network: zoo:vgg5\n  mesh: [4x4]\n", "3:3",
                "set: 'topology.rows' beside a mesh or topology axis"},
        BadSpec{"axis_also_set",
                "set:\n  router.vcs: 2\naxes:\n  network: zoo:vgg5\n  router.vcs: [2, 4]\n", "6:3",
                "axis 'router.vcs' is also in set: (line 3): use one or the other"},
        BadSpec{"no_network_axis", "axes:\n  mesh: [2, 4]\n", "3:3",
                "no network: add an axis 'network'"},
        BadSpec{"bad_train", "axes:\n  network: zoo:vgg5\n  train: [none, sdg]\n", "4:17",
                "unknown train 'sdg'; did you mean 'sgd'?"},
        BadSpec{"duplicate_value", "axes:\n  network: zoo:vgg5\n  solver: [dp, dp]\n", "4:16",
                "'dp' appears twice"},
        // Spelt apart, the same setting: the sweep would run the same points twice.
        BadSpec{"same_size_twice",
                "axes:\n  network: zoo:vgg5\n  pe.sram_bytes: [\"1 MiB\", 1048576]\n", "4:28",
                "value '1048576' means the same as '1 MiB'"},
        BadSpec{"same_mesh_twice", "axes:\n  network: zoo:vgg5\n  mesh: [4, 2x2, 4x4]\n", "4:18",
                "value '4x4' means the same as '4'"},
        BadSpec{"unknown_key", "axis:\n  network: zoo:vgg5\n", "2:1",
                "unknown key 'axis'; did you mean 'axes'?"},
        BadSpec{"axes_not_map", "axes: [mesh]\n", "2:7", "axes: expected a map"},
        BadSpec{"no_axis", "axes: {}\n", "2:7", "axes: no axis (at least network"},
        // A key without a value: at the key (its null value's mark is past it).
        BadSpec{"axis_without_value", "axes:\n  network: zoo:vgg5\n  solver:\n", "4:3",
                "axis 'solver' has no value"},
        BadSpec{"empty_set", "set:\naxes:\n  network: zoo:vgg5\n", "2:1",
                "set: expected a map of config keys to values"},
        BadSpec{"bad_set", "set: {link.width_bytes: 0}\naxes:\n  network: zoo:vgg5\n", "2:7",
                "set: link.width_bytes: value 0 is out of range"},
        BadSpec{"bad_config_value", "axes:\n  network: zoo:vgg5\n  router.vcs: [2, 0]\n", "4:19",
                "spec.yaml:4:19: router.vcs: value 0 is out of range"},

        // Exists, but is no network (the spec itself): a bad value, not an infeasible point.
        BadSpec{"network_file_not_a_network", "axes:\n  network: [spec.yaml]\n", "3:13",
                "spec.yaml:1:1: hw: unknown key"}),
    [](const auto& info) { return std::string(info.param.name); });

// A batch axis beside zoo networks and files: a file takes its own batch, as `--batch` does.
TEST(SweepCli, ANetworkFileTakesItsOwnBatchFromABatchAxis) {
  const fs::path dir = fresh_dir("sweep_file_batch");
  const fs::path spec = write_spec(dir, "hw: " + kHw +
                                            "\naxes:\n  network: [zoo:vgg5, " NOCFLOW_SOURCE_DIR
                                            "/configs/networks/vgg5.yaml]\n  batch: [1]\n");
  const CliRun r = run_nocflow("sweep --spec " + spec.string() + " --list");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("vgg5.yaml batch=1"), std::string::npos) << r.output;
}

// A value with a space (as --set takes "1 MiB") is quoted in the point's key, which then still
// splits on spaces into axis=value pairs.
TEST(SweepCli, APointKeyQuotesAValueWithASpace) {
  const fs::path dir = fresh_dir("sweep_spaced_value");
  const fs::path spec = write_spec(
      dir, "hw: " + kHw + "\naxes:\n  network: zoo:vgg5\n  pe.sram_bytes: [\"1 MiB\", 4MiB]\n");
  const CliRun r = run_nocflow("sweep --spec " + spec.string() + " --list");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("network=zoo:vgg5 pe.sram_bytes=\"1 MiB\""), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("network=zoo:vgg5 pe.sram_bytes=4MiB "), std::string::npos) << r.output;
}

// Meshes against a crossbar of as many nodes: the crossbar's points of two mesh shapes run the
// same, which the sweep says, and runs (the user may want both rows beside their meshes).
TEST(SweepCli, PointsThatRunTheSameAreNoted) {
  const fs::path dir = fresh_dir("sweep_same_run");
  const fs::path spec = write_spec(dir, "hw: " + kHw +
                                            "\naxes:\n  network: zoo:vgg5\n  topology: [mesh, "
                                            "crossbar]\n  mesh: [4x4, 2x8]\n");
  const CliRun r = run_nocflow("sweep --spec " + spec.string() + " --list");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("note: point 3 (network=zoo:vgg5 topology=crossbar mesh=2x8) runs the "
                          "same as point 2 (network=zoo:vgg5 topology=crossbar mesh=4x4)"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("note: point 1"), std::string::npos) << r.output;  // meshes differ
  EXPECT_NE(r.output.find("4 points"), std::string::npos) << r.output;
}

// What a point cannot change runs the same too: a network file keeps its own element size,
// and a crossbar has no rows for placement search to use.
TEST(SweepCli, SettingsAPointIgnoresAreNoted) {
  const fs::path dir = fresh_dir("sweep_ignored");
  const fs::path spec = write_spec(
      dir, "hw: " + std::string(NOCFLOW_SOURCE_DIR) + "/configs/hw/crossbar16.yaml" +
               "\naxes:\n  network: [zoo:vgg5, " NOCFLOW_SOURCE_DIR
               "/configs/networks/vgg5.yaml]\n  data.width_bytes: [1, 4]\n"
               "  placement: [snake, search]\n");
  const CliRun r = run_nocflow("sweep --spec " + spec.string() + " --list");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("note: point 1 (network=zoo:vgg5 data.width_bytes=1 placement=search) "
                          "runs the same as point 0"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("note: point 2 "), std::string::npos) << r.output;  // a zoo network's width counts
  EXPECT_NE(r.output.find("data.width_bytes=4 placement=snake) runs the same as point 4 "),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("vgg5.yaml: the network's inputs have 4-byte elements (from its file), "
                          "not data.width_bytes 1"),
            std::string::npos)
      << r.output;
}

// An ONNX model whose floats take data.width_bytes (data.onnx_floats: width) runs apart at each
// width, and without the note; keeping its file's sizes, its widths run the same.
TEST(SweepCli, AnOnnxModelsWidthsRunApartOnlyWhenItsFloatsTakeThem) {
  const fs::path dir = fresh_dir("sweep_onnx_floats");
  for (const std::string floats : {"width", "file"}) {
    const fs::path spec = write_spec(
        dir, "hw: " + kHw + "\naxes:\n  network: [" NOCFLOW_SOURCE_DIR
                            "/tests/optimizer/data/tiny_unet.onnx]\n  data.width_bytes: [2, 4]\n"
                            "set:\n  data.onnx_floats: " + floats + "\n");
    const CliRun r = run_nocflow("sweep --spec " + spec.string() + " --list");
    EXPECT_EQ(r.exit_code, 0) << r.output;
    const bool same = r.output.find("runs the same as point 0") != std::string::npos;
    const bool noted = r.output.find("(from its file)") != std::string::npos;
    EXPECT_EQ(same, floats == "file") << r.output;
    EXPECT_EQ(noted, floats == "file") << r.output;
  }
}

TEST(SweepCli, JobsOutsideOneTo256AreRefused) {
  const fs::path dir = fresh_dir("sweep_bad_jobs");
  const fs::path spec = write_spec(dir, "hw: " + kHw + "\naxes:\n  network: zoo:vgg5\n");
  for (const auto& [jobs, message] :
       {std::pair{"0", "--jobs: must be at least 1, got 0"},
        std::pair{"100000", "--jobs: must be at most 256, got 100000"},
        // --list runs nothing: a job count (or --resume, or --out) beside it was ignored.
        std::pair{"2 --list", "excludes --list"}}) {
    const CliRun r = run_nocflow("sweep --spec " + spec.string() + " --jobs " + jobs + " --out " +
                                 (dir / "out").string());
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find(message), std::string::npos) << r.output;
  }
  const CliRun r = run_nocflow("sweep --spec " + spec.string() + " --list --out " +
                               (dir / "out").string());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--out excludes --list"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(dir / "out"));
}

TEST(SweepCli, AnOutputFolderThatCannotBeCreatedIsBadInput) {
  const fs::path dir = fresh_dir("sweep_bad_out");
  const fs::path spec = write_spec(dir, "hw: " + kHw + "\naxes:\n  network: zoo:vgg5\n");
  const CliRun r = run_nocflow("sweep --spec " + spec.string() + " --out /proc/nocflow_sweep");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("/proc/nocflow_sweep: cannot create output folder"), std::string::npos)
      << r.output;
  // A folder holding other files (another command's run) would mix them with the sweep's.
  fs::create_directories(dir / "other");
  std::ofstream(dir / "other" / "summary.json") << "{}";
  const CliRun other =
      run_nocflow("sweep --spec " + spec.string() + " --out " + (dir / "other").string());
  EXPECT_EQ(other.exit_code, 2) << other.output;
  EXPECT_NE(other.output.find("holds summary.json, which a sweep does not write: give a new or "
                              "empty folder"),
            std::string::npos)
      << other.output;
  EXPECT_FALSE(fs::exists(dir / "other" / "sweep.yaml"));
}

TEST(SweepCli, MissingHwIsAnError) {
  const fs::path dir = fresh_dir("sweep_no_hw");
  const fs::path spec = write_spec(dir, "axes:\n  network: zoo:vgg5\n");
  const CliRun r = run_nocflow("sweep --spec " + spec.string() + " --out " + (dir / "out").string());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("missing key 'hw'"), std::string::npos) << r.output;
  // An empty path (a template's unset variable) is no path, not the built-in machine.
  for (const char* hw : {"hw: \"\"\n", "hw:\n"}) {
    const fs::path empty = write_spec(dir, std::string(hw) + "axes:\n  network: zoo:vgg5\n");
    const CliRun e = run_nocflow("sweep --spec " + empty.string() + " --list");
    EXPECT_EQ(e.exit_code, 2) << hw << e.output;
    EXPECT_NE(e.output.find(": hw: expected a config file path"), std::string::npos) << e.output;
  }
}

}  // namespace
}  // namespace nocflow::testing
