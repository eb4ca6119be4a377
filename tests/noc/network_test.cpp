// SPDX-License-Identifier: MIT
// Whole networks without the SystemC kernel: links, back-pressure, meshes, crossbar,
// conservation checks, watchdog, determinism, every pattern and routing under load.
#include <gtest/gtest.h>

#include <array>
#include <vector>

#include "noc/base/error.h"
#include "tests/noc/noc_test_util.h"

namespace nocflow::noc {
namespace {

using testing::booksim_spec;
using testing::run_plain;

struct Counter : DeliveryListener {
  std::vector<std::vector<int>> got;  // [src][dst] packets
  std::vector<Cycle> arrivals;
  explicit Counter(int n) : got(n, std::vector<int>(n, 0)) {}
  void delivered(const Packet& p, Cycle now) override {
    ++got[p.src][p.dest];
    arrivals.push_back(now);
  }
};

TEST(Link, SinglePacketLatencyAndStreaming) {
  // 1x2 mesh: node 0 -> node 1 crosses 2 routers: 5 * 2 + 2 = 12 cycles for the first packet.
  // The source cycles its 4 injection VCs round-robin. Packet 3 gets output VC 0 at router 0
  // (freed by packet 1's tail) and so queues behind packet 1 at router 1's input VC 0: by
  // BookSim's rule it routes only in the cycle after that tail leaves, arriving one cycle late;
  // every other packet follows its predecessor by one cycle.
  Network net(booksim_spec(1, 2));
  Counter c(2);
  net.set_listener(&c);
  for (int i = 0; i < 10; ++i) net.send(0, {1, 1, 0});
  net.drain();
  net.verify_drained();
  ASSERT_EQ(c.arrivals.size(), 10u);
  EXPECT_EQ(c.arrivals, (std::vector<Cycle>{12, 13, 15, 16, 17, 18, 19, 20, 21, 22}));
}

TEST(Link, AMessageCreatedLaterLeavesAtItsCreationCycle) {
  // Queued at cycle 0 with creation cycle 20, a one-flit message leaves at 20 and arrives 12
  // cycles later, as one queued at 20 would. The NI that waits for it may not sleep as blocked
  // (nothing arrives to wake it).
  Network net(booksim_spec(1, 2));
  Counter c(2);
  net.set_listener(&c);
  net.send(0, {1, 1, 20});
  net.drain();
  net.verify_drained();
  EXPECT_EQ(c.arrivals, (std::vector<Cycle>{20 + 12}));
}

TEST(Link, SlowSinkBackPressuresWithoutLoss) {
  // The consumer at node 1 takes one flit every 4 cycles from a 2-flit reassembly queue, so the
  // 40 flits are accepted at that pace: the last can enter reassembly only after 37 drains
  // since the first flit arrived (cycle 12). Nothing is lost or duplicated.
  NocSpec spec = booksim_spec(1, 2);
  spec.ni.ejection_queue_flits = 2;
  Network net(spec);
  net.set_sink_interval(1, 4);
  Counter c(2);
  net.set_listener(&c);
  for (int i = 0; i < 10; ++i) net.send(0, {1, 4, 0});
  net.drain();
  net.verify_drained();
  EXPECT_EQ(c.got[0][1], 10);
  EXPECT_EQ(net.flits_ejected(), 40);
  EXPECT_GE(c.arrivals.back(), 12 + 4 * 37);
  EXPECT_LE(c.arrivals.back(), 12 + 4 * 40);
  // Without the slow consumer the same packets stream at one flit per cycle.
  Network fast(booksim_spec(1, 2));
  Counter f(2);
  fast.set_listener(&f);
  for (int i = 0; i < 10; ++i) fast.send(0, {1, 4, 0});
  fast.drain();
  EXPECT_LE(f.arrivals.back(), 12 + 3 + 40 + 4);
}

TEST(Mesh2x2, AllPairsDeliveredExactlyOnce) {
  Network net(booksim_spec(2, 2));
  Counter c(4);
  net.set_listener(&c);
  for (int rep = 0; rep < 5; ++rep)
    for (int s = 0; s < 4; ++s)
      for (int d = 0; d < 4; ++d) net.send(s, {d, 1 + (s + d + rep) % 6, 0});
  net.drain();
  net.verify_drained();
  for (int s = 0; s < 4; ++s)
    for (int d = 0; d < 4; ++d) EXPECT_EQ(c.got[s][d], 5);
}

TEST(Mesh2x2, WestFirstBreaksAFreeCreditTieTowardsTheLowerNumberedPort) {
  // One packet at zero load from r(0,0) to r(1,1): west_first offers East and South, both with
  // every downstream credit free. Router::compute_route keeps the first port with the most
  // free credits (a strict >), and candidates are tried from the lowest port number up, so the
  // lower-numbered of the two (MeshPort, noc/topology/topology.h: East = 0 < South = 2) wins.
  NocSpec spec = booksim_spec(2, 2);
  spec.router.routing = "west_first";
  Network net(spec);
  const Topology& t = net.topology();
  const int src = 0, dst = 3, flits = 4;  // nodes of r(0,0) and r(1,1)
  const int east = int(MeshPort::East), south = int(MeshPort::South);
  static_assert(int(MeshPort::East) < int(MeshPort::South), "the test's premise");
  const int r0 = t.node_router(src);
  ASSERT_EQ(make_routing("west_first")->route(t, r0, t.node_port(src), dst),
            (PortMask{1} << east) | (PortMask{1} << south))
      << "both ports must be candidates for the tie to arise";
  net.send(src, {dst, flits, 0});
  net.drain();
  net.verify_drained();
  EXPECT_EQ(net.router(r0).flits_sent(east), flits);
  EXPECT_EQ(net.router(r0).flits_sent(south), 0);
  // ...and then South from r(1,0), the East neighbour, the only way left (minimal routing).
  EXPECT_EQ(net.router(t.out(r0, east).id).flits_sent(south), flits);
  EXPECT_EQ(net.router(t.out(r0, south).id).flits_sent(east), 0);
}

TEST(Mesh4x4, UniformLoadIsConservedAndAccepted) {
  Network net(booksim_spec(4, 4));
  TrafficOptions o;
  o.rate = 0.3;
  o.packet_flits = 4;
  o.sample_period = 2000;
  const TrafficResult r = run_plain(net, o);  // verifies conservation at the end
  EXPECT_TRUE(r.stable);
  EXPECT_NEAR(r.accepted, 0.3, 0.015);
  EXPECT_EQ(r.flits_injected, r.flits_ejected);
  EXPECT_NEAR(r.avg_hops, 1 + 2.0 * (16 - 1) / (3 * 4), 0.1);  // BookSim's mean for k x k
}

TEST(Crossbar, UniformLoadIsOneHop) {
  Network net(testing::crossbar_spec(16));
  TrafficOptions o;
  o.rate = 0.5;
  o.packet_flits = 2;
  o.sample_period = 2000;
  const TrafficResult r = run_plain(net, o);
  EXPECT_TRUE(r.stable);
  EXPECT_NEAR(r.accepted, 0.5, 0.025);
  EXPECT_DOUBLE_EQ(r.avg_hops, 1.0);
}

TEST(Crossbar, AllocatorIterationsFollowTheTopologyUnlessSet) {
  // router.alloc_iterations 0: one on a mesh router, ceil(log2 ports) on a crossbar switch.
  auto spec = [](NocSpec s, int iterations) {
    s.router.alloc_iterations = iterations;
    return s;
  };
  auto runs = [&](const NocSpec& s, int iterations) {
    return alloc_iterations_for(spec(s, iterations).router, s.topology);
  };
  EXPECT_EQ(runs(booksim_spec(16, 16), 0), 1);
  const std::vector<std::pair<int, int>> ports_iterations = {
      {2, 1}, {3, 2}, {16, 4}, {17, 5}, {64, 6}};
  for (const auto& [ports, iterations] : ports_iterations)
    EXPECT_EQ(runs(testing::crossbar_spec(ports), 0), iterations) << ports << " ports";
  EXPECT_EQ(runs(testing::crossbar_spec(16), 2), 2);

  // The switch runs them: uniform 4-flit packets near a 16-port crossbar's saturation run as
  // with 4 iterations, and a single iteration, whose matchings leave inputs idle that a free
  // output could serve, delivers them later (320 against 163 cycles on average).
  TrafficOptions o;
  o.rate = 0.8;
  o.packet_flits = 4;
  o.fixed_cycles = 3000;
  auto latency = [&](int iterations) {
    Network net(spec(testing::crossbar_spec(16), iterations));
    return run_plain(net, o).avg_packet_latency;
  };
  const double by_topology = latency(0), one = latency(1);
  EXPECT_DOUBLE_EQ(by_topology, latency(4));
  EXPECT_GT(one, by_topology * 1.2) << "1 iteration: " << one << ", 4: " << by_topology;
  // A mesh router runs one.
  o.rate = 0.3;
  Network by_topology_mesh(spec(booksim_spec(4, 4), 0)), one_mesh(spec(booksim_spec(4, 4), 1));
  EXPECT_DOUBLE_EQ(run_plain(by_topology_mesh, o).avg_packet_latency,
                   run_plain(one_mesh, o).avg_packet_latency);
}

TEST(Conservation, UndrainedNetworkIsReportedWithRouterPortAndVc) {
  Network net(booksim_spec(2, 2));
  net.send(0, {3, 8, 0});
  for (int i = 0; i < 9; ++i) net.step();
  EXPECT_FALSE(net.empty());
  try {
    net.verify_drained();
    FAIL() << "expected CheckError";
  } catch (const CheckError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("router r("), std::string::npos) << m;
    EXPECT_NE(m.find("VC "), std::string::npos) << m;
  }
}

/// Clockwise around a 2x2 ring, never ejecting early: 0 -> 1 -> 3 -> 2 -> 0 (a cyclic channel
/// dependency, so with one VC long packets deadlock).
class Clockwise final : public RoutingFunction {
 public:
  PortMask route(const Topology& t, int router, int, int dest) const override {
    if (t.node_router(dest) == router) return PortMask{1} << int(MeshPort::Local);
    static const MeshPort next[] = {MeshPort::East, MeshPort::South, MeshPort::North,
                                    MeshPort::West};
    return PortMask{1} << int(next[router]);
  }
};

TEST(Watchdog, CatchesADeadlockAndSaysWhatIsStuckWhere) {
  NocSpec spec = booksim_spec(2, 2);
  spec.router.vcs = 1;
  spec.router.buffer_depth = 2;
  spec.watchdog_cycles = 200;
  Network net(spec, std::make_unique<Clockwise>());
  // Every node sends long packets two hops clockwise: each holds its link and waits on the next.
  const int two_ahead[] = {3, 2, 1, 0};
  for (int rep = 0; rep < 4; ++rep)
    for (int s = 0; s < 4; ++s) net.send(s, {two_ahead[s], 16, 0});
  try {
    net.drain();
    FAIL() << "expected the watchdog to fire";
  } catch (const CheckError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("watchdog: no flit moved for 201 cycles"), std::string::npos) << m;
    EXPECT_NE(m.find("router r(0,0) in"), std::string::npos) << m;
    EXPECT_NE(m.find("with 0 credit(s)"), std::string::npos) << m;
  }
}

TEST(Watchdog, XyRoutingOnTheSameLoadDoesNotDeadlock) {
  NocSpec spec = booksim_spec(2, 2);
  spec.router.vcs = 1;
  spec.router.buffer_depth = 2;
  spec.watchdog_cycles = 200;
  Network net(spec);
  const int two_ahead[] = {3, 2, 1, 0};
  for (int rep = 0; rep < 4; ++rep)
    for (int s = 0; s < 4; ++s) net.send(s, {two_ahead[s], 16, 0});
  net.drain();
  net.verify_drained();
  EXPECT_EQ(net.flits_ejected(), 4 * 4 * 16);
}

TEST(Determinism, SameSeedSameResultsOtherSeedOtherResults) {
  auto run = [](std::uint64_t seed) {
    Network net(booksim_spec(4, 4));
    TrafficOptions o;
    o.rate = 0.25;
    o.packet_flits = 3;
    o.seed = seed;
    o.sample_period = 1000;
    return run_plain(net, o);
  };
  const TrafficResult a = run(5), b = run(5), c = run(6);
  EXPECT_EQ(a.avg_packet_latency, b.avg_packet_latency);
  EXPECT_EQ(a.flits_injected, b.flits_injected);
  EXPECT_EQ(a.cycles, b.cycles);
  ASSERT_EQ(a.links.size(), b.links.size());
  for (std::size_t i = 0; i < a.links.size(); ++i) EXPECT_EQ(a.links[i].flits, b.links[i].flits);
  EXPECT_NE(a.flits_injected, c.flits_injected);
}

TEST(Patterns, PermutationsAreBijective) {
  const Topology t = Topology::build({"mesh", 8, 8, 0});
  Rng rng(1);
  for (const char* name : {"transpose", "bitcomp", "bitrev", "shuffle", "tornado", "neighbor"}) {
    auto p = make_pattern(name, t);
    std::vector<int> hit(64, 0);
    for (int s = 0; s < 64; ++s) ++hit[p->dest(s, rng)];
    for (int d = 0; d < 64; ++d) EXPECT_EQ(hit[d], 1) << name << " dest " << d;
  }
  EXPECT_EQ(make_pattern("transpose", t)->dest(8 * 2 + 5, rng), 8 * 5 + 2);
  EXPECT_EQ(make_pattern("bitcomp", t)->dest(0, rng), 63);
  EXPECT_EQ(make_pattern("tornado", t)->dest(0, rng), 3 * 8 + 3);  // (0 + 4 - 1) mod 8 in x and y
}

TEST(Patterns, UnsuitableTopologiesAreRejected) {
  const Topology odd = Topology::build({"mesh", 3, 3, 0});
  EXPECT_THROW(make_pattern("bitrev", odd), InputError);
  EXPECT_THROW(make_pattern("transpose", Topology::build({"mesh", 2, 4, 0})), InputError);
  EXPECT_THROW(make_pattern("random", odd), InputError);
}

TEST(Patterns, UniformExcludingSelfNeverPicksTheSource) {
  const Topology t = Topology::build({"mesh", 4, 4, 0});
  PatternOptions o;
  o.exclude_self = true;
  auto p = make_pattern("uniform", t, o);
  Rng rng(3);
  for (int i = 0; i < 10000; ++i) EXPECT_NE(p->dest(i % 16, rng), i % 16);
}

class EveryPattern : public ::testing::TestWithParam<std::string> {};

TEST_P(EveryPattern, RunsConservedOn4x4UnderEveryRouting) {
  for (const char* routing : {"xy", "yx", "west_first"}) {
    NocSpec spec = booksim_spec(4, 4);
    spec.router.routing = routing;
    Network net(spec);
    TrafficOptions o;
    o.pattern = GetParam();
    o.rate = 0.15;
    o.packet_flits = 4;
    o.fixed_cycles = 3000;
    const TrafficResult r = run_plain(net, o);
    EXPECT_GT(r.flits_ejected, 0) << routing;
  }
}

INSTANTIATE_TEST_SUITE_P(Patterns, EveryPattern,
                         ::testing::Values("uniform", "transpose", "bitcomp", "bitrev", "shuffle",
                                           "tornado", "neighbor", "hotspot"));

TEST(Lookahead, TwoStageRouterTakesThreeCyclesPerHop) {
  NocSpec spec = booksim_spec(4, 4);
  spec.router.lookahead_routing = true;
  spec.router.speculative = true;
  Network net(spec);
  Counter c(16);
  net.set_listener(&c);
  net.send(0, {15, 1, 0});  // 7 routers
  net.drain();
  ASSERT_EQ(c.arrivals.size(), 1u);
  EXPECT_EQ(c.arrivals[0], 3 * 7 + 2);
}

/// Credits an output port of `r` has back: the flits it sent less the slots its VCs still miss.
std::int64_t credits_returned(const Router& r, int out) {
  std::int64_t missing = 0;
  for (int v = 0; v < r.vcs(); ++v) missing += r.credit_capacity(out) - r.output_vc(out, v).credits;
  return r.flits_sent(out) - missing;
}

TEST(CreditLoop, ACreditIsUsableOneCyclePlusTheLinkAfterItsFlitLeavesTheBuffer) {
  // noc/README.md, "One cycle": a flit that leaves an input buffer sends its slot's credit
  // upstream, usable 1 + link latency cycles later, whether a router forwards it or the
  // destination NI takes it. Watched cycle by cycle on a 1x3 mesh, node 0 sending 40 flits to
  // node 2 through 2-flit buffers (so the credit loop, not the link, paces the stream): after
  // cycle t each output port has back exactly the credits of the flits the next buffer passed
  // on by cycle t - 1 - latency.
  for (const int latency : {1, 3}) {
    NocSpec spec = booksim_spec(1, 3);
    spec.router.buffer_depth = 2;
    spec.link.latency = latency;
    Network net(spec);
    const Topology& topo = net.topology();
    const int r0_east = testing::port_towards(topo, 0, 1);
    const int r1_east = testing::port_towards(topo, 1, 2);
    const int r2_node = testing::port_towards(topo, 2, 2, PortPeer::Kind::Node);
    net.send(0, {2, 40, 0});
    // After each cycle: flits router 1 forwarded, router 2 forwarded, NI 2 took.
    std::vector<std::array<std::int64_t, 3>> passed;
    while (!net.empty()) {
      const Cycle t = net.now();
      net.step();
      passed.push_back({net.router(1).flits_sent(r1_east), net.router(2).flits_sent(r2_node),
                        net.ejected_at(2)});
      const auto before = [&](int k) {
        return t - 1 - latency >= 0 ? passed[t - 1 - latency][k] : 0;
      };
      ASSERT_EQ(credits_returned(net.router(0), r0_east), before(0))
          << "latency " << latency << " cycle " << t;
      ASSERT_EQ(credits_returned(net.router(1), r1_east), before(1))
          << "latency " << latency << " cycle " << t;
      ASSERT_EQ(credits_returned(net.router(2), r2_node), before(2))
          << "latency " << latency << " cycle " << t;
    }
    EXPECT_EQ(net.ejected_at(2), 40);
    EXPECT_GT(net.router(0).credit_stalled_cycles(r0_east, net.now()), 0)
        << "the buffers never ran out of credits: the loop was not exercised";
  }
}

struct MessageArrivals : DeliveryListener {
  std::vector<std::vector<Cycle>> by_tag;  // [tag] packet arrival cycles
  void delivered(const Packet& p, Cycle now) override {
    if (by_tag.size() <= static_cast<std::size_t>(p.tag)) by_tag.resize(p.tag + 1);
    by_tag[p.tag].push_back(now);
  }
};

/// Node `src` of a 1x3 mesh with `channels` NI channels sends `first` (tag 0) then `second`
/// (tag 1); node 1's consumer takes a flit every `node1_interval` cycles (0: at once) from a
/// 2-flit reassembly queue. The cycles at which each message's last packet arrived.
std::pair<Cycle, Cycle> last_arrivals(int channels, NewPacket first, NewPacket second,
                                      int node1_interval = 0, int src = 0) {
  NocSpec spec = booksim_spec(1, 3);
  spec.ni.channels = channels;
  if (node1_interval > 0) spec.ni.ejection_queue_flits = 2;
  Network net(spec);
  if (node1_interval > 0) net.set_sink_interval(1, node1_interval);
  MessageArrivals a;
  net.set_listener(&a);
  first.tag = 0;
  second.tag = 1;
  net.send(src, first);
  net.send(src, second);
  net.drain();
  net.verify_drained();
  EXPECT_EQ(net.flits_ejected(), first.flits + second.flits);
  EXPECT_EQ(a.by_tag.size(), 2u);
  if (a.by_tag.size() != 2u) return {-1, -1};
  auto packets = [](const NewPacket& m) { return (m.flits + m.packet_flits - 1) / m.packet_flits; };
  EXPECT_EQ(static_cast<int>(a.by_tag[0].size()), packets(first));
  EXPECT_EQ(static_cast<int>(a.by_tag[1].size()), packets(second));
  return {a.by_tag[0].back(), a.by_tag[1].back()};
}

TEST(NetworkInterface, OneChannelCutsAMessageIntoItsPacketsInOrder) {
  // A 40-flit message in packets of at most 16 flits arrives exactly as the 16-, 16- and
  // 8-flit packets sent one by one.
  Network whole(booksim_spec(1, 2)), parts(booksim_spec(1, 2));
  Counter w(2), p(2);
  whole.set_listener(&w);
  parts.set_listener(&p);
  whole.send(0, {1, 40, 0, 0, false, 16});
  for (int flits : {16, 16, 8}) parts.send(0, {1, flits, 0});
  whole.drain();
  parts.drain();
  whole.verify_drained();
  EXPECT_EQ(w.got[0][1], 3);
  EXPECT_EQ(w.arrivals, p.arrivals);
  EXPECT_EQ(whole.flits_ejected(), 40);
}

TEST(NetworkInterface, SeveralChannelsInterleaveMessages) {
  // 64 flits to node 1, then 64 to node 2. One channel sends them one after the other; two
  // alternate their packets, so both finish together, close to when the first finished alone
  // (the injection channel is shared).
  const NewPacket to1{1, 64, 0, 0, false, 8}, to2{2, 64, 0, 0, false, 8};
  const auto [first1, second1] = last_arrivals(1, to1, to2);
  const auto [first2, second2] = last_arrivals(2, to1, to2);
  EXPECT_GE(second1 - first1, 64);  // the second message starts after the first
  EXPECT_LE(std::abs(second2 - first2), 10);
  EXPECT_LE(std::max(first2, second2), second1 + 2);
}

TEST(NetworkInterface, SeveralChannelsSendAPairsMessagesInOrder) {
  // Two 64-flit messages from node 0 to node 1 share one route: interleaving them would only
  // delay the first. With eight channels they leave one after the other, exactly as with one.
  const NewPacket a{1, 64, 0, 0, false, 8}, b{1, 64, 0, 0, false, 8};
  const auto [first1, second1] = last_arrivals(1, a, b);
  const auto [first8, second8] = last_arrivals(8, a, b);
  EXPECT_EQ(first8, first1);
  EXPECT_EQ(second8, second1);
  EXPECT_GE(second8 - first8, 64);
}

TEST(NetworkInterface, TheOldestMessageSendsFirst) {
  // Node 1, the middle of a 1x3 mesh, sends 8 flits west to node 0, then 8 east to node 2:
  // the same distance. Two channels alternate their flits, the oldest first, so it ends first.
  const auto [west, east] =
      last_arrivals(2, NewPacket{0, 8, 0, 0, false, 8}, NewPacket{2, 8, 0, 0, false, 8}, 0, 1);
  EXPECT_EQ(east - west, 1);
}

TEST(NetworkInterface, AMessageHeldAtItsDestinationNoLongerHoldsUpTheNextWithTwoChannels) {
  // Node 1's consumer takes a flit every 8 cycles; node 0 sends it 64 flits, then 8 flits to
  // node 2. One channel: the second message waits behind the first (head-of-line blocking).
  // Two channels: it arrives long before the first completes.
  const NewPacket slow{1, 64, 0, 0, false, 4}, next{2, 8, 0, 0, false, 4};
  const auto [slow1, next1] = last_arrivals(1, slow, next, 8);
  const auto [slow2, next2] = last_arrivals(2, slow, next, 8);
  EXPECT_GE(slow1, 8 * 60);
  EXPECT_GT(next1, slow1 - 8 * 16);  // sent after the slow one's last packet left node 0
  EXPECT_LT(next2, slow2 / 4);
  EXPECT_GE(slow2, 8 * 60);  // the slow consumer still sets the first message's pace
}

}  // namespace
}  // namespace nocflow::noc
