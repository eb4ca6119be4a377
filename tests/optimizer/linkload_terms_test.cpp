// SPDX-License-Identifier: MIT
// linkload's terms on hand-built transfer lists and loads: all-gathers as rings, the route-walking
// tie and sharing rules, router contention on router links and on the channels behind them, the
// link schedule of one message per PE, ring rounds (the tables: linkload_table_test.cpp).
#include <gtest/gtest.h>

#include <algorithm>

#include "optimizer/cost/linkload_model.h"
#include "optimizer/cost/round_robin_fluid.h"
#include "optimizer/frontend/graph_builder.h"
#include "optimizer/partition/transfers.h"
#include "tests/optimizer/fast_path_network.h"
#include "tests/optimizer/make_choice.h"

namespace nocflow::optimizer {
namespace {

// An all-gather over all 64 PEs of an 8x8 (OUTP=64 on both sides of a 1x1 conv): with 32-byte
// pieces the 63 ring rounds' hop latencies cost more than the direct messages' contention,
// with 2 KiB pieces the direct messages' contention costs more than the rounds. auto runs
// (rings_to_run) and prices (edge_cost, the tables) the cheaper.
TEST(LinkloadModel, AutoRunsAnAllGatherAsRingsWhereTheyPriceLower) {
  for (const auto& [side, rings_win] : {std::pair{4, false}, std::pair{32, true}}) {
    GraphBuilder b("gather", 2);
    b.conv(b.conv(b.input({1, 64, side, side}), 64, 1, 1, 0, 1, false, "producer"), 64, 1, 1, 0, 1,
           false, "consumer");
    const Graph g = b.finish();
    const Workload w = build_workload(g);
    const LayerEdge& e = w.edges.at(0);
    const Choice c = make({{PartDim::Outp, 64}});
    HwDesc hw = machine("mesh", 8, 8, "xy");
    double cycles[3];
    for (const auto mode :
         {HwDesc::AllGather::Direct, HwDesc::AllGather::Ring, HwDesc::AllGather::Auto}) {
      hw.all_gather = mode;
      const LinkloadModel model(hw);
      cycles[static_cast<int>(mode)] = model.edge_cost(w, e, c, c).cycles;
      EXPECT_EQ(model.edge_cycles_table(w, e, {c}, {c}).at(0), cycles[static_cast<int>(mode)]);
      const PlacedLayer p{&w.layers[0], c, place(c, hw.grid())},
          q{&w.layers[1], c, place(c, hw.grid())};
      const std::size_t rings = model.rings_to_run(w, e, p, q).size();
      EXPECT_EQ(rings,
                mode == HwDesc::AllGather::Direct || (mode == HwDesc::AllGather::Auto && !rings_win)
                    ? 0u
                    : 1u)
          << side << " " << static_cast<int>(mode);
    }
    EXPECT_EQ(cycles[1] < cycles[0], rings_win) << side;
    EXPECT_EQ(cycles[2], std::min(cycles[0], cycles[1])) << side;
  }
}

TEST(LinkloadModel, RouteWalkingTellsASharedTieFromOneSourcesLink) {
  // A 1x4 mesh, PEs 0..3 left to right, 2-flit messages.
  const LinkloadModel model(machine("mesh", 1, 4, "xy"));
  const auto bytes =
      static_cast<std::int64_t>(2 * machine("mesh", 1, 4, "xy").link_bytes_per_cycle);
  // 0 -> 2: every link of the route carries the injection's 2 flits, one source: not shared.
  const LinkLoad one = model.route({{0, 2, bytes}});
  EXPECT_EQ(one.max_router_link_flits, one.max_endpoint_flits);
  EXPECT_FALSE(one.busiest_router_link_shared);
  // 0 -> 3 and 1 -> 3, each two 1-flit messages (one each would be scheduled, not slowed):
  // link 2 -> 3 carries 4 flits of two sources, as many as 3's ejection.
  const std::int64_t flit = bytes / 2;
  const LinkLoad two = model.route({{0, 3, flit}, {0, 3, flit}, {1, 3, flit}, {1, 3, flit}});
  EXPECT_EQ(two.max_router_link_flits, 4);
  EXPECT_EQ(two.max_endpoint_flits, 4);
  EXPECT_TRUE(two.busiest_router_link_shared);
  // 0 -> 3 twice: 4 flits on every link, one source.
  const LinkLoad twice = model.route({{0, 3, bytes}, {0, 3, bytes}});
  EXPECT_EQ(twice.max_router_link_flits, twice.max_endpoint_flits);
  EXPECT_FALSE(twice.busiest_router_link_shared);
  // Shared, but not the busiest router link: 0 -> 1 (6 flits) and 2 -> 1 (2 flits) share no
  // link; add 3 -> 1 (2 flits): 2 -> 1 then carries 4 flits of two sources, under 0 -> 1's 6.
  const LinkLoad under = model.route({{0, 1, 3 * bytes}, {2, 1, bytes}, {3, 1, bytes}});
  EXPECT_EQ(under.max_router_link_flits, 6);
  EXPECT_FALSE(under.busiest_router_link_shared);
  // Calibrated, the shared tie is slowed and the single-source one is not.
  HwDesc hw = machine("mesh", 1, 4, "xy");
  hw.router_slowdown = 1.0;
  const LinkloadModel slowed(hw);
  EXPECT_GT(slowed.serialization_cycles(two), model.serialization_cycles(two));
  EXPECT_EQ(slowed.serialization_cycles(twice), model.serialization_cycles(twice));
}

TEST(LinkloadModel, SharedRouterLinkContentionDelaysTheChannelThatBinds) {
  // A 4x4 mesh (PEs row-major), xy routing. PE 5 sends 8-flit halos to its four neighbours
  // (32 flits on its injection channel, 8 on each of its router links); PEs 2 and 3 send
  // 2-flit messages down column 3, which meet on link 3 -> 7: 10 flits of two sources for
  // three destinations, the busiest router link, below the channel, its messages a quarter of
  // the halos' length. HALO_2D on 16x16 at 4 MiB is this at scale (512-flit halos, 32-flit
  // rows and corners four mesh rows down a column): simulated 1,913 cycles, calibrated
  // linkload 1,236 without the term, 1,516 with it.
  HwDesc hw = machine("mesh", 4, 4, "xy");
  const auto flit = static_cast<std::int64_t>(hw.link_bytes_per_cycle);
  const LinkloadModel plain(hw);
  hw.router_slowdown = 1.0;
  const LinkloadModel calibrated(hw);
  auto with = [&](std::vector<Transfer> column, int halo_flits, int halos_each) {
    for (const int n : {1, 4, 6, 9})
      for (int k = 0; k < halos_each; ++k) column.push_back({5, n, halo_flits * flit});
    return calibrated.route(column);
  };
  const std::vector<Transfer> down = {
      {3, 11, 2 * flit}, {2, 15, 2 * flit}, {3, 7, 2 * flit}, {2, 11, 2 * flit}, {3, 15, 2 * flit}};
  const LinkLoad halo = with(down, 8, 1);
  ASSERT_EQ(halo.max_endpoint_flits, 32);
  ASSERT_EQ(halo.max_router_link_flits, 10);
  EXPECT_TRUE(halo.busiest_router_link_shared);
  EXPECT_TRUE(halo.short_messages);
  EXPECT_EQ(halo.busiest_router_link_shortest, 2);
  // U = 58 flit-hops (the halos' 32, the column's 26) over 48 links × 10 flits: the term is
  // small here (0.03 cycles), exact all the same.
  ASSERT_EQ(halo.router_flit_hops, 58);
  ASSERT_EQ(halo.router_links, 48);
  const double u = 58 / 480.0;
  const double lost = 10 * 1.0 * u * u * 2 / (2 + hw.vc_buffer_flits);
  EXPECT_GT(lost, 0);
  EXPECT_DOUBLE_EQ(plain.transfer_cycles(halo), plain.latency_cycles(halo) + 32);
  EXPECT_DOUBLE_EQ(calibrated.transfer_cycles(halo), plain.latency_cycles(halo) + 32 + lost);
  EXPECT_DOUBLE_EQ(calibrated.serialization_cycles(halo), 32 + lost);
  EXPECT_DOUBLE_EQ(calibrated.overlap_cycles(halo), 0);
  // A gather down the column (every 2-flit message to PE 15): the link's flows wait for 15's
  // ejection, not for VCs; not slowed.
  const LinkLoad gather = with({{3, 15, 2 * flit},
                                {3, 15, 2 * flit},
                                {3, 15, 2 * flit},
                                {2, 15, 2 * flit},
                                {2, 15, 2 * flit}},
                               8, 1);
  ASSERT_EQ(gather.max_router_link_flits, 10);
  EXPECT_TRUE(gather.busiest_router_link_shared);
  EXPECT_EQ(gather.busiest_router_link_shortest, 0);
  EXPECT_DOUBLE_EQ(calibrated.transfer_cycles(gather), plain.transfer_cycles(gather));
  // Messages within 4x of each other (PE 5's halos 4 flits, two to each neighbour): the
  // channel's flows are like the contended ones (an all-to-all's pieces); not slowed.
  const LinkLoad alike = with(down, 4, 2);
  ASSERT_EQ(alike.max_endpoint_flits, 32);
  ASSERT_EQ(alike.max_router_link_flits, 10);
  EXPECT_FALSE(alike.short_messages);
  EXPECT_EQ(alike.busiest_router_link_shortest, 0);
  EXPECT_DOUBLE_EQ(calibrated.transfer_cycles(alike), plain.transfer_cycles(alike));
}

TEST(LinkloadModel, OneMessagePerPeIsScheduledLinkByLink) {
  // A 1x4 mesh, PEs 0..3 left to right; 0, 1 and 2 each send one message to 3. Their heads
  // reach link 2 -> 3 one hop apart (2's first, 0's last), so 2-flit messages never queue and
  // the edge is 0's route and its own flits, where the sum form adds all 6 flits of 3's
  // ejection to the longest route.
  const HwDesc hw = machine("mesh", 1, 4, "xy");
  const LinkloadModel model(hw);
  const auto flit = static_cast<std::int64_t>(hw.link_bytes_per_cycle);
  const double hop = hw.router_pipeline_cycles + hw.link_latency_cycles;
  ASSERT_GE(hop, 2);
  const double route = LinkloadModel::route_cycles(4, hw);  // 0 -> 3: 4 routers
  auto to_3 = [&](int flits) {
    return model.route({{0, 3, flits * flit}, {1, 3, flits * flit}, {2, 3, flits * flit}});
  };
  const LinkLoad short_messages = to_3(2);
  EXPECT_EQ(short_messages.max_sent, 1);
  EXPECT_EQ(short_messages.max_link_flits, 6);
  EXPECT_DOUBLE_EQ(model.transfer_cycles(short_messages), route + 2);
  // 8-flit messages queue at link 2 -> 3: they arrive at hop, 2 hop and 3 hop after the
  // start, and 0's, last, leaves it 3 × 8 flits after 2's arrived; its rest of route then
  // takes route − 3 hop: route + 24 − 2 hop in all.
  const LinkLoad queued = to_3(8);
  EXPECT_DOUBLE_EQ(model.transfer_cycles(queued), route + 24 - 2 * hop);
  // Calibrated, router contention adds to the schedule what it adds to the sum form (link
  // 2 -> 3 ties with 3's ejection and carries three sources: slowed, by more than the overlap
  // with s = 10).
  HwDesc calibrated = hw;
  calibrated.router_slowdown = 10.0;
  const LinkloadModel slowed(calibrated);
  const LinkLoad queued_slowed =
      slowed.route({{0, 3, 8 * flit}, {1, 3, 8 * flit}, {2, 3, 8 * flit}});
  EXPECT_EQ(queued_slowed.scheduled_cycles, queued.scheduled_cycles);
  const double added = slowed.serialization_cycles(queued) - slowed.overlap_cycles(queued) -
                       model.serialization_cycles(queued);
  EXPECT_GT(added, 0);
  EXPECT_DOUBLE_EQ(slowed.transfer_cycles(queued_slowed), route + 24 - 2 * hop + added);
  // A PE sending two messages: the sum form (the NI interleaves them; when each head leaves is
  // not known).
  const LinkLoad twice = model.route({{0, 3, 2 * flit}, {0, 3, 2 * flit}, {1, 3, 2 * flit}});
  EXPECT_EQ(twice.max_sent, 2);
  EXPECT_EQ(twice.scheduled_cycles, 0);
  EXPECT_DOUBLE_EQ(model.transfer_cycles(twice), model.latency_cycles(twice) +
                                                     model.serialization_cycles(twice) -
                                                     model.overlap_cycles(twice));
  // Short buffers: not scheduled (flows do not stream).
  const LinkloadModel shallow_model(shallow(hw));
  EXPECT_EQ(shallow_model.route({{0, 3, 2 * flit}, {1, 3, 2 * flit}}).scheduled_cycles, 0);
}

TEST(LinkloadModel, RingRoundsAreNotSlowedByRouterContention) {
  // Two strided rings on a 1x4 mesh, {0, 2} and {1, 3}: in each round 0 -> 2 and 1 -> 3 share
  // link 1 -> 2, busier than every PE channel, so a calibrated model would slow that drain in
  // an all-to-all. A round is one message per member, and the simulator runs such rounds at
  // their plain drain (validate, GROUP_GATHER under lowering.all_gather: ring): calibrated or
  // not, the rings take the same cycles.
  HwDesc hw = machine("mesh", 1, 4, "xy");
  const LinkloadModel plain(hw);
  hw.router_slowdown = 2.0;
  const LinkloadModel calibrated(hw);
  const std::int64_t chunk = 64 * static_cast<std::int64_t>(hw.link_bytes_per_cycle);
  const std::vector<RingGather> rings = {{{0, 2}, chunk}, {{1, 3}, chunk}};
  const RingGatherTime t = calibrated.ring_gather_time(rings);
  ASSERT_GT(LinkloadModel::slowdown_scale(t.round, hw.vc_buffer_flits), 0);  // router-bound
  EXPECT_EQ(t.round.max_router_link_flits, 2 * t.round.max_endpoint_flits);
  EXPECT_GT(LinkloadModel::drain_flits(t.round, hw), t.round.max_link_flits);
  EXPECT_DOUBLE_EQ(t.cycles(), plain.ring_gather_time(rings).cycles());
  EXPECT_DOUBLE_EQ(t.transfer, t.rounds * t.round_transfer(t.round.max_link_flits));
}

TEST(LinkloadModel, RouterSlowdownOnlyWhereARouterLinkBinds) {
  LinkLoad l;
  l.max_link_flits = l.max_router_link_flits = 100;
  l.max_endpoint_flits = l.endpoint_cycles = 60;  // every flow streams: flits = cycles
  l.flits = 800, l.messages = 100;  // 8-flit messages, 8-flit VC buffers: m / (m + B) = 1/2
  l.router_links = 10, l.router_flit_hops = 500;  // mean router link 50 flits: U = 1/2, U² = 1/4
  l.max_routers = 17;
  l.busiest_router_link_shared = true;  // as set_counts has it: busier than every channel
  HwDesc desc;                          // 2-stage routers, 1-cycle links: 3 cycles per router
  desc.vc_buffer_flits = 8;
  EXPECT_DOUBLE_EQ(LinkloadModel::slowdown_scale(l, 8), 0.125);
  desc.router_slowdown = 0.5;
  EXPECT_DOUBLE_EQ(LinkloadModel::drain_flits(l, desc), 106.25);
  // Longest route 17 routers (53 cycles), mean route 1 + 500 / 800 routers (6.875 cycles).
  EXPECT_DOUBLE_EQ(LinkloadModel::midpoint_saving(l, desc), (53 - 6.875) / 2);
  EXPECT_DOUBLE_EQ(LinkloadModel::overlap_cycles(l, desc), (53 - 6.875) / 2);
  l.max_endpoint_flits = l.endpoint_cycles =
      95;  // the drain hides no more than it exceeds the busiest channel
  EXPECT_DOUBLE_EQ(LinkloadModel::overlap_cycles(l, desc), 106.25 - 95);
  desc.router_slowdown = 0;  // calibrated to no slowdown: the overlap stays
  EXPECT_DOUBLE_EQ(LinkloadModel::drain_flits(l, desc), 100);
  EXPECT_DOUBLE_EQ(LinkloadModel::overlap_cycles(l, desc), 100 - 95);
  desc.router_slowdown.reset();  // uncalibrated: longest route + busiest link
  EXPECT_DOUBLE_EQ(LinkloadModel::drain_flits(l, desc), 100);
  EXPECT_DOUBLE_EQ(LinkloadModel::overlap_cycles(l, desc), 0);
  desc.router_slowdown = 0.5;
  l.max_endpoint_flits = l.endpoint_cycles = l.max_link_flits =
      120;  // a PE's channel binds: not slowed
  EXPECT_DOUBLE_EQ(LinkloadModel::drain_flits(l, desc), 120);
  EXPECT_DOUBLE_EQ(LinkloadModel::overlap_cycles(l, desc), 0);
  // ... unless its busiest router link carries several sources' and destinations' messages of
  // mixed lengths (route walking sets the shortest, 8 flits): the link's lost cycles,
  // 100 · s · U² · 8 / (8 + 8) = 6.25, delay the channel, with no overlap.
  l.busiest_router_link_shortest = 8;
  EXPECT_DOUBLE_EQ(LinkloadModel::channel_contention_scale(l, 8), 0.125);
  EXPECT_DOUBLE_EQ(LinkloadModel::drain_flits(l, desc), 126.25);
  EXPECT_DOUBLE_EQ(LinkloadModel::overlap_cycles(l, desc), 0);
  // Where the short messages' round-robin starvation loses more (route walking sets it, 40
  // cycles), the channel waits that, times the 8-flit messages' 8 / (8 + 8) share: 20 cycles.
  l.short_messages_arbitration_cycles = 40;
  EXPECT_DOUBLE_EQ(LinkloadModel::channel_contention_cycles(l, desc), 20);
  EXPECT_DOUBLE_EQ(LinkloadModel::drain_flits(l, desc), 140);
  desc.router_slowdown = 0;  // calibrated to no router contention: neither
  EXPECT_DOUBLE_EQ(LinkloadModel::drain_flits(l, desc), 120);
  l.short_messages_arbitration_cycles = 0;
  desc.router_slowdown.reset();  // uncalibrated: the busiest link
  EXPECT_DOUBLE_EQ(LinkloadModel::drain_flits(l, desc), 120);
  desc.router_slowdown = 0.5;
  l.busiest_router_link_shortest = 0;
  // As busy as the busiest channel: slowed when ≥ 2 sources share the link (neighbours' flows
  // in a 2-D halo), not when it carries one source's whole traffic (a ring round).
  l.max_endpoint_flits = l.endpoint_cycles = 100;
  l.max_link_flits = 100;
  l.busiest_router_link_shared = true;
  EXPECT_DOUBLE_EQ(LinkloadModel::drain_flits(l, desc), 106.25);
  // With buffers shorter than the credit loop the busiest channel may drain slower than the
  // slowed router link (few flows through it): it keeps its own bound.
  l.endpoint_cycles = 350;  // 100 flits of one flow at 2 flits per 7 cycles
  EXPECT_DOUBLE_EQ(LinkloadModel::drain_flits(l, shallow(desc)), 350);
  l.endpoint_cycles = 100;
  l.busiest_router_link_shared = false;
  EXPECT_DOUBLE_EQ(LinkloadModel::drain_flits(l, desc), 100);
  EXPECT_DOUBLE_EQ(LinkloadModel::slowdown_scale(l, 8), 0);

  // On a 4x4 mesh an all-to-all (OUTP 16 -> OFMP_H 4 x OFMP_W 4) is router-bound and slows
  // down; a gather to one PE is bound by its ejection channel and does not.
  const FastPathNetwork n;
  HwDesc hw = machine("mesh", 4, 4, "xy");
  const LinkloadModel plain(hw);
  hw.router_slowdown = 0.5;
  const LinkloadModel slowed(hw);
  const LayerEdge& e = n.w.edges.at(0);
  const Choice outp = make({{PartDim::Outp, 16}}),
               spatial = make({{PartDim::OfmpH, 4}, {PartDim::OfmpW, 4}});
  const LinkLoad a2a =
      plain.route(edge_transfers(n.w, e, {&n.layer(e.src), outp, place(outp, hw.grid())},
                                 {&n.layer(e.dst), spatial, place(spatial, hw.grid())}, hw.grid()));
  ASSERT_GT(a2a.max_router_link_flits, a2a.max_endpoint_flits);
  EXPECT_GT(slowed.serialization_cycles(a2a), plain.serialization_cycles(a2a));
  EXPECT_GT(slowed.overlap_cycles(a2a), 0);
  EXPECT_EQ(plain.overlap_cycles(a2a), 0);
  EXPECT_DOUBLE_EQ(
      slowed.edge_cost(n.w, e, outp, spatial).cycles,
      slowed.latency_cycles(a2a) + slowed.serialization_cycles(a2a) - slowed.overlap_cycles(a2a));
  const Choice one = make({});
  EXPECT_EQ(slowed.edge_cost(n.w, e, outp, one).cycles, plain.edge_cost(n.w, e, outp, one).cycles);
}

// A column of 8 PEs, a 2-D halo's shape: every PE sends 64-flit halos to both neighbours, which
// bind its channels (136 flits), and PEs 0-4 send 8-flit rows three hops down, which share the
// busiest column links (88 flits) with the halos. Route walking runs the rows alone through the
// round-robin fluid: where local rows join the ones from upstream, those are starved, and the
// rows take longer than their busiest link's 24 flits. The halos are left out, in any order
// the transfers come.
TEST(LinkloadModel, RouteWalkingRunsTheShortMessagesThroughTheRoundRobinFluid) {
  HwDesc hw = machine("mesh", 8, 1, "xy");
  const auto flit = static_cast<std::int64_t>(hw.link_bytes_per_cycle);
  std::vector<Transfer> sends;
  std::vector<FluidMessage> rows;
  for (int pe = 0; pe < 8; ++pe) {
    if (pe > 0) sends.push_back({pe, pe - 1, 64 * flit});
    if (pe < 7) sends.push_back({pe, pe + 1, 64 * flit});
    if (pe <= 4) sends.push_back({pe, pe + 3, 8 * flit}), rows.push_back({pe, pe + 3, 8});
  }
  const LinkloadModel plain(hw);
  const LinkLoad l = plain.route(sends);
  ASSERT_EQ(l.max_endpoint_flits, 136);
  ASSERT_EQ(l.max_router_link_flits, 88);
  ASSERT_EQ(l.busiest_router_link_shortest, 8);
  const double arbitration = round_robin_fluid_cycles(rows, 8, 1, hw.ni_channels) - 24;
  EXPECT_GT(arbitration, 1);
  EXPECT_NEAR(l.short_messages_arbitration_cycles, arbitration, 1e-9);
  std::reverse(sends.begin(), sends.end());
  EXPECT_EQ(plain.route(sends).short_messages_arbitration_cycles,
            l.short_messages_arbitration_cycles);

  // Calibrated, the channels wait the larger of the two losses: the starvation's with a small
  // s, VC blocking with a large one.
  const double starved = arbitration * 8 / (8 + hw.vc_buffer_flits);
  const double per_s = 88 * LinkloadModel::channel_contention_scale(l, hw.vc_buffer_flits);
  for (const double s : {0.1, 0.5}) {
    hw.router_slowdown = s;
    EXPECT_DOUBLE_EQ(LinkloadModel::drain_flits(l, hw), 136 + std::max(starved, per_s * s)) << s;
  }
  ASSERT_LT(per_s * 0.1, starved);
  ASSERT_GT(per_s * 0.5, starved);
  // The fluid run routes xy: a yx mesh keeps only the VC-blocking term.
  EXPECT_EQ(
      LinkloadModel(machine("mesh", 8, 1, "yx")).route(sends).short_messages_arbitration_cycles, 0);
}

}  // namespace
}  // namespace nocflow::optimizer
