// SPDX-License-Identifier: MIT
// `nocflow traffic` end to end: outputs, determinism, overrides, bad input.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/cli_runner.h"

namespace nocflow::testing {
namespace {

namespace fs = std::filesystem;
const std::string kHw = std::string(NOCFLOW_SOURCE_DIR) + "/configs/hw/booksim8x8.yaml";

std::string traffic(const fs::path& out, const std::string& extra = "", int seed = 3) {
  return "traffic --hw " + kHw + " --set topology.rows=4 --set topology.cols=4 --rate 0.2 "
         "--packet-flits 4 --sample-period 2000 --quiet --seed " + std::to_string(seed) +
         " --out " + out.string() + " " + extra;
}

/// summary.json without its wall-clock fields, the only ones allowed to vary run to run.
std::string summary_without_timing(const fs::path& dir) {
  return json_without(dir / "summary.json", {"wall_seconds", "router_cycles_per_second"});
}

TEST(TrafficCli, WritesSummaryLinksAndResolvedConfig) {
  const fs::path dir = fresh_dir("traffic_out");
  const CliRun r = run_nocflow(traffic(dir / "out"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const nlohmann::json j = nlohmann::json::parse(read_file(dir / "out" / "summary.json"));
  for (const char* key : {"avg_packet_latency", "avg_network_latency", "avg_flit_latency",
                          "p50_packet_latency", "p99_packet_latency",
                          "accepted_flits_per_node_per_cycle",
                          "min_node_accepted_flits_per_node_per_cycle", "avg_hops", "cycles",
                          "stable", "wall_seconds", "router_cycles_per_second"})
    EXPECT_TRUE(j.contains(key)) << key;
  EXPECT_TRUE(j["stable"].get<bool>());
  EXPECT_NEAR(j["accepted_flits_per_node_per_cycle"].get<double>(), 0.2, 0.01);
  const std::string links = read_file(dir / "out" / "links.csv");
  EXPECT_EQ(links.rfind("from,to,flits,utilisation_flits_per_cycle\n", 0), 0u);
  // 16 injection links + 4x4 mesh: 2 * 2 * 4 * 3 = 48 router links + 16 ejection links.
  EXPECT_EQ(std::count(links.begin(), links.end(), '\n'), 1 + 16 + 48 + 16);
  const std::string resolved = read_file(dir / "out" / "config.resolved.yaml");
  EXPECT_NE(resolved.find("rows: 4"), std::string::npos) << resolved;
}

TEST(TrafficCli, SameInputsGiveByteIdenticalOutputs) {
  const fs::path dir = fresh_dir("traffic_det");
  ASSERT_EQ(run_nocflow(traffic(dir / "a")).exit_code, 0);
  ASSERT_EQ(run_nocflow(traffic(dir / "b")).exit_code, 0);
  EXPECT_EQ(read_file(dir / "a" / "links.csv"), read_file(dir / "b" / "links.csv"));
  EXPECT_EQ(read_file(dir / "a" / "config.resolved.yaml"), read_file(dir / "b" / "config.resolved.yaml"));
  EXPECT_EQ(summary_without_timing(dir / "a"), summary_without_timing(dir / "b"));
  ASSERT_EQ(run_nocflow(traffic(dir / "c", "", 4)).exit_code, 0);
  EXPECT_NE(summary_without_timing(dir / "a"), summary_without_timing(dir / "c"));
}

TEST(TrafficCli, BadInputExitsWith2AndWritesNothing) {
  const fs::path dir = fresh_dir("traffic_bad");
  const std::pair<std::string, std::string> cases[] = {
      {"--pattern uniformm", "unknown traffic pattern 'uniformm'; did you mean 'uniform'?"},
      {"--pattern bitrev --set topology.rows=3 --set topology.cols=3",
       "needs a power-of-two node count"},
      {"--rate 1.5", "--rate"},
      {"--set router.routing=zigzag", "router.routing: unknown value 'zigzag'"},
  };
  for (const auto& [args, message] : cases) {
    const CliRun r = run_nocflow(traffic(dir / "out", args));
    EXPECT_EQ(r.exit_code, 2) << args << ": " << r.output;
    EXPECT_NE(r.output.find(message), std::string::npos) << args << ": " << r.output;
    EXPECT_FALSE(fs::exists(dir / "out")) << args;
  }
}

}  // namespace
}  // namespace nocflow::testing
