// SPDX-License-Identifier: MIT
// Hardware config loading: shipped configs, defaults, presets, overrides, round trip, reference.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "noc/base/error.h"
#include "sim/config/hw_loader.h"
#include "sim/config/param.h"
#include "tests/scratch.h"

namespace nocflow::sim {
namespace {

const std::string kConfigs = std::string(NOCFLOW_SOURCE_DIR) + "/configs/hw/";

std::string write_temp(const std::string& name, const std::string& text) {
  const auto path = nocflow::testing::scratch_path("hw_config_" + name);
  std::ofstream(path) << text;
  return path.string();
}

TEST(HwConfig, EveryShippedConfigLoads) {
  int loaded = 0;
  for (const auto& entry : std::filesystem::directory_iterator(kConfigs)) {
    if (entry.path().extension() != ".yaml") continue;
    SCOPED_TRACE(entry.path().string());
    const HwSpec spec = load_hw_config(entry.path().string());
    EXPECT_GT(spec.topology.num_nodes(), 1);
    ++loaded;
  }
  EXPECT_GE(loaded, 5);
}

TEST(HwConfig, ShippedConfigsHaveTheirShapes) {
  EXPECT_EQ(load_hw_config(kConfigs + "mesh4x4.yaml").topology.num_nodes(), 16);
  EXPECT_EQ(load_hw_config(kConfigs + "mesh8x8.yaml").topology.num_nodes(), 64);
  EXPECT_EQ(load_hw_config(kConfigs + "mesh16x16.yaml").topology.num_nodes(), 256);
  const HwSpec xbar = load_hw_config(kConfigs + "crossbar16.yaml");
  EXPECT_EQ(xbar.topology.kind, "crossbar");
  EXPECT_EQ(xbar.topology.num_nodes(), 16);
  const HwSpec bs = load_hw_config(kConfigs + "booksim8x8.yaml");
  EXPECT_EQ(bs.router.vcs, 4);
  EXPECT_EQ(bs.router.buffer_depth, 4);
  EXPECT_EQ(bs.router.routing, "xy");
  EXPECT_EQ(bs.router.sw_allocator, "islip");
  EXPECT_FALSE(bs.router.speculative);
  EXPECT_EQ(bs.ni.injection_queue_flits, 0);
}

TEST(HwConfig, DefaultsComeFromTheDeclarationsAndTheDefaultPreset) {
  const HwSpec spec = load_hw_config("");
  const Preset& preset = router_presets().front();  // the default preset, booksim
  ASSERT_EQ(spec.router.preset, preset.name);
  for (const Param& p : hw_params()) {
    SCOPED_TRACE(p.path);
    ParamValue expected = p.default_value;
    for (const auto& [path, value] : preset.values) {
      if (path == p.path) expected = value;
    }
    EXPECT_EQ(p.get(spec), expected);
  }
}

TEST(HwConfig, PresetSuppliesRouterKeysAndExplicitKeysWin) {
  const std::string file = write_temp("preset.yaml",
                                      "router:\n  preset: lookahead\n  speculative: false\n");
  const HwSpec spec = load_hw_config(file);
  EXPECT_TRUE(spec.router.lookahead_routing);  // from the preset
  EXPECT_FALSE(spec.router.speculative);       // explicit key beats the preset
}

// The one-line summary shows the pipeline the stage keys make, whatever the preset's name, and
// the PE's array and SRAM; an array whose MACs differ from the MAC rate gets a note.
TEST(HwConfig, SummaryShowsWhatTheKeysMakeAndNotesAnArrayAtAnotherRate) {
  const HwSpec shipped = load_hw_config(kConfigs + "mesh8x8.yaml");
  EXPECT_NE(one_line_summary(shipped).find("router lookahead (2-cycle pipeline): 4 VCs x 8 flits"),
            std::string::npos)
      << one_line_summary(shipped);
  EXPECT_NE(one_line_summary(shipped).find("256 MACs/cycle/PE (16x16 array), 1 MiB SRAM/PE"),
            std::string::npos)
      << one_line_summary(shipped);
  EXPECT_TRUE(hw_notes(shipped).empty());
  const HwSpec slower = load_hw_config(
      kConfigs + "mesh8x8.yaml", {"router.lookahead_routing=false", "router.speculative=false",
                                  "pe.array_rows=32", "pe.array_cols=32", "pe.sram_bytes=512KiB"});
  EXPECT_NE(one_line_summary(slower).find("router lookahead (4-cycle pipeline)"), std::string::npos)
      << one_line_summary(slower);
  EXPECT_NE(one_line_summary(slower).find("(32x32 array), 512 KiB SRAM/PE"), std::string::npos)
      << one_line_summary(slower);
  ASSERT_EQ(hw_notes(slower).size(), 1u);
  EXPECT_NE(
      hw_notes(slower)[0].find("pe.array_rows x pe.array_cols = 1024 MACs, pe.macs_per_cycle 256"),
      std::string::npos)
      << hw_notes(slower)[0];
  // A routing stage on a lookahead router changes nothing (the pipeline stays 2 cycles): said.
  const HwSpec ahead = load_hw_config(kConfigs + "mesh8x8.yaml", {"router.routing_delay=3"});
  EXPECT_NE(one_line_summary(ahead).find("(2-cycle pipeline)"), std::string::npos) << one_line_summary(ahead);
  ASSERT_EQ(hw_notes(ahead).size(), 1u);
  EXPECT_EQ(hw_notes(ahead)[0].rfind("router.routing_delay 3 has no effect: with router.lookahead_routing", 0), 0u)
      << hw_notes(ahead)[0];
  EXPECT_TRUE(hw_notes(load_hw_config(kConfigs + "mesh8x8.yaml", {"router.routing_delay=3",
                                                                   "router.lookahead_routing=false"}))
                  .empty());
  // A crossbar has one route between any two ports: yx is xy there, said.
  const std::vector<std::string> crossbar_yx =
      hw_notes(load_hw_config(kConfigs + "crossbar16.yaml", {"router.routing=yx"}));
  ASSERT_EQ(crossbar_yx.size(), 1u);
  EXPECT_EQ(crossbar_yx[0],
            "router.routing yx has no effect: a crossbar has one route between any two ports");
  EXPECT_TRUE(hw_notes(load_hw_config(kConfigs + "crossbar16.yaml", {})).empty());
}

TEST(HwConfig, OverridesBeatTheFile) {
  const HwSpec spec =
      load_hw_config(kConfigs + "mesh8x8.yaml",
                     {"router.vcs=2", "topology.rows=3", "pe.sram_bytes=2MiB", "router.routing=yx",
                      "clock.frequency_ghz=0.5", "router.speculative=False"});
  EXPECT_FALSE(spec.router.speculative);  // the file's true, in a YAML 1.2 spelling
  EXPECT_EQ(spec.router.vcs, 2);
  EXPECT_EQ(spec.topology.rows, 3);
  EXPECT_EQ(spec.pe.sram_bytes, 2 << 20);
  EXPECT_EQ(spec.router.routing, "yx");
  EXPECT_DOUBLE_EQ(spec.clock.frequency_ghz, 0.5);
}

TEST(HwConfig, TheResolvedYamlSaysHowManyIterationsZeroRuns) {
  // router.alloc_iterations 0 (the lookahead preset's) is by topology: the resolved file keeps
  // the 0 and says what it runs, one on a mesh router, ceil(log2 8) = 3 on an 8-port crossbar.
  const HwSpec mesh = load_hw_config(kConfigs + "mesh4x4.yaml");
  ASSERT_EQ(mesh.router.alloc_iterations, 0);
  EXPECT_NE(resolved_yaml(mesh).find("alloc_iterations: 0  # iterations (0: by topology, here 1)"),
            std::string::npos)
      << resolved_yaml(mesh);
  const HwSpec crossbar =
      load_hw_config(kConfigs + "mesh4x4.yaml", {"topology.kind=crossbar", "topology.ports=8"});
  EXPECT_NE(
      resolved_yaml(crossbar).find("alloc_iterations: 0  # iterations (0: by topology, here 3)"),
      std::string::npos)
      << resolved_yaml(crossbar);
  const HwSpec set = load_hw_config(kConfigs + "crossbar16.yaml", {"router.alloc_iterations=2"});
  EXPECT_NE(resolved_yaml(set).find("alloc_iterations: 2  # iterations\n"), std::string::npos)
      << resolved_yaml(set);
}

TEST(HwConfig, OverridingTheKindDropsTheFilesKeysOfTheOldKind) {
  // A mesh file made a crossbar: its rows and cols no longer apply and are dropped.
  const HwSpec crossbar =
      load_hw_config(kConfigs + "mesh4x4.yaml", {"topology.kind=crossbar", "topology.ports=8"});
  EXPECT_EQ(crossbar.topology.kind, "crossbar");
  EXPECT_EQ(crossbar.topology.ports, 8);
  EXPECT_EQ(resolved_yaml(crossbar).find("\n  rows:"), std::string::npos);
  // A crossbar file made a mesh takes rows and cols from --set.
  const HwSpec mesh = load_hw_config(kConfigs + "crossbar16.yaml",
                                     {"topology.kind=mesh", "topology.rows=2", "topology.cols=8"});
  EXPECT_EQ(mesh.topology.kind, "mesh");
  EXPECT_EQ(mesh.topology.rows * mesh.topology.cols, 16);
  // An override of the old kind's key is still refused: it was asked for.
  try {
    load_hw_config(kConfigs + "mesh4x4.yaml", {"topology.kind=crossbar", "topology.rows=2"});
    ADD_FAILURE() << "topology.rows accepted on a crossbar";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "--set topology.rows=2: topology.rows: applies to kind: mesh only"),
              std::string::npos)
        << e.what();
  }
}

TEST(HwConfig, AMeshMadeACrossbarKeepsItsPesUnlessPortsAreGiven) {
  // As a sweep's topology axis does: a crossbar of as many PEs as the mesh, not the default 16.
  const HwSpec crossbar = load_hw_config(kConfigs + "mesh8x8.yaml", {"topology.kind=crossbar"});
  EXPECT_EQ(crossbar.topology.kind, "crossbar");
  EXPECT_EQ(crossbar.topology.ports, 64);
  EXPECT_NE(resolved_yaml(crossbar).find("\n  ports: 64"), std::string::npos) << resolved_yaml(crossbar);
  // A 16x16 mesh has more PEs than a crossbar can have ports: the run asks for a number.
  try {
    load_hw_config(kConfigs + "mesh16x16.yaml", {"topology.kind=crossbar"});
    ADD_FAILURE() << "a 256-port crossbar accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--set topology.kind=crossbar: topology.kind: the 16x16 mesh "
                                         "has 256 PEs, and a crossbar 2 to 64 ports: give --set "
                                         "topology.ports=N"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(load_hw_config(kConfigs + "mesh16x16.yaml", {"topology.kind=crossbar", "topology.ports=32"})
                .topology.ports,
            32);
}

TEST(HwConfig, ACrossbarMadeAMeshKeepsItsPesOrAsksForTheShape) {
  // 16 ports: a 4x4 mesh. 8 ports: no square mesh has 8 PEs, and the default 4x4 would have
  // silently made 16 of them.
  const HwSpec mesh = load_hw_config(kConfigs + "crossbar16.yaml", {"topology.kind=mesh"});
  EXPECT_EQ(mesh.topology.rows, 4);
  EXPECT_EQ(mesh.topology.cols, 4);
  const std::filesystem::path eight = testing::scratch_path("crossbar8.yaml");
  std::ofstream(eight) << "topology:\n  kind: crossbar\n  ports: 8\n";
  try {
    load_hw_config(eight.string(), {"topology.kind=mesh"});
    ADD_FAILURE() << "an 8-port crossbar made a 4x4 mesh";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--set topology.kind=mesh: topology.kind: the crossbar has 8 ports, no "
                                         "square mesh has as many PEs: give --set topology.rows=R --set "
                                         "topology.cols=C"),
              std::string::npos)
        << e.what();
  }
  const HwSpec two_by_four =
      load_hw_config(eight.string(), {"topology.kind=mesh", "topology.rows=2", "topology.cols=4"});
  EXPECT_EQ(two_by_four.topology.rows * two_by_four.topology.cols, 8);
  // One side given: the other keeps the ports (it took its default of 4: 16 ports, 8 rows made
  // 32 PEs); a side the ports do not divide asks for both.
  const HwSpec eight_rows =
      load_hw_config(kConfigs + "crossbar16.yaml", {"topology.kind=mesh", "topology.rows=8"});
  EXPECT_EQ(eight_rows.topology.rows, 8);
  EXPECT_EQ(eight_rows.topology.cols, 2);
  const std::filesystem::path plain = testing::scratch_path("crossbar_default.yaml");
  std::ofstream(plain) << "topology:\n  kind: crossbar\n";  // its 16 ports by default
  const HwSpec plain_rows =
      load_hw_config(plain.string(), {"topology.kind=mesh", "topology.rows=8"});
  EXPECT_EQ(plain_rows.topology.rows * plain_rows.topology.cols, 16);
  const HwSpec one_col = load_hw_config(eight.string(), {"topology.kind=mesh", "topology.cols=1"});
  EXPECT_EQ(one_col.topology.rows, 8);
  EXPECT_EQ(one_col.topology.cols, 1);
  try {
    load_hw_config(kConfigs + "crossbar16.yaml", {"topology.kind=mesh", "topology.rows=3"});
    ADD_FAILURE() << "16 ports in 3 rows accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("the crossbar has 16 ports, not a multiple of 3 rows"),
              std::string::npos)
        << e.what();
  }
}

TEST(HwConfig, WestFirstOnACrossbarIsRefusedWhereItIsWritten) {
  try {
    load_hw_config(kConfigs + "crossbar16.yaml", {"router.routing=west_first"});
    ADD_FAILURE() << "west_first accepted on a crossbar";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--set router.routing=west_first: router.routing: "
                                         "west_first needs a mesh"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(load_hw_config(kConfigs + "mesh4x4.yaml", {"router.routing=west_first"}).router.routing,
            "west_first");
}

TEST(HwConfig, ResolvedYamlRoundTrips) {
  for (const char* name : {"crossbar16.yaml", "mesh4x4.yaml", "booksim8x8.yaml"}) {
    SCOPED_TRACE(name);
    const HwSpec a = load_hw_config(kConfigs + name, {"router.buffer_depth=5"});
    const HwSpec b = load_hw_config(write_temp(std::string("resolved_") + name, resolved_yaml(a)));
    for (const Param& p : hw_params()) EXPECT_EQ(p.get(b), p.get(a)) << p.path;
  }
}

TEST(HwConfig, ReferenceFileIsUpToDate) {
  std::ifstream in(std::string(NOCFLOW_SOURCE_DIR) + "/configs/README.md");
  std::stringstream file;
  file << in.rdbuf();
  EXPECT_EQ(file.str(), reference_markdown())
      << "configs/README.md is out of date: run `nocflow config --reference > configs/README.md`";
}

TEST(HwConfig, EveryParameterIsDocumented) {
  for (const Param& p : hw_params()) {
    SCOPED_TRACE(p.path);
    EXPECT_FALSE(p.description.empty());
    EXPECT_NE(p.path.find('.'), std::string::npos);
    if (p.type == ParamType::Integer || p.type == ParamType::Real) {
      EXPECT_LT(p.min, p.max);
      EXPECT_FALSE(p.unit.empty());
    }
  }
}

}  // namespace
}  // namespace nocflow::sim
