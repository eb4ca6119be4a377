// SPDX-License-Identifier: MIT
// `nocflow traffic --messages`: a batch replayed at the zero-load latency, shared channels and
// links, bounded source queues, bad message files.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/cli_runner.h"
#include "tests/noc/traffic_runner.h"

namespace nocflow::testing {
namespace {

namespace fs = std::filesystem;

/// `traffic --messages` on the 8x8 booksim config (5 cycles per router: 4 stages + link;
/// 16-byte flits, 4-flit VC buffers).
CliRun messages(const fs::path& dir, const std::string& file_text, const std::string& extra = "") {
  { std::ofstream(dir / "messages.txt") << file_text; }
  return run_nocflow("traffic --hw " + kHw + " --messages " + (dir / "messages.txt").string() +
                     " --out " + (dir / "out").string() + " " + extra);
}

// A bounded source queue takes a message longer than itself only when empty: of two 256-flit
// messages from one node, the first runs as if alone and the second enters once the first has
// left; unbounded, the NI's channels interleave them and both finish late.
TEST(TrafficCli, AMessageLongerThanTheSourceQueueWaitsUntilItIsEmpty) {
  const fs::path dir = fresh_dir("traffic_bounded_queue");
  long long flits = 0;  // of one message, as messages.csv counts them
  auto latencies = [&](const std::string& text, const std::string& queue) {
    const CliRun r = messages(dir, text, "--set ni.channels=8 --set ni.injection_queue_flits=" + queue);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    std::vector<long long> out;
    for (const auto& row : read_csv_rows(dir / "out" / "messages.csv")) {
      out.push_back(std::stoll(row.at("latency_cycles")));
      flits = std::stoll(row.at("flits"));
    }
    return out;
  };
  const auto alone = latencies("0 1 4096\n", "0");
  ASSERT_EQ(alone.size(), 1u);
  ASSERT_GT(flits, 4);  // longer than the bounded queue below
  const auto bounded = latencies("0 1 4096\n0 8 4096\n", "4");
  ASSERT_EQ(bounded.size(), 2u);
  EXPECT_EQ(bounded[0], alone[0]);
  EXPECT_GE(bounded[1], alone[0] + flits);  // its flits enter after the first's
  const auto unbounded = latencies("0 1 4096\n0 8 4096\n", "0");
  EXPECT_GE(std::min(unbounded[0], unbounded[1]), alone[0] + flits / 2);  // interleaved
  EXPECT_LT(std::max(unbounded[0], unbounded[1]), bounded[1]);
}

TEST(TrafficCli, MessagesReplayABatchAtTheZeroLoadLatency) {
  const fs::path dir = fresh_dir("traffic_messages");
  // Node 0 -> 63 crosses 15 routers, node 5 -> 6 two; neither message is longer than a VC
  // buffer, so each takes BookSim2's zero-load latency 5 R + 2 + (L - 1) to its tail and is
  // usable the cycle after: 5 R + 2 + L.
  const CliRun r =
      messages(dir, "# src dst bytes [start]\n0 63 64\n\n5 6 48 100  # starts later\n");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const int first = 5 * 15 + 2 + 4, second = 5 * 2 + 2 + 3;
  EXPECT_EQ(read_file(dir / "out" / "messages.csv"),
            "src,dst,bytes,flits,start_cycle,delivered_cycle,latency_cycles\n"
            "0,63,64,4,0," +
                std::to_string(first - 1) + "," + std::to_string(first) + "\n" + "5,6,48,3,100," +
                std::to_string(100 + second - 1) + "," + std::to_string(second) + "\n");
  const nlohmann::json j = nlohmann::json::parse(read_file(dir / "out" / "summary.json"));
  EXPECT_EQ(j["cycles"].get<int>(), 100 + second);
  EXPECT_EQ(j["flits"].get<int>(), 7);
  // Both routes (xy) cross r(5,0) -> r(6,0), one after the other.
  EXPECT_EQ(j["busiest_router_link_flits"].get<int>(), 7);
  // links.csv: every flit once on an injection channel.
  int injected = 0;
  for (const LinkRow& l : read_links(dir / "out" / "links.csv"))
    if (l.from.rfind("node ", 0) == 0) injected += l.flits;
  EXPECT_EQ(injected, 7);
  // Bytes as the configs write them.
  const CliRun one = messages(dir, "0 1 16\n");  // one flit: one cycle on each link
  ASSERT_EQ(one.exit_code, 0) << one.output;
  EXPECT_NE(one.output.find("1 message, 16 bytes, 1 flit, 1 packet in "), std::string::npos)
      << one.output;
  EXPECT_NE(one.output.find("(1 cycle at 1 flit/cycle)"), std::string::npos) << one.output;
  EXPECT_NE(one.output.find("% of its 1 cycle"), std::string::npos) << one.output;
  const CliRun kib = messages(dir, "0 63 1KiB\n");
  ASSERT_EQ(kib.exit_code, 0) << kib.output;
  EXPECT_NE(read_file(dir / "out" / "messages.csv").find("\n0,63,1024,64,0,"), std::string::npos)
      << read_file(dir / "out" / "messages.csv");
}

TEST(TrafficCli, LinksReportTheCyclesFromTheirFirstFlitToTheirLast) {
  const fs::path dir = fresh_dir("traffic_messages_span");
  // Alone, node 5's 3 flits leave its NI at cycles 10-12 and follow each other to node 6: every
  // link on the way is busy all of its 3-cycle span. Links off the route carry nothing.
  const CliRun alone = messages(dir, "5 6 48 10\n");
  ASSERT_EQ(alone.exit_code, 0) << alone.output;
  EXPECT_NE(alone.output.find("1 message, 48 bytes, 3 flits, 1 packet in "), std::string::npos)
      << alone.output;
  int on_route = 0;
  for (const LinkRow& l : read_links(dir / "out" / "links.csv")) {
    if (l.flits == 0) {
      EXPECT_EQ(l.first + l.last, "") << l.from;
      EXPECT_FALSE(l.busy_share) << l.from;  // no span, no share of it
      continue;
    }
    ++on_route;
    EXPECT_EQ(l.flits, 3) << l.from;
    EXPECT_EQ(std::stoi(l.last) - std::stoi(l.first), 2) << l.from;
    EXPECT_EQ(l.busy_share, 1.0) << l.from;
    if (l.from == "node 5") {
      EXPECT_EQ(l.first, "10");
    }
  }
  EXPECT_EQ(on_route, 3);  // injection, r(5,0) -> r(6,0), ejection
  // Node 1 sends 16 flits to node 0 while node 8's 16 come in through the other port: the
  // ejection channel carries 32 flits and, the two messages arriving together, stays busy,
  // but each sender's injection channel waits for credits while the other's flits leave.
  const CliRun both = messages(dir, "1 0 256\n8 0 256\n");
  ASSERT_EQ(both.exit_code, 0) << both.output;
  const nlohmann::json j = nlohmann::json::parse(read_file(dir / "out" / "summary.json"));
  EXPECT_EQ(j["busiest_ejection_flits"].get<int>(), 32);
  EXPECT_GT(j["busiest_ejection_busy_share"].get<double>(), 0.9);
  EXPECT_LT(j["busiest_injection_busy_share"].get<double>(), 0.75);
  EXPECT_NE(both.output.find("busiest PE channel r(0,0).L -> node 0, busy"), std::string::npos)
      << both.output;
  // The two router links into r(0,0) idle only while their flit waits for a credit (router
  // 0's buffer full, its ejection busy with the other's flits): flits + stalled = span.
  int stalled_links = 0;
  for (const auto& row : read_csv_rows(dir / "out" / "links.csv")) {
    if (row.at("from").rfind("r(", 0) != 0 || row.at("to").rfind("r(", 0) != 0 ||
        row.at("flits") == "0")
      continue;
    const std::int64_t stalled = std::stoll(row.at("credit_stalled_cycles"));
    EXPECT_EQ(std::stoll(row.at("flits")) + std::stoll(row.at("vc_starved_cycles")) + stalled,
              std::stoll(row.at("last_cycle")) - std::stoll(row.at("first_cycle")) + 1)
        << row.at("from");
    stalled_links += stalled > 0;
  }
  EXPECT_EQ(stalled_links, 2);
  EXPECT_GT(j["busiest_router_link_credit_stalled_cycles"].get<int>(), 0);
}

TEST(TrafficCli, MessagesToOneNodeShareItsEjectionChannel) {
  const fs::path dir = fresh_dir("traffic_messages_share");
  // Nodes 1 and 8 are both one hop from node 0: alone, each 4-flit message takes 5 * 2 + 2 + 4
  // = 16 cycles; together their 8 flits leave through node 0's one ejection channel.
  const CliRun alone = messages(dir, "1 0 64\n");
  ASSERT_EQ(alone.exit_code, 0) << alone.output;
  EXPECT_EQ(nlohmann::json::parse(read_file(dir / "out" / "summary.json"))["cycles"].get<int>(),
            16);
  const CliRun both = messages(dir, "1 0 64\n8 0 64\n");
  ASSERT_EQ(both.exit_code, 0) << both.output;
  const nlohmann::json j = nlohmann::json::parse(read_file(dir / "out" / "summary.json"));
  EXPECT_EQ(j["busiest_ejection_flits"].get<int>(), 8);
  EXPECT_GE(j["cycles"].get<int>(), 16 + 4);
}

TEST(TrafficCli, ACrossbarHasNoRouterLinkToName) {
  const fs::path dir = fresh_dir("traffic_messages_crossbar");
  const CliRun r =
      messages(dir, "0 5 256\n3 5 256\n", "--set topology.kind=crossbar --set topology.ports=16");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("busiest router link none carried a flit\n"), std::string::npos)
      << r.output;
  const nlohmann::json j = nlohmann::json::parse(read_file(dir / "out" / "summary.json"));
  EXPECT_EQ(j["busiest_router_link_flits"].get<int>(), 0);
  // The link's other figures are null: there is no such link to measure.
  EXPECT_TRUE(j["busiest_router_link_busy_share"].is_null()) << j.dump();
  EXPECT_TRUE(j["busiest_router_link_vc_starved_cycles"].is_null()) << j.dump();
  EXPECT_TRUE(j["busiest_router_link_credit_stalled_cycles"].is_null()) << j.dump();
  EXPECT_EQ(j["busiest_ejection_flits"].get<int>(), 32);  // both messages' 16-byte flits into PE 5
}

TEST(TrafficCli, BadMessageFilesExitWith2AndWriteNothing) {
  const fs::path dir = fresh_dir("traffic_messages_bad");
  const std::pair<std::string, std::string> cases[] = {
      {"0 64 10\n", "messages.txt:1: node 64 is outside the machine's 0..63"},
      {"# header\n3 3 10\n",
       "messages.txt:2: a message from node 3 to itself never enters the NoC"},
      {"0 1\n", "messages.txt:1: not three integers"},
      {"0 1 0\n", "messages.txt:1: bytes must be in 1 .. 1099511627776"},
      // Near INT64_MAX the flit count used to wrap to one flit.
      {"0 1 9223372036854775807\n", "messages.txt:1: bytes must be in 1 .. 1099511627776"},
      // Past 64 bits: out of range, not "not an integer".
      {"0 1 99999999999999999999\n",
       "messages.txt:1: bytes must be in 1 .. 1099511627776, got 99999999999999999999"},
      {"0 1 99999999999999999999KiB\n",
       "messages.txt:1: bytes must be in 1 .. 1099511627776, got 99999999999999999999KiB"},
      {"0 1 10 99999999999999999999\n",
       "messages.txt:1: start_cycle must be in 0 .. 1000000000000, got 99999999999999999999"},
      {"99999999999999999999 1 10\n", "messages.txt:1: node 99999999999999999999 is outside the machine's 0..63"},
      {"0 1 10 soon\n", "messages.txt:1: start_cycle 'soon' is not an integer"},
      {"0 1 10.5\n", "messages.txt:1: bytes '10.5' is not an integer (KiB, MiB and GiB allowed)"},
      {"0 1 4KB\n", "messages.txt:1: bytes '4KB' is not an integer (KiB, MiB and GiB allowed)"},
      {"0 1 10 -5\n", "messages.txt:1: start_cycle must be in 0 .. 1000000000000"},
      // Past SystemC's time range the run used to hang.
      {"0 1 10 100000000000000\n", "messages.txt:1: start_cycle must be in 0 .. 1000000000000"},
      {"0 1 10 5 6\n", "messages.txt:1: unexpected '6'"},
      // As in every other input: 010 is 8 to some readers, 10 to others.
      {"0 1 010\n", "messages.txt:1: bytes '010': write whole numbers without a leading zero"},
      {"0 01 10\n", "messages.txt:1: dst '01': write whole numbers without a leading zero"},
      // A NUL used to end the message at the number it cut.
      {std::string("0 1 64\0 0\n", 10), "messages.txt:1: column 7: control character 0x00"},
      {"# nothing\n\n", "messages.txt: no messages"},
  };
  for (const auto& [text, message] : cases)
    expect_rejected(messages(dir, text), message, dir / "out", text);
  // The run's own messages.csv (its results) would overwrite the batch it reads.
  fs::create_directories(dir / "out");
  { std::ofstream(dir / "out" / "messages.csv") << "0 1 10\n"; }
  const CliRun over = run_nocflow("traffic --hw " + kHw + " --messages " +
                                  (dir / "out" / "messages.csv").string() + " --out " +
                                  (dir / "out").string());
  EXPECT_EQ(over.exit_code, 2) << over.output;
  EXPECT_NE(over.output.find("the run writes its per-message results there"), std::string::npos)
      << over.output;
  EXPECT_EQ(read_file(dir / "out" / "messages.csv"), "0 1 10\n");
  const CliRun missing =
      run_nocflow("traffic --hw " + kHw + " --messages " + (dir / "none.txt").string() + " --out " +
                  (dir / "out").string());
  EXPECT_EQ(missing.exit_code, 2) << missing.output;
  EXPECT_NE(missing.output.find("none.txt: cannot open: no such file"), std::string::npos)
      << missing.output;
  const CliRun both = messages(dir, "0 1 10\n", "--rate 0.2");
  EXPECT_EQ(both.exit_code, 2) << both.output;
  EXPECT_NE(both.output.find("--rate excludes --messages"), std::string::npos) << both.output;
}

}  // namespace
}  // namespace nocflow::testing
