// SPDX-License-Identifier: MIT
// `nocflow traffic` end to end: outputs, determinism, overrides, stability, saturation search,
// bad input (a batch of messages: traffic_messages_cli_test.cpp).
#include <gtest/gtest.h>

#include <fstream>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "noc/base/format.h"
#include "tests/cli_runner.h"
#include "tests/noc/traffic_runner.h"

namespace nocflow::testing {
namespace {

namespace fs = std::filesystem;

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
  EXPECT_EQ(links.rfind("from,to,flits,utilisation_flits_per_cycle,first_cycle,last_cycle,"
                        "busy_share_of_span,vc_starved_cycles,credit_stalled_cycles\n",
                        0),
            0u);
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

// Past saturation (BookSim2's 8x8 saturates near 0.41 flits/node/cycle): a fixed-length run
// still measures, and says it is unstable by the same 500-cycle rule; a converging run stops
// before its window and reports its latencies as missing (null), not as zero.
TEST(TrafficCli, SaturatedRunsSayUnstableAndMeasureNothingAsNull) {
  const fs::path dir = fresh_dir("traffic_saturated");
  const std::string hw = "traffic --hw " + kHw + " --rate 0.5 --quiet --out ";
  const CliRun fixed = run_nocflow(hw + (dir / "fixed").string() + " --cycles 10000 --warmup 5000");
  ASSERT_EQ(fixed.exit_code, 0) << fixed.output;
  const auto f = nlohmann::json::parse(read_file(dir / "fixed" / "summary.json"));
  EXPECT_FALSE(f["stable"].get<bool>());
  EXPECT_GT(f["unstable_latency_estimate"].get<double>(), 500);
  EXPECT_GT(f["avg_packet_latency"].get<double>(), 0);
  EXPECT_NE(fixed.output.find("NO (saturated"), std::string::npos) << fixed.output;
  const CliRun converging = run_nocflow(hw + (dir / "converging").string());
  ASSERT_EQ(converging.exit_code, 0) << converging.output;
  const auto c = nlohmann::json::parse(read_file(dir / "converging" / "summary.json"));
  EXPECT_FALSE(c["stable"].get<bool>());
  EXPECT_EQ(c["packets_measured"].get<int>(), 0);
  EXPECT_TRUE(c["avg_packet_latency"].is_null());
  EXPECT_TRUE(c["accepted_flits_per_node_per_cycle"].is_null());
  EXPECT_NE(converging.output.find("packet latency     n/a"), std::string::npos)
      << converging.output;
  // Below saturation a fixed-length run is stable.
  const CliRun low = run_nocflow("traffic --hw " + kHw +
                                 " --rate 0.2 --quiet --cycles 10000 --warmup 5000 --out " +
                                 (dir / "low").string());
  ASSERT_EQ(low.exit_code, 0) << low.output;
  const auto l = nlohmann::json::parse(read_file(dir / "low" / "summary.json"));
  EXPECT_TRUE(l["stable"].get<bool>());
  EXPECT_FALSE(l["saturated_by_throughput"].get<bool>());
  EXPECT_TRUE(c["saturated_by_throughput"].is_null());  // no window
}

// A window too short for the latency to pass 500 cycles: stable by BookSim's rule, but the
// network accepts far less than is offered, and the run says so. A low rate's shortfall in a
// short window is chance (packets not started), not saturation.
TEST(TrafficCli, AShortWindowPastSaturationFailsTheThroughputRule) {
  const fs::path dir = fresh_dir("traffic_short_window");
  const std::string hw = "traffic --hw " + kHw + " --quiet --cycles 500 --warmup 100 --out ";
  const CliRun over = run_nocflow(hw + (dir / "over").string() + " --rate 1.0");
  ASSERT_EQ(over.exit_code, 0) << over.output;
  const auto o = nlohmann::json::parse(read_file(dir / "over" / "summary.json"));
  EXPECT_TRUE(o["stable"].get<bool>());
  const double accepted = o["accepted_flits_per_node_per_cycle"].get<double>();
  EXPECT_LT(accepted, 0.95);
  EXPECT_TRUE(o["saturated_by_throughput"].get<bool>());
  EXPECT_NE(over.output.find("NO by the throughput rule: " + fixed(100 * accepted, 1) +
                             " % of the offered load accepted"),
            std::string::npos)
      << over.output;
  // A window that starts on an empty network (no --warmup) cannot eject what is still on its
  // way at its end: 200 cycles at 0.3 accept about 88 % of it, and 0.3 is far below saturation.
  const CliRun cold = run_nocflow("traffic --hw " + kHw + " --quiet --cycles 200 --rate 0.3 --out " +
                                  (dir / "cold").string());
  ASSERT_EQ(cold.exit_code, 0) << cold.output;
  const auto c = nlohmann::json::parse(read_file(dir / "cold" / "summary.json"));
  EXPECT_LT(c["accepted_flits_per_node_per_cycle"].get<double>(), 0.95 * 0.3);
  EXPECT_FALSE(c["saturated_by_throughput"].get<bool>());
  const CliRun low = run_nocflow(hw + (dir / "low").string() + " --rate 0.01");
  ASSERT_EQ(low.exit_code, 0) << low.output;
  const auto l = nlohmann::json::parse(read_file(dir / "low" / "summary.json"));
  EXPECT_LT(l["accepted_flits_per_node_per_cycle"].get<double>(), 0.95 * 0.01);  // short by chance
  EXPECT_FALSE(l["saturated_by_throughput"].get<bool>());
  EXPECT_NE(low.output.find("stable             yes\n"), std::string::npos) << low.output;
}

TEST(TrafficCli, ASourceFallingBehindFailsTheThroughputRuleWhereTheMeanHidesIt) {
  // Transpose on an 8x8 mesh under xy routing: row 7's sources 0..6 all cross the channel into
  // router (7,7), so no flow gets more than 1/7 flits/node/cycle. At 0.15 the network's mean
  // accepted rate stays within 5 % of the offered (most flows are not on that channel) and a
  // 10,000-cycle window keeps the mean latency under 500 cycles, but the sources of those flows
  // fall behind: the throughput rule calls it saturated. At 0.13 nothing falls behind.
  const fs::path dir = fresh_dir("traffic_source_behind");
  const std::string run =
      "traffic --hw " + kHw + " --pattern transpose --cycles 10000 --warmup 5000 --quiet --out ";
  const CliRun over = run_nocflow(run + (dir / "over").string() + " --rate 0.15");
  ASSERT_EQ(over.exit_code, 0) << over.output;
  const auto o = nlohmann::json::parse(read_file(dir / "over" / "summary.json"));
  EXPECT_TRUE(o["stable"].get<bool>());
  EXPECT_GE(o["accepted_flits_per_node_per_cycle"].get<double>(), 0.95 * 0.15);
  const double share = o["min_source_injected_share"].get<double>();
  EXPECT_LT(share, 0.95);
  EXPECT_LT(share * 0.15, 1.0 / 7 + 0.005);  // what the channel can carry, and a little
  EXPECT_TRUE(o["saturated_by_throughput"].get<bool>());
  EXPECT_NE(over.output.find("NO by the throughput rule: a source injected " +
                             fixed(100 * share, 1) + " % of its load"),
            std::string::npos)
      << over.output;
  // A run's summary.json (`args` after --hw, into `name`).
  auto summary = [&](const std::string& name, const std::string& args) {
    const CliRun r =
        run_nocflow("traffic --hw " + kHw + " " + args + " --quiet --out " + (dir / name).string());
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return nlohmann::json::parse(read_file(dir / name / "summary.json"));
  };
  // A short window below saturation ends with a queue now and then, a packet or two: not
  // saturated (uniform 4x4 at 0.35 in 16-flit packets over 200 cycles; 3 of these 6 seeds were
  // called saturated by a rule with no margin).
  for (int seed = 1; seed <= 6; ++seed) {
    const auto b = summary("short" + std::to_string(seed),
                           "--set topology.rows=4 --set topology.cols=4 --rate 0.35 "
                           "--packet-flits 16 --cycles 200 --seed " +
                               std::to_string(seed));
    EXPECT_NE(b["saturated_by_throughput"], nlohmann::json(true)) << "seed " << seed << b.dump();
  }
  // A short window past the bound in 16-flit packets: a few dozen packets a source, of which
  // the flows into that channel fall many behind (a margin growing as the square root of the
  // packets passed it).
  const auto bu = summary("burst",
                          "--pattern transpose --packet-flits 16 --rate 0.16 --cycles "
                          "2000 --warmup 2000");
  EXPECT_TRUE(bu["stable"].get<bool>());
  EXPECT_LT(bu["min_source_injected_share"].get<double>(), 0.95);
  EXPECT_TRUE(bu["saturated_by_throughput"].get<bool>()) << bu.dump();
  const auto u = summary("under", "--pattern transpose --cycles 10000 --warmup 5000 --rate 0.13");
  EXPECT_GE(u["min_source_injected_share"].get<double>(), 0.95);
  EXPECT_FALSE(u["saturated_by_throughput"].get<bool>());
  // The search on 4x4, where transpose carries at most 1/3: no rate the throughput rule calls
  // ok is more than its 5 % above that (the mean alone passed 0.383).
  const CliRun sat = run_nocflow("traffic --hw " + kHw +
                                 " --set topology.rows=4 --set topology.cols=4 --pattern transpose "
                                 "--find-saturation --out " +
                                 (dir / "sat").string());
  ASSERT_EQ(sat.exit_code, 0) << sat.output;
  const auto j = nlohmann::json::parse(read_file(dir / "sat" / "saturation.json"));
  EXPECT_LE(j["throughput_rule"]["last_ok"].get<double>(), (1.0 / 3) / 0.95);
  EXPECT_LE(j["throughput_rule"]["first_saturated"].get<double>(), (1.0 / 3) / 0.95 + 0.005);
  EXPECT_GT(j["throughput_rule"]["first_saturated"].get<double>(), 1.0 / 3);
}

// A run too short for its rate measures no packet: stability is unknown, not "yes".
TEST(TrafficCli, ARunThatMeasuresNoPacketDoesNotCallItselfStable) {
  const fs::path dir = fresh_dir("traffic_no_packet");
  const int flits = 65535, per_flit = 10;  // offered 1 / per_flit flits/node/cycle
  const CliRun r =
      run_nocflow("traffic --hw " + kHw + " --rate 0.1 --packet-flits " + std::to_string(flits) +
                  " --cycles 2000 --out " + (dir / "out").string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const nlohmann::json j = nlohmann::json::parse(read_file(dir / "out" / "summary.json"));
  ASSERT_EQ(j["packets_measured"].get<int>(), 0) << j.dump();
  EXPECT_TRUE(j["stable"].is_null()) << j.dump();
  // A packet's flits over the offered rate: the mean cycles between a node's packets.
  EXPECT_NE(r.output.find("stable             n/a: at this rate a node starts a packet every " +
                          std::to_string(flits * per_flit) + " cycles"),
            std::string::npos)
      << r.output;
  // A window too short for a packet's trip, at a rate that starts about two per node in it:
  // no verdict by either rule (it said saturated by the throughput rule), and the hint is the
  // warm-up, not a higher rate.
  const CliRun brief = run_nocflow("traffic --hw " + kHw + " --rate 0.3 --cycles 6 --out " +
                                   (dir / "brief").string());
  ASSERT_EQ(brief.exit_code, 0) << brief.output;
  const nlohmann::json b = nlohmann::json::parse(read_file(dir / "brief" / "summary.json"));
  EXPECT_TRUE(b["stable"].is_null()) << b.dump();
  EXPECT_TRUE(b["saturated_by_throughput"].is_null()) << b.dump();
  EXPECT_TRUE(b["converged"].is_null()) << b.dump();  // a fixed window does not converge
  EXPECT_NE(brief.output.find("no packet finished in the 6-cycle window, which starts on an "
                              "empty network; give --warmup or more --cycles"),
            std::string::npos)
      << brief.output;
  EXPECT_NE(brief.output.find("(a fixed window: --cycles)"), std::string::npos) << brief.output;
  // A rate next to nothing: its mean gap in 3 digits, not 301.
  const CliRun tiny = run_nocflow("traffic --hw " + kHw + " --rate 1e-300 --cycles 100 --out " +
                                  (dir / "tiny").string());
  ASSERT_EQ(tiny.exit_code, 0) << tiny.output;
  EXPECT_NE(tiny.output.find("starts a packet every 1e+300 cycles on average"), std::string::npos)
      << tiny.output;
  // Nothing offered: nothing to converge, and no simulation rate (idle cycles are skipped).
  const CliRun idle = run_nocflow("traffic --hw " + kHw + " --rate 0 --sample-period 100 --out " +
                                  (dir / "idle").string());
  ASSERT_EQ(idle.exit_code, 0) << idle.output;
  const nlohmann::json i = nlohmann::json::parse(read_file(dir / "idle" / "summary.json"));
  EXPECT_TRUE(i["converged"].is_null()) << i.dump();
  EXPECT_TRUE(i["router_cycles_per_second"].is_null()) << i.dump();
  EXPECT_NE(idle.output.find("nothing offered to converge"), std::string::npos) << idle.output;
}

// Eight one-flit messages into node 0 of a crossbar whose VC allocator grants all 3 VCs of
// the port at once and takes 2 cycles to: the heads left waiting before the first flit leaves
// are not VC-starved cycles of the link (it counted one there, 8 flits + 1 over an 8-cycle span).
TEST(TrafficCli, NoWaitIsCountedBeforeALinksFirstFlit) {
  const fs::path dir = fresh_dir("traffic_starved_span");
  { std::ofstream(dir / "m.txt") << "1 0 1\n2 0 1\n3 0 1\n4 0 1\n5 0 1\n6 0 1\n7 0 1\n8 0 1\n"; }
  const CliRun r = run_nocflow(
      "traffic --hw " + std::string(NOCFLOW_SOURCE_DIR) + "/configs/hw/crossbar16.yaml" +
      " --set router.preset=booksim --set router.alloc_iterations=3 --set router.vcs=3"
      " --set router.vc_alloc_delay=2 --messages " + (dir / "m.txt").string() + " --out " +
      (dir / "out").string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  int links = 0;  // router outputs that carried flits (an NI's channel counts no waits)
  for (const auto& row : read_csv_rows(dir / "out" / "links.csv")) {
    if (row.at("flits") == "0" || row.at("from").rfind("xbar", 0) != 0) continue;
    ++links;
    EXPECT_LE(std::stoll(row.at("flits")) + std::stoll(row.at("vc_starved_cycles")) +
                  std::stoll(row.at("credit_stalled_cycles")),
              std::stoll(row.at("last_cycle")) - std::stoll(row.at("first_cycle")) + 1)
        << row.at("from") << " -> " << row.at("to");
  }
  EXPECT_EQ(links, 1);  // the crossbar's port to node 0
}

// A rate so low that a node's wait for its next packet passes int64: it never injects (the
// wait wrapped, and the run failed or injected millions of flits at "offered 0").
TEST(TrafficCli, ARateTooLowToEverInjectSendsNothing) {
  const fs::path dir = fresh_dir("traffic_rate_tiny");
  for (const auto& [name, options] : {std::pair{"tiny", "--rate 1e-20"},
                                      std::pair{"long", "--rate 1e-15 --packet-flits 65535"}}) {
    const fs::path out = dir / name;
    const CliRun r = run_nocflow("traffic --hw " + kHw + " " + options + " --cycles 100 --out " +
                                 out.string());
    ASSERT_EQ(r.exit_code, 0) << options << ": " << r.output;
    const nlohmann::json j = nlohmann::json::parse(read_file(out / "summary.json"));
    EXPECT_EQ(j["flits_injected"].get<std::int64_t>(), 0) << options << ": " << j.dump();
    EXPECT_TRUE(j["stable"].is_null()) << options << ": " << j.dump();
  }
}


// Two nodes, each sending to the other: every rate up to a flit per cycle is carried, and the
// bisection must not report the bound it starts from (1.0) as a saturation point.
TEST(TrafficCli, ANetworkThatNeverSaturatesSaysSo) {
  const fs::path dir = fresh_dir("traffic_never_saturates");
  const CliRun r = run_nocflow("traffic --hw " + kHw +
                               " --set topology.rows=1 --set topology.cols=2 "
                               "--pattern neighbor --find-saturation --out " +
                               (dir / "out").string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("first unstable none up to 1.0"), std::string::npos) << r.output;
  const nlohmann::json j = nlohmann::json::parse(read_file(dir / "out" / "saturation.json"));
  EXPECT_TRUE(j["latency_rule"]["first_unstable"].is_null()) << j.dump();
  EXPECT_DOUBLE_EQ(j["latency_rule"]["last_stable"].get<double>(), 1.0);
}

// Every node sending to one: past the first rate, a converging probe turns unstable before its
// window and measures nothing, which saturation.json gives as null, not as 0 cycles.
TEST(TrafficCli, AProbeThatMeasuredNothingHasNoLatency) {
  const fs::path dir = fresh_dir("traffic_probe_null");
  const CliRun r = run_nocflow("traffic --hw " + std::string(NOCFLOW_SOURCE_DIR) +
                               "/configs/hw/mesh16x16.yaml --pattern hotspot --hotspot-fraction 1 "
                               "--find-saturation --sample-period 1000 --quiet --out " +
                               (dir / "out").string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const nlohmann::json j = nlohmann::json::parse(read_file(dir / "out" / "saturation.json"));
  int empty = 0, unstable = 0;
  std::set<int> order;
  for (const auto& p : j["probes"]) {
    EXPECT_TRUE(p["avg_packet_latency"].is_null() || p["avg_packet_latency"].get<double>() > 0)
        << p.dump();
    EXPECT_TRUE(p["accepted"].is_null() || p["accepted"].get<double>() > 0) << p.dump();
    empty += p["avg_packet_latency"].is_null();
    // Each probe says when it ran, as the console numbers it, and an unstable converging one
    // gives the latency estimate the console prints (BookSim's: over 500 cycles).
    const int n = p["order"].get<int>();
    order.insert(n);
    std::ostringstream line;
    line << "probe " << n << " of at most 18: " << std::fixed << std::setprecision(4)
         << p["offered"].get<double>() << " flits/node/cycle offered";
    EXPECT_NE(r.output.find(line.str()), std::string::npos) << line.str() << "\n" << r.output;
    const bool estimated = p.contains("unstable_latency_estimate");
    EXPECT_EQ(estimated, p["run"] == "converging" && !p["stable"].get<bool>()) << p.dump();
    if (estimated) {
      ++unstable;
      EXPECT_GT(p["unstable_latency_estimate"].get<double>(), 500) << p.dump();
    }
  }
  EXPECT_GT(empty, 0) << j.dump();
  EXPECT_GT(unstable, 0) << j.dump();
  EXPECT_EQ(order.size(), j["probes"].size());
  EXPECT_EQ(*order.begin(), 1);
  EXPECT_EQ(*order.rbegin(), static_cast<int>(j["probes"].size()));
}

// Each probe of the search runs on a network reset as new (allocator priorities included), so
// a single run at its rate gives its figures: the converging probe at 0.5 ran second, after the
// saturated one at 1.0, and printed 21.88 cycles where `--rate 0.5` gave 22.06.
TEST(TrafficCli, AProbeGivesWhatASingleRunAtItsRateGives) {
  const fs::path dir = fresh_dir("traffic_probe_alone");
  const std::string base = "traffic --hw " + std::string(NOCFLOW_SOURCE_DIR) +
                           "/configs/hw/booksim8x8.yaml --set topology.rows=4 --set "
                           "topology.cols=4 --quiet ";
  const CliRun search = run_nocflow(base + "--find-saturation --sample-period 1000 --out " +
                                    (dir / "search").string());
  ASSERT_EQ(search.exit_code, 0) << search.output;
  const nlohmann::json j = nlohmann::json::parse(read_file(dir / "search" / "saturation.json"));
  int rerun = 0;
  for (const auto& p : j["probes"]) {
    const bool fixed = p["run"] == "fixed length";
    const double rate = p["offered"].get<double>();
    if (p["order"].get<int>() < 2 || (rate != 0.5 && rate != 0.75)) continue;
    std::ostringstream args;
    args << base << "--rate " << rate
         << (fixed ? " --warmup 3000 --cycles 2000" : " --sample-period 1000") << " --out "
         << (dir / ("alone" + std::to_string(rerun))).string();
    const CliRun alone = run_nocflow(args.str());
    ASSERT_EQ(alone.exit_code, 0) << alone.output;
    const nlohmann::json a = nlohmann::json::parse(
        read_file(dir / ("alone" + std::to_string(rerun++)) / "summary.json"));
    EXPECT_DOUBLE_EQ(a["avg_packet_latency"].get<double>(), p["avg_packet_latency"].get<double>())
        << p.dump();
    EXPECT_DOUBLE_EQ(a["accepted_flits_per_node_per_cycle"].get<double>(),
                     p["accepted"].get<double>())
        << p.dump();
  }
  EXPECT_EQ(rerun, 4) << j.dump();  // 0.5 and 0.75, each both ways
}

// A sample period so short that a converging run ends before a saturated network's latency
// could pass the rule's 500 cycles: its verdicts are flagged (at 0.3 on 4x4 one read "NO by
// the throughput rule"), and a period long enough is not.
TEST(TrafficCli, ASamplePeriodTooShortForTheLatencyRuleIsFlagged) {
  const fs::path dir = fresh_dir("traffic_short_period");
  const std::string note =
      "a converging run lasts at most 13 cycles, under 10 times the latency "
      "rule's 500: its verdicts mean little";
  const std::string base =
      "traffic --hw " + kHw + " --set topology.rows=4 --set topology.cols=4 --quiet ";
  const CliRun short_run =
      run_nocflow(base + "--rate 0.3 --sample-period 1 --out " + (dir / "short").string());
  ASSERT_EQ(short_run.exit_code, 0) << short_run.output;
  EXPECT_NE(short_run.output.find(note), std::string::npos) << short_run.output;
  const CliRun search =
      run_nocflow(base + "--find-saturation --sample-period 1 --out " + (dir / "search").string());
  ASSERT_EQ(search.exit_code, 0) << search.output;
  EXPECT_NE(search.output.find(note), std::string::npos) << search.output;
  const CliRun short_still =  // 1,300 cycles: past the rule's 500, not 10 times over
      run_nocflow(base + "--rate 0.3 --sample-period 100 --out " + (dir / "short100").string());
  ASSERT_EQ(short_still.exit_code, 0) << short_still.output;
  EXPECT_NE(short_still.output.find("a converging run lasts at most 1300 cycles"),
            std::string::npos)
      << short_still.output;
  const CliRun enough =
      run_nocflow(base + "--rate 0.3 --sample-period 400 --out " + (dir / "enough").string());
  ASSERT_EQ(enough.exit_code, 0) << enough.output;
  EXPECT_EQ(enough.output.find("its verdicts mean little"), std::string::npos) << enough.output;
}

// The hotspot the run chose is named: by default the centre, on a 4x4 mesh node 2 x 4 + 2 = 10.
TEST(TrafficCli, AHotspotRunNamesItsNode) {
  const fs::path dir = fresh_dir("traffic_hotspot");
  const CliRun r = run_nocflow(traffic(dir / "out", "--pattern hotspot --hotspot-fraction 0.5"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("pattern hotspot (node 10, 50 % of packets)"), std::string::npos)
      << r.output;
  const CliRun chosen = run_nocflow(traffic(dir / "out3", "--pattern hotspot --hotspot-node 3"));
  EXPECT_NE(chosen.output.find("pattern hotspot (node 3, 20 % of packets)"), std::string::npos)
      << chosen.output;
  // summary.json records the pattern as run: the node, its share; a uniform run whether it
  // excluded the source.
  const auto j = nlohmann::json::parse(read_file(dir / "out" / "summary.json"));
  EXPECT_EQ(j["hotspot_node"], 10);
  EXPECT_EQ(j["hotspot_fraction"], 0.5);
  const CliRun uniform = run_nocflow(traffic(dir / "self", "--exclude-self"));
  EXPECT_NE(uniform.output.find("pattern uniform (no packet to itself)"), std::string::npos) << uniform.output;
  EXPECT_EQ(nlohmann::json::parse(read_file(dir / "self" / "summary.json"))["exclude_self"], true);
}

TEST(TrafficCli, BadInputExitsWith2AndWritesNothing) {
  const fs::path dir = fresh_dir("traffic_bad");
  const std::pair<std::string, std::string> cases[] = {
      {"--pattern uniformm", "unknown traffic pattern 'uniformm'; did you mean 'uniform'?"},
      {"--rate 1.5", "--rate: must be at most 1, got 1.5"},
      {"--rate nan", "--rate: expected a number, got 'nan'"},
      {"--rate 0x0.4", "--rate: expected a number, got '0x0.4'"},  // decimal only
      {"--pattern hotspot --hotspot-fraction nan",
       "--hotspot-fraction: expected a number, got 'nan'"},
      {"--cycles 1000 --warmup 9223372036854775000", "--warmup: must be at most 1000000000000"},
      {"--set router.routing=zigzag", "router.routing: unknown value 'zigzag'"},
      {"--cycles 0", "--cycles: must be at least 1, got 0"},
      {"--cycles 1000 --warmup -5", "--warmup: must be at least 0, got -5"},
      {"--warmup 100", "--warmup requires --cycles"},
      {"--sample-period 0", "--sample-period: must be at least 1, got 0"},
      {"--packet-flits 0", "--packet-flits: must be at least 1, got 0"},
      {"--cycles 1e3x", "--cycles: expected a whole number, got '1e3x'"},
      {"--hotspot-node 3", "--hotspot-node and --hotspot-fraction apply to --pattern hotspot only"},
      {"--pattern hotspot --hotspot-node -2", "--hotspot-node: must be at least 0, got -2"},
      {"--pattern hotspot --hotspot-node 99", "--hotspot-node 99: no such node (16 nodes)"},
      // Options a run would ignore are refused, not ignored.
      {"--pattern transpose --exclude-self", "--exclude-self applies to --pattern uniform only"},
      {"--cycles 1000", "--cycles excludes --sample-period"},  // traffic() gives a period
      // --cycles made the latency rule's probes fixed-length: a verdict its probes contradicted.
      {"--find-saturation", "--rate excludes --find-saturation"},  // traffic() gives a rate
      {"--seed -1", "--seed: must be a whole number in 0 .. 18446744073709551615, got -1"},
      {"--seed 010",  // octal 8 to CLI11
       "--seed: expected a whole number without a leading zero (it would read as octal), got "
       "'010'"},
      // 2^64 and a little above read as 2^64 - 1
      {"--seed 18446744073709551616",
       "--seed: must be a whole number in 0 .. 18446744073709551615, got 18446744073709551616"},
      {"--packet-flits 100000", "--packet-flits: must be at most 65535, got 100000"},
  };
  for (const auto& [args, message] : cases)
    expect_rejected(run_nocflow(traffic(dir / "out", args)), message, dir / "out", args);
  // A 3x3 mesh (traffic() sets 4x4, and a key may be set once).
  const std::string bitrev = "traffic --hw " + kHw + " --set topology.rows=3 --set topology.cols=3 " +
                             "--pattern bitrev --cycles 100 --out " + (dir / "out").string();
  expect_rejected(run_nocflow(bitrev), "needs a power-of-two node count", dir / "out", bitrev);
  const std::string bare = "traffic --hw " + kHw + " --quiet --out " + (dir / "out").string();
  expect_rejected(run_nocflow(bare + " --find-saturation --cycles 2000"),
                  "--cycles excludes --find-saturation", dir / "out", "--find-saturation --cycles");
}

// A 1x1 mesh runs synthetic traffic to itself; excluding itself, a lone node has no destination.
TEST(TrafficCli, ALoneNodeSendsToItselfAndCannotExcludeItself) {
  const fs::path dir = fresh_dir("traffic_lone_node");
  const std::string one = "traffic --hw " + kHw + " --set topology.rows=1 --set topology.cols=1 --rate 0.1 "
                          "--cycles 1000 --quiet --out ";
  const CliRun r = run_nocflow(one + (dir / "out").string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto j = nlohmann::json::parse(read_file(dir / "out" / "summary.json"));
  EXPECT_GT(j["packets_measured"].get<long long>(), 0);
  EXPECT_EQ(j["flits_injected"], j["flits_ejected"]);
  expect_rejected(run_nocflow(one + (dir / "alone").string() + " --exclude-self"),
                  "--exclude-self: a single node has no other node to send to", dir / "alone", "--exclude-self");
}

}  // namespace
}  // namespace nocflow::testing
