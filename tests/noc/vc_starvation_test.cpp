// SPDX-License-Identifier: MIT
// Router::vc_starved_cycles: cycles an output link idles with every VC held while a packet waits
// for one. It separates the wormhole loss linkload does not model from bandwidth sharing.
// Router::credit_stalled_cycles: cycles it idles while a flit holding one of its VCs waits for a
// credit (the next buffer full).
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "tests/noc/noc_test_util.h"

namespace nocflow::noc {
namespace {

using testing::booksim_spec;
using testing::port_towards;

/// Every output port's sent flits plus VC-starved and credit-stalled cycles, at most the cycles
/// run: a cycle is counted once, as sending, as starved or as stalled.
void expect_no_cycle_counted_twice(const Network& net) {
  for (int r = 0; r < net.topology().num_routers(); ++r)
    for (int p = 0; p < net.topology().num_ports(r); ++p) {
      const Router& router = net.router(r);
      EXPECT_LE(router.flits_sent(p) + router.vc_starved_cycles(p, net.now()) +
                    router.credit_stalled_cycles(p, net.now()),
                net.now())
          << "router " << r << " port " << p;
    }
}

/// Whether output port `out` of `r` sent nothing in the step just run although a flit holding
/// one of its VCs was ready and that VC had no credit left.
bool waited_for_credit(const Router& r, int out, std::int64_t sent_before, Cycle now) {
  if (r.flits_sent(out) != sent_before) return false;
  for (int p = 0; p < r.num_ports(); ++p)
    for (int v = 0; v < r.vcs(); ++v) {
      const InputVc& s = r.input_vc(p, v);
      if (s.state == VcState::Active && s.out_port == out && s.count > 0 && s.ready <= now &&
          r.output_vc(out, s.out_vc).credits <= 0)
        return true;
    }
  return false;
}

/// A line of 16 routers (a 16x1 mesh, xy routing) with 2-stage routers, 4 VCs x 8 flits, every
/// node i sending one message of `flits` to node i + d, 8 NI channels, packets of at most
/// `packet_flits`.
struct Line {
  Network net;
  /// `up`: node i + d sends to node i instead.
  Line(int d, int flits, int packet_flits, bool up = false) : net(spec(packet_flits)) {
    for (int i = 0; i + d < 16; ++i)
      net.send(up ? i + d : i, {up ? i : i + d, flits, 0, i, false, packet_flits});
    net.drain();
    net.verify_drained();
    expect_no_cycle_counted_twice(net);
  }
  static NocSpec spec(int packet_flits) {  // configs/hw/mesh8x8.yaml's routers
    NocSpec s = booksim_spec(16, 1);
    s.router.lookahead_routing = s.router.speculative = true;
    s.router.buffer_depth = 8;
    s.ni.channels = 8;
    s.ni.max_packet_flits = packet_flits;
    return s;
  }
  /// The link from router r to r + 1.
  std::int64_t flits(int r) const {
    return net.router(r).flits_sent(port_towards(net.topology(), r, r + 1));
  }
  std::int64_t starved(int r) const {
    return net.router(r).vc_starved_cycles(port_towards(net.topology(), r, r + 1), net.now());
  }
  Cycle span(int r) const {
    return net.router(r).sent_span(port_towards(net.topology(), r, r + 1)).cycles();
  }
};

/// Three routers in a line, one VC per port, node 2's consumer taking a flit every 40 cycles
/// from a 1-flit queue.
NocSpec slow_line_spec() {
  NocSpec spec = booksim_spec(1, 3);
  spec.router.vcs = 1;
  spec.ni.ejection_queue_flits = 1;
  spec.watchdog_cycles = 100000;
  return spec;
}

/// On it: node 1's 32-flit packet to node 2, then node 0's 8-flit one, each if asked.
std::unique_ptr<Network> slow_line(bool node0, bool node1) {
  auto net = std::make_unique<Network>(slow_line_spec());
  net->set_sink_interval(2, 40);
  if (node1) net->send(1, {2, 32, 0, 1, false, 32});
  if (node0) net->send(0, {2, 8, 0, 0, false, 8});
  return net;
}

TEST(VcStarvation, FlowsJoiningEveryRouterOfALineStarveItsLinksOfVcs) {
  // Four 128-flit flows on every middle link, a new one joining at each router: a flow slowed
  // by the one that joins it holds a VC of the link before with each of its packets in flight
  // (16-flit packets, 8 per message), so the 4 VCs run out while the link could carry another
  // flow's flits. Its idle cycles are almost all VC-starved.
  const Line four(4, 128, 16);
  for (int r = 3; r <= 11; ++r) ASSERT_EQ(four.flits(r), 4 * 128) << r;
  for (int r = 3; r <= 8; ++r)  // further down fewer flows follow: less starved (0 at 11 -> 12)
    EXPECT_GT(four.starved(r), four.span(r) / 5) << "link " << r << " -> " << r + 1;
  // The middle link (r 7 -> 8): sending or VC-starved for 80 % of its span or more.
  EXPECT_GE(four.flits(7) + four.starved(7), 8 * four.span(7) / 10);
  EXPECT_GT(four.net.now(), 4 * 128 * 13 / 10);  // at least 1.3x the busiest link
  // The same flows up the line: the 9 busiest links tie, and the one reported is the most
  // starved of them (323 cycles); the first in link_loads order, router 4's, starves 0: no flow
  // joins after it.
  const Line up(4, 128, 16, true);
  const std::vector<LinkLoad> links = link_loads(up.net, up.net.now());
  const LinkLoad& reported = *busiest_links(links).router;
  std::vector<std::int64_t> tied;
  for (const LinkLoad& l : links)
    if (l.kind == LinkLoad::Kind::RouterToRouter && l.flits == 4 * 128)
      tied.push_back(l.vc_starved);
  ASSERT_EQ(tied.size(), 9u);
  EXPECT_EQ(reported.flits, 4 * 128);
  EXPECT_EQ(reported.vc_starved, *std::max_element(tied.begin(), tied.end()));
  EXPECT_GT(reported.vc_starved, tied.front());

  // Every flow crosses the middle link and none joins after it: the flows drain past it, which
  // then sends back to back and never starves.
  const Line eight(8, 128, 16);
  EXPECT_EQ(eight.flits(7), 8 * 128);
  EXPECT_EQ(eight.starved(7), 0);
  EXPECT_EQ(eight.span(7), 8 * 128);

  // One packet per message: a flow holds at most one VC per link, 4 flows on 4 VCs.
  const Line whole(4, 128, 128);
  for (int r = 3; r <= 11; ++r) EXPECT_EQ(whole.starved(r), 0) << r;
}

TEST(VcStarvation, ASleepingRouterCountsTheCyclesItSleepsThrough) {
  // One VC per port; node 2's consumer takes a flit every 40 cycles from a 1-flit queue. Node
  // 1's 32-flit packet takes router 1's east VC first and holds it until its tail leaves,
  // hundreds of cycles later; node 0's packet waits at router 1 for that VC meanwhile. Router 1
  // sleeps until each credit returns, sends one flit and sleeps again. Watched from outside,
  // cycle by cycle: every cycle node 0's head was ready for VA, the VC was held and the link
  // sent nothing is counted, the ones router 1 slept through included (a 40th of them without
  // the sleep accounting).
  const auto both = slow_line(true, true);
  const Router& r1 = both->router(1);
  const int east = port_towards(both->topology(), 1, 2);
  const int west = port_towards(both->topology(), 1, 0);  // a link's two ends share its port
  std::int64_t watched = 0;
  while (!both->empty()) {
    const Cycle now = both->now();
    const std::int64_t sent = r1.flits_sent(east);
    both->step();
    const InputVc& head = r1.input_vc(west, 0);
    if (head.state == VcState::VcAlloc && head.ready <= now && r1.output_vc(east, 0).in_use &&
        r1.flits_sent(east) == sent)
      ++watched;
  }
  both->verify_drained();
  expect_no_cycle_counted_twice(*both);
  EXPECT_EQ(r1.flits_sent(east), 40);
  EXPECT_GT(watched, 20 * 40);
  EXPECT_EQ(r1.vc_starved_cycles(east, both->now()), watched);
  // Either packet alone: nothing waits for a VC another packet holds.
  for (const auto& alone : {slow_line(true, false), slow_line(false, true)}) {
    alone->drain();
    expect_no_cycle_counted_twice(*alone);
    for (int r = 0; r < 3; ++r)
      for (int p = 0; p < alone->topology().num_ports(r); ++p)
        EXPECT_EQ(alone->router(r).vc_starved_cycles(p, alone->now()), 0) << r << " " << p;
  }
}

TEST(CreditStall, ALinkWhoseNextBufferIsFullCountsTheCyclesItWaitsForACredit) {
  // Node 1's 32-flit packet alone, towards node 2, whose consumer takes a flit every 40 cycles
  // from a 1-flit queue: router 1's east link fills router 2's buffer and then sends a flit each
  // time a credit returns, sleeping in between. Watched cycle by cycle, every cycle its flit
  // waited for a credit and it sent nothing is counted, the slept ones included; no head ever
  // waits for a VC, so nothing is VC-starved.
  const auto net = slow_line(false, true);
  const Router& r1 = net->router(1);
  const int east = port_towards(net->topology(), 1, 2);
  std::int64_t watched = 0;
  while (!net->empty()) {
    const Cycle now = net->now();
    const std::int64_t sent = r1.flits_sent(east);
    net->step();
    watched += waited_for_credit(r1, east, sent, now);
  }
  net->verify_drained();
  expect_no_cycle_counted_twice(*net);
  EXPECT_EQ(r1.flits_sent(east), 32);
  EXPECT_GT(watched, 20 * 40);
  EXPECT_EQ(r1.credit_stalled_cycles(east, net->now()), watched);
  EXPECT_EQ(r1.vc_starved_cycles(east, net->now()), 0);
  // With a consumer that keeps up and buffers longer than the packet (4-flit buffers would not
  // cover the credit loop: a lone flow waits for credits then too), nothing waits for a credit.
  NocSpec deep = slow_line_spec();
  deep.ni.ejection_queue_flits = 0;
  deep.router.buffer_depth = 32;
  Network fast(deep);
  fast.send(1, {2, 32, 0, 1, false, 32});
  fast.drain();
  for (int r = 0; r < 3; ++r)
    for (int p = 0; p < fast.topology().num_ports(r); ++p)
      EXPECT_EQ(fast.router(r).credit_stalled_cycles(p, fast.now()), 0) << r << " " << p;
}

}  // namespace
}  // namespace nocflow::noc
