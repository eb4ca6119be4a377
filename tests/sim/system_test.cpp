// SPDX-License-Identifier: MIT
// The accelerator system on hand-checkable programs. SystemC elaborates once per process, so
// every test here runs in its own process (gtest_discover_tests).
#include "sim/system/system.h"

#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

#include "noc/base/error.h"
#include "optimizer/partition/placement.h"
#include "optimizer/partition/transfers.h"
#include "sim/config/hw_loader.h"
#include "sim/lower/collectives.h"
#include "sim/output/layer_stats.h"
#include "sim/output/trace.h"
#include "tests/sim/trace_counters.h"

namespace nocflow::sim {
namespace {

const std::string kBooksim = std::string(NOCFLOW_SOURCE_DIR) + "/configs/hw/booksim8x8.yaml";

HwSpec mesh(int rows, int cols) {
  return load_hw_config(kBooksim, {"topology.rows=" + std::to_string(rows), "topology.cols=" + std::to_string(cols)});
}

std::int64_t bytes_of(const RunResult& r, StepKind kind) {
  std::int64_t b = 0;
  for (const Span& s : r.spans)
    if (s.kind == kind) b += s.bytes;
  return b;
}

TEST(System, OneFlitMessageTakesTheNetworkLatencyPlusOneCycle) {
  // 1x2 mesh, 16-byte flits: injected in cycle 0, complete in cycle 5*2 + 2 = 12 (as in the
  // NoC tests), received at the next cycle boundary.
  ProgramSet p(2);
  p.transfer(0, 1, -1, 16);
  System sys("sys", mesh(1, 2), p);
  const RunResult r = sys.run();
  EXPECT_EQ(r.total_cycles, 13);
  EXPECT_EQ(r.pe_finish[0], 0);  // sending does not wait
  EXPECT_EQ(r.flits, 1);
  EXPECT_EQ(r.flit_hops, 1);  // one router-to-router link
}

TEST(System, ComputeThenSendAddsUp) {
  ProgramSet p(2);
  p.compute(0, -1, 100);
  p.transfer(0, 1, -1, 16);
  p.compute(1, -1, 7);
  System sys("sys", mesh(1, 2), p);
  EXPECT_EQ(sys.run().total_cycles, 100 + 13 + 7);
}

TEST(System, BarrierReleasesEveryoneWhenTheLastArrives) {
  ProgramSet p(4);
  for (int pe = 0; pe < 4; ++pe) p.compute(pe, -1, 10 * (pe + 1));
  p.barrier_all(1);
  for (int pe = 0; pe < 4; ++pe) p.compute(pe, -1, 5);
  System sys("sys", mesh(2, 2), p);
  const RunResult r = sys.run();
  for (int pe = 0; pe < 4; ++pe) EXPECT_EQ(r.pe_finish[pe], 45);
}

TEST(System, LongMessagesAreCutIntoPackets) {
  ProgramSet p(2);
  p.transfer(0, 1, -1, 1000);  // 63 flits of 16 bytes, packets of at most 16 flits
  System sys("sys", mesh(1, 2), p);
  const RunResult r = sys.run();
  EXPECT_EQ(r.flits, 63);
  EXPECT_EQ(r.packets, 4);
  EXPECT_EQ(r.bytes, 1000);
  // Streaming 63 flits after a 12-cycle head latency, at one flit per cycle: not before 12 + 62.
  EXPECT_GE(r.total_cycles, 12 + 62 + 1);
}

TEST(Collectives, RingAllGatherMovesNTimesNMinusOneChunks) {
  const HwSpec hw = mesh(2, 2);
  ProgramSet p(4);
  const auto ring = optimizer::ring_order({true, 2, 2}, {0, 1, 2, 3});
  EXPECT_EQ(ring, (std::vector<int>{0, 1, 3, 2}));  // snake: every step is a mesh neighbour
  ring_all_gather(p, ring, 256, 0);
  System sys("sys", hw, p);
  const RunResult r = sys.run();
  EXPECT_EQ(r.bytes, 4 * 3 * 256);
  EXPECT_EQ(bytes_of(r, StepKind::Recv), 4 * 3 * 256);
  // Each message crosses one link between neighbours.
  EXPECT_EQ(r.flit_hops, r.flits);
}

TEST(Collectives, RingAllReduceMovesTwiceTheTensorTimesNMinusOne) {
  const HwSpec hw = mesh(2, 2);
  ProgramSet p(4);
  ring_all_reduce(p, optimizer::ring_order({true, 2, 2}, {0, 1, 2, 3}), 4096, 2, 64, 0);
  System sys("sys", hw, p);
  const RunResult r = sys.run();
  EXPECT_EQ(r.bytes, 2 * 3 * 4096);
  std::int64_t reduce_cycles = 0;
  for (const Span& s : r.spans)
    if (s.kind == StepKind::Reduce) reduce_cycles += s.end - s.start;
  EXPECT_EQ(reduce_cycles, 4 * 3 * (1024 / 2 / 64));  // 3 rounds per PE, 512 adds at 64/cycle
}

TEST(Collectives, RingAllReduceRoundsAPartialAdderCycleUp) {
  // 4000 bytes over a 4-member ring: chunks of 1000 bytes, 500 two-byte elements, which 64
  // adders sum in 7 full cycles and one more for the last 500 - 7 * 64 = 52 elements.
  const std::vector<int> ring = optimizer::ring_order({true, 2, 2}, {0, 1, 2, 3});
  const std::int64_t n = static_cast<std::int64_t>(ring.size()), total_bytes = 4000, adds = 64;
  const int elem_bytes = 2;
  const std::int64_t elements = total_bytes / n / elem_bytes;
  ASSERT_EQ(total_bytes % (n * elem_bytes), 0) << "chunks of whole elements";
  ASSERT_NE(elements % adds, 0) << "the last adder cycle must be a partial one";
  const std::int64_t per_step = (elements + adds - 1) / adds;  // ceil(500 / 64) = 8
  ProgramSet p(4);
  ring_all_reduce(p, ring, total_bytes, elem_bytes, adds, 0);
  int steps = 0;
  for (const Program& prog : p.pe)
    for (const Step& s : prog)
      if (s.kind == StepKind::Reduce) {
        ++steps;
        EXPECT_EQ(s.cycles, per_step);
      }
  EXPECT_EQ(steps, n * (n - 1));  // n - 1 reduce-scatter rounds on each member
  System sys("sys", mesh(2, 2), p);
  const RunResult r = sys.run();
  std::int64_t reduce_cycles = 0;
  for (const Span& s : r.spans)
    if (s.kind == StepKind::Reduce) reduce_cycles += s.end - s.start;
  EXPECT_EQ(reduce_cycles, n * (n - 1) * per_step);
}

TEST(Collectives, RingAllReduceSendsWholeElements) {
  // 2000 bytes of fp16 (1000 elements) over 4 members: 250 elements a chunk; over 16 (on a 4x4
  // mesh): 62.5, sent as 63 (126 bytes, where 125 was half an element).
  for (const int members : {4, 16}) {
    std::vector<int> ring(static_cast<std::size_t>(members));
    for (int m = 0; m < members; ++m) ring[static_cast<std::size_t>(m)] = m;
    ProgramSet p(members);
    ring_all_reduce(p, ring, 2000, 2, 64, 0);
    const std::int64_t chunk = (1000 + members - 1) / members * 2;
    for (const Program& prog : p.pe)
      for (const Step& s : prog) {
        if (s.kind == StepKind::Send) {
          EXPECT_EQ(s.bytes, chunk) << members << " members";
        }
      }
    EXPECT_EQ(optimizer::ring_chunk_bytes(2000, members, 2), chunk);
  }
}

TEST(Collectives, HaloExchangeMovesExactlyTheHalo) {
  ProgramSet p(4);
  halo_exchange(p, {{0, 2, 640}, {2, 0, 640}, {1, 3, 640}, {3, 1, 640}}, 0);
  System sys("sys", mesh(2, 2), p);
  EXPECT_EQ(sys.run().bytes, 4 * 640);
}

TEST(System, AProgramWaitingForeverIsReported) {
  ProgramSet p(2);
  p.recv(1, 0, -1, 64, 99);  // nobody sends tag 99
  System sys("sys", mesh(1, 2), p);
  try {
    sys.run();
    FAIL() << "expected CheckError";
  } catch (const CheckError& e) {
    EXPECT_NE(std::string(e.what()).find("PE 1 waits in recv for 64 bytes from PE 0 (tag 99)"),
              std::string::npos)
        << e.what();
  }
}

TEST(System, AMessageNobodyReceivesIsReported) {
  ProgramSet p(2);
  p.send(0, 1, -1, 64, 5);
  System sys("sys", mesh(1, 2), p);
  EXPECT_THROW(sys.run(), CheckError);
}

}  // namespace
}  // namespace nocflow::sim

namespace nocflow::sim {
namespace {

TEST(Outputs, TraceAndLayerStatsAgreeWithTheRun) {
  // Layer 0: PE 0 computes 100 cycles and sends 64 bytes to PE 1. Layer 1: PE 1 waits for it
  // (exposed communication) and computes 50 cycles.
  ProgramSet p(2);
  p.layer_names = {"conv1", "conv2"};
  p.compute(0, 0, 100);
  const std::int64_t tag = p.new_tag();
  p.send(0, 1, 0, 64, tag);
  p.recv(1, 0, 1, 64, tag);
  p.compute(1, 1, 50);
  System sys("sys", mesh(1, 2), p);
  sys.sample_links(10);
  const RunResult r = sys.run();
  const auto layers = layer_stats(r, p.layer_names);
  ASSERT_EQ(layers.size(), 2u);
  EXPECT_EQ(layers[0].start, 0);
  EXPECT_EQ(layers[0].end, 100);
  EXPECT_EQ(layers[0].compute, 100);
  EXPECT_EQ(layers[1].compute, 50);
  EXPECT_EQ(layers[1].communication, r.total_cycles - 50);  // blocked from cycle 0
  EXPECT_EQ(layers[1].end, r.total_cycles);

  std::ostringstream trace;
  EXPECT_EQ(write_chrome_trace(trace, r, p.layer_names, 1.0, 10), r.spans.size());
  const auto doc = nlohmann::json::parse(trace.str());
  int spans = 0, counters = 0;
  std::set<std::string>
      link_tracks;  // every link has one, the idle ones a single 0 (as in the VCD)
  ASSERT_NE(r.total_cycles % 10, 0) << "the last window must be cut short for the check below";
  for (const auto& e : doc["traceEvents"]) {
    if (e["ph"] == "X") ++spans;
    if (e["ph"] == "C") {
      ++counters;
      link_tracks.insert(e["name"].get<std::string>());
      EXPECT_LE(e["ts"].get<double>(), static_cast<double>(r.total_cycles) * 1e-3);  // µs at 1 GHz
    }
  }
  EXPECT_EQ(spans, 4);
  EXPECT_GT(counters, 0);
  ASSERT_TRUE(std::any_of(r.links.begin(), r.links.end(), [](const auto& l) {
    return l.flits == 0;
  })) << "the test's premise: an idle link";
  EXPECT_EQ(link_tracks.size(), r.links.size());
  // The last window is cut short, which every sample's label does not say: otherData does.
  const std::int64_t last_window = (r.total_cycles - 1) / 10 * 10;
  EXPECT_EQ(doc["otherData"]["link_counters"],
            "flits per 10 cycles, in windows from cycle 0; the last, cycles " +
                std::to_string(last_window) + " to " + std::to_string(r.total_cycles) +
                " (the run's end), is " + std::to_string(r.total_cycles - last_window) +
                " cycles long");
  const auto tracks = nocflow::testing::read_counters(doc, 1000, 10);
  std::int64_t counted_flits = 0;
  for (const auto& [link, flits] : tracks.flits) counted_flits += flits;
  EXPECT_EQ(tracks.repeats, 0);
  // Times in µs are whole cycles at 1 GHz, printed as such: a compute from cycle 576 to 1,152
  // (576 × 1e-3 printed 0.5760000000000001).
  EXPECT_FALSE(std::regex_search(trace.str(), std::regex(R"(\.\d{4,})"))) << trace.str();
  RunResult cut;
  cut.total_cycles = 1152;
  cut.pe_finish = {1152};
  cut.spans.push_back(Span{0, StepKind::Compute, 0, 576, 1152});
  std::ostringstream exact;
  EXPECT_EQ(write_chrome_trace(exact, cut, {"conv"}, 1.0, 10), 1u);
  EXPECT_NE(exact.str().find(R"("ts":0.576,"dur":0.576)"), std::string::npos) << exact.str();
  cut.total_cycles = 1150;  // a run of whole windows: its last is whole too
  std::ostringstream whole;
  write_chrome_trace(whole, cut, {"conv"}, 1.0, 10);
  EXPECT_NE(whole.str().find("the last, cycles 1140 to 1150 (the run's end), is 10 cycles long"),
            std::string::npos)
      << whole.str();
  // 4 flits (64 bytes / 16) cross injection, 2 router outputs: 3 link traversals each.
  EXPECT_EQ(counted_flits, 4 * 3);

  std::ostringstream vcd;
  write_vcd(vcd, r, 2, 10, 0.5);  // at 0.5 GHz a cycle is 2 ns, in real time as trace.json
  EXPECT_NE(vcd.str().find("$timescale 1ps $end"), std::string::npos);
  EXPECT_EQ(vcd.str().rfind("$version nocflow 0.1.0 (commit ", 0), 0u) << "the build that wrote it";
  EXPECT_NE(vcd.str().find("$var wire 8 ! pe_0_state $end"), std::string::npos);
  EXPECT_NE(vcd.str().find("#200000\nb0 !"), std::string::npos)
      << "PE 0 idle after its 100-cycle compute";
  const std::size_t last = vcd.str().rfind("\n#");
  ASSERT_NE(last, std::string::npos);
  EXPECT_EQ(std::stoll(vcd.str().substr(last + 2)), r.total_cycles * 2000)  // ps at 0.5 GHz
      << "the trace ends with the run";
}

TEST(Outputs, RunTotalsGoThroughABarrierToTheLastPeToReachIt) {
  // PE p computes 10 * (p + 1) cycles, waits at a barrier for the slowest (PE 3, 40 cycles),
  // then computes 5: every PE finishes at 40 + 5. The path runs back from the lowest-numbered
  // of them, PE 0, through the barrier to PE 3: it computes the whole run. (PE 0's own steps
  // would count 10 + 5 busy and 30 at the barrier.)
  const int pes = 4;
  const std::int64_t after = 5;
  auto first = [](int pe) { return std::int64_t{10} * (pe + 1); };
  ProgramSet p(pes);
  for (int pe = 0; pe < pes; ++pe) p.compute(pe, -1, first(pe));
  p.barrier_all(1);
  for (int pe = 0; pe < pes; ++pe) p.compute(pe, -1, after);
  System sys("sys", mesh(2, 2), p);
  const RunResult r = sys.run();
  const std::int64_t slowest = first(pes - 1);
  for (int pe = 0; pe < pes; ++pe) ASSERT_EQ(r.pe_finish[pe], slowest + after) << "PE " << pe;
  const RunTotals t = run_totals(r);
  EXPECT_EQ(t.compute, slowest + after);
  EXPECT_EQ(t.communication, 0);
}

TEST(Outputs, RunTotalsGoThroughAWaitedForMessageToItsSender) {
  // PE 0 computes 100 cycles and sends 64 bytes to PE 2, which has no part before: it waits
  // from cycle 0, then computes 50. PE 1 computes 30, then receives 64 bytes PE 0 sent at
  // cycle 0, long there: it does not wait for them. The path from PE 2, the last to finish:
  // its compute, the message from its send (cycle 100) to PE 2's receive, PE 0's compute.
  ProgramSet p(3);
  p.layer_names = {"a", "b"};
  p.transfer(0, 1, 0, 64);
  p.compute(0, 0, 100);
  const std::int64_t tag = p.new_tag();
  p.send(0, 2, 0, 64, tag);
  p.compute(1, 0, 30);
  p.recv(2, 0, 1, 64, tag);
  p.compute(2, 1, 50);
  System sys("sys", mesh(1, 3), p);
  const RunResult r = sys.run();
  ASSERT_EQ(r.pe_finish[2], r.total_cycles);
  ASSERT_LT(r.pe_finish[1], r.total_cycles);
  const RunTotals t = run_totals(r);
  EXPECT_EQ(t.compute, 100 + 50);
  // The message, from the cycle PE 0 queued it to the one PE 2 took it in.
  EXPECT_EQ(t.communication, r.total_cycles - 50 - 100);
  EXPECT_GT(t.communication, 0);
  EXPECT_EQ(run_totals_line(t), "  critical path    150 cycles computing + " +
                                    std::to_string(t.communication) +
                                    " cycles moving data or at barriers\n");
}

TEST(Outputs, RunTotalsCountASendHeldUpByAFullQueueAsCommunication) {
  // PE 0's NI queue holds 8 flits: its first 8-flit message fills it, so the second send waits
  // until the queue has room, then PE 0 computes 100 cycles and finishes last. The path: that
  // compute, and before it the send held up (moving data), from cycle 0.
  ProgramSet p(2);
  p.transfer(0, 1, -1, 128);
  p.transfer(0, 1, -1, 128);
  p.compute(0, -1, 100);
  HwSpec hw = load_hw_config(kBooksim,
                             {"topology.rows=1", "topology.cols=2", "ni.injection_queue_flits=8"});
  System sys("sys", hw, p);
  const RunResult r = sys.run();
  ASSERT_EQ(r.pe_finish[0], r.total_cycles);
  ASSERT_GT(r.total_cycles, 100) << "the second send waited";
  const RunTotals t = run_totals(r);
  EXPECT_EQ(t.compute, 100);
  EXPECT_EQ(t.communication, r.total_cycles - 100);
}

TEST(Outputs, RunTotalsStayOnAPeWhoseMessageWasThereBeforeItsReceive) {
  // PE 1 computes 500 cycles, then receives 64 bytes PE 0 sent at cycle 0, then computes 50:
  // the message arrived long before, so the path never leaves PE 1.
  ProgramSet p(2);
  p.layer_names = {"a"};
  const std::int64_t tag = p.new_tag();
  p.send(0, 1, 0, 64, tag);
  p.compute(1, 0, 500);
  p.recv(1, 0, 0, 64, tag);
  p.compute(1, 0, 50);
  System sys("sys", mesh(1, 2), p);
  const RunResult r = sys.run();
  ASSERT_EQ(r.total_cycles, 550);
  const RunTotals t = run_totals(r);
  EXPECT_EQ(t.compute, 550);
  EXPECT_EQ(t.communication, 0);
}

// A one-flit message to a neighbour takes the network's latency plus one cycle on these
// routers (System.OneFlitMessageTakesTheNetworkLatencyPlusOneCycle): 13 cycles.
constexpr std::int64_t kOneHopFlit = 13;

TEST(Outputs, RunTotalsStartFromTheLowestNumberedOfThePesFinishingLast) {
  // PE 0 computes 13 + 50 cycles. PE 2 waits for a one-flit message PE 1 sends at cycle 0,
  // then computes 50: both finish at 63. The path starts on PE 0, all compute; from PE 2 it
  // would be 50 computing and the message's 13 moving data.
  ProgramSet p(3);
  p.layer_names = {"a"};
  p.compute(0, 0, kOneHopFlit + 50);
  const std::int64_t tag = p.new_tag();
  p.send(1, 2, 0, 16, tag);
  p.recv(2, 1, 0, 16, tag);
  p.compute(2, 0, 50);
  System sys("sys", mesh(1, 3), p);
  const RunResult r = sys.run();
  ASSERT_EQ(r.pe_finish[0], r.total_cycles);
  ASSERT_EQ(r.pe_finish[2], r.total_cycles) << "PE 2's message took other than " << kOneHopFlit;
  const RunTotals t = run_totals(r);
  EXPECT_EQ(t.compute, kOneHopFlit + 50);
  EXPECT_EQ(t.communication, 0);
}

TEST(Outputs, RunTotalsGoThroughTheLowestNumberedOfThePesReachingABarrierTogether) {
  // On 2x2, PE 0 waits for a one-flit message its neighbour PE 1 sends at cycle 0 and PE 3
  // computes 13 cycles: both reach the barrier at 13, then every PE computes 5. Through PE 0
  // the path is the message (13 moving data) and 5 computing; through PE 3, 18 computing.
  ProgramSet p(4);
  p.layer_names = {"a"};
  const std::int64_t tag = p.new_tag();
  p.send(1, 0, 0, 16, tag);
  p.recv(0, 1, 0, 16, tag);
  p.compute(3, 0, kOneHopFlit);
  p.barrier_all(1);
  for (int pe = 0; pe < 4; ++pe) p.compute(pe, 0, 5);
  System sys("sys", mesh(2, 2), p);
  const RunResult r = sys.run();
  for (const Span& s : r.spans)  // the premise: the two reach the barrier together
    if (s.kind == StepKind::Recv) {
      ASSERT_EQ(s.end, kOneHopFlit) << "the message's time";
    }
  ASSERT_EQ(r.total_cycles, kOneHopFlit + 5);
  const RunTotals t = run_totals(r);
  EXPECT_EQ(t.compute, 5);
  EXPECT_EQ(t.communication, kOneHopFlit);
}

/// A VCD's value changes after the definitions: how many, each a new value of its signal and
/// at most one per signal and time (no zero-width glitches).
int expect_each_change_new(const std::string& vcd) {
  std::istringstream lines(vcd.substr(vcd.find("$enddefinitions")));
  std::map<std::string, std::string> held;
  std::set<std::string> at_this_time;
  int changes = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("#", 0) == 0) {
      at_this_time.clear();
    } else if (line.rfind("b", 0) == 0) {
      const std::string signal = line.substr(line.find(' ') + 1), v = line.substr(1, line.find(' ') - 1);
      EXPECT_TRUE(at_this_time.insert(signal).second) << "signal " << signal << " changed twice";
      if (held.count(signal)) {
        EXPECT_NE(held[signal], v) << "signal " << signal << " set again to " << v;
      }
      held[signal] = v;
      ++changes;
    }
  }
  return changes;
}

TEST(Vcd, ASpanEndingWhereTheNextStartsChangesItsStateOnce) {
  RunResult r;
  r.total_cycles = 25;
  r.spans = {{0, StepKind::Compute, 0, 0, 10}, {0, StepKind::Recv, 0, 10, 20},
             {1, StepKind::Reduce, 0, 0, 20}};
  r.links.resize(1);
  r.links[0].from = "node 0";
  r.links[0].to = "r(0,0)";
  r.link_windows = {
      {0, {{0, 3}}}, {10, {{0, 3}}}, {20, {{0, 1}}}};  // the same load twice, then less
  std::ostringstream vcd;
  write_vcd(vcd, r, 2, 10, 1.0);
  // At 0: PE 0 compute, PE 1 reduce, the link 3; then PE 0 recv and idle, PE 1 idle, the link
  // 1 and 0.
  EXPECT_EQ(expect_each_change_new(vcd.str()), 3 + 2 + 1 + 2) << vcd.str();
  EXPECT_NE(vcd.str().find("#10000\nb100 !\n#"), std::string::npos) << vcd.str();  // recv, alone
  EXPECT_EQ(vcd.str().substr(vcd.str().rfind("\n#")), "\n#25000\nb0 #\n") << "ends with the run";
}

}  // namespace
}  // namespace nocflow::sim
