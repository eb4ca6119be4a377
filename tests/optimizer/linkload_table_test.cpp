// SPDX-License-Identifier: MIT
// linkload's cost tables (edge_cycles_table: grouped needs, difference-form link counts, all
// threads) against edge_cost on every choice pair, and the route-walking tie and slowdown rules.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include "noc/topology/topology.h"
#include "optimizer/cost/dimension_order_loads.h"
#include "optimizer/cost/linkload_model.h"
#include "optimizer/frontend/graph_builder.h"
#include "optimizer/partition/transfers.h"
#include "tests/optimizer/fast_path_network.h"
#include "tests/optimizer/make_choice.h"

namespace nocflow::optimizer {
namespace {

/// `hw` with VC buffers shorter than the credit loop: flows of 2/7 flit per cycle, 2 VCs, one
/// NI channel, so every channel's rate depends on how many messages cross it.
HwDesc shallow(HwDesc hw) {
  hw.vc_buffer_flits = 2;
  hw.credit_loop_cycles = 7;
  hw.vcs = 2;
  hw.ni_channels = 1;
  return hw;
}

TEST(LinkloadTable, EqualsEdgeCostForEveryChoicePair) {
  const FastPathNetwork n;
  struct Case {
    HwDesc hw;
    LinkloadModel::Options options;
  };
  std::vector<Case> cases;
  for (const auto& [rows, cols] : {std::pair{4, 4}, std::pair{2, 4}})
    for (const std::string routing : {"xy", "yx", "west_first"})
      for (const bool group : {false, true})
        for (const std::optional<double> slowdown :
             {std::optional<double>{}, std::optional<double>{0.8}}) {
          HwDesc hw = machine("mesh", rows, cols, routing);
          hw.router_slowdown = slowdown;
          // Direct messages without the grouped path; with it, rings (deep buffers) and rings
          // where they pay (short ones), each calibrated and not.
          if (group) hw.all_gather = HwDesc::AllGather::Ring;
          cases.push_back({hw, {group ? 2 : 1, group}});
          if (group) hw.all_gather = HwDesc::AllGather::Auto;
          cases.push_back({shallow(hw), {group ? 2 : 1, group}});
        }
  cases.push_back({machine("crossbar", 1, 8, "xy"), {1, false}});
  cases.push_back({shallow(machine("crossbar", 1, 8, "xy")), {1, false}});
  // Balanced splits on 3x3 (factors 3 and 9 of the 8-wide axes: blocks that differ by one),
  // the difference-form counter and route walking.
  for (const std::string routing : {"xy", "west_first"}) {
    HwDesc hw = machine("mesh", 3, 3, routing);
    hw.balanced_splits = true;
    hw.router_slowdown = 0.8;
    cases.push_back({hw, {2, false}});
  }
  HwDesc crossbar_rings = machine("crossbar", 1, 8, "xy");
  crossbar_rings.all_gather = HwDesc::AllGather::Auto;
  cases.push_back({crossbar_rings, {1, false}});
  std::size_t ring_entries[3] = {};  // per mode: entries priced unlike direct messages
  for (const Case& c : cases) {
    const LinkloadModel fast(c.hw, c.options);
    const LinkloadModel reference(c.hw, {1, false});
    for (const LayerEdge& e : n.w.edges) {
      const auto cu = all_choices(n.layer(e.src), c.hw), cv = all_choices(n.layer(e.dst), c.hw);
      const std::vector<double> table = fast.edge_cycles_table(n.w, e, cu, cv);
      ASSERT_EQ(table.size(), cu.size() * cv.size());
      for (std::size_t i = 0; i < cu.size(); ++i)
        for (std::size_t j = 0; j < cv.size(); ++j) {
          const double slow = reference.edge_cost(n.w, e, cu[i], cv[j]).cycles;
          if (c.hw.all_gather != HwDesc::AllGather::Direct) {
            HwDesc direct = c.hw;
            direct.all_gather = HwDesc::AllGather::Direct;
            ring_entries[static_cast<int>(c.hw.all_gather)] +=
                LinkloadModel(direct).edge_cost(n.w, e, cu[i], cv[j]).cycles != slow;
          }
          ASSERT_NEAR(table[i * cv.size() + j], slow, 1e-9 * std::max(1.0, slow))
              << n.layer(e.src).name << " -> " << n.layer(e.dst).name << " " << cu[i].str()
              << " -> " << cv[j].str() << " on " << c.hw.topology.kind << " " << c.hw.topology.rows
              << "x" << c.hw.topology.cols << " " << c.hw.routing
              << (c.options.always_group ? " grouped" : "") << " all-gathers "
              << static_cast<int>(c.hw.all_gather);
        }
    }
  }
  EXPECT_GT(ring_entries[static_cast<int>(HwDesc::AllGather::Ring)], 0u);  // both ring paths run
  EXPECT_GT(ring_entries[static_cast<int>(HwDesc::AllGather::Auto)], 0u);
}

/// The difference-form counter's every count equals route walking's (LinkloadModel::route),
/// not only the cycles they add up to: non-square meshes both ways round, xy and yx, with and
/// without the grouped path.
TEST(LinkloadTable, DimensionOrderCountsEqualRouteWalking) {
  const FastPathNetwork n;
  std::size_t pairs = 0, router_bound = 0, ties = 0, shared_ties = 0, slowed_channels = 0,
              single_sends = 0;
  for (const auto& [rows, cols] : {std::pair{2, 4}, std::pair{4, 2}})
    for (const std::string routing : {"xy", "yx"})
      for (const bool group : {false, true}) {
        const HwDesc hw = shallow(machine("mesh", rows, cols, routing));
        const LinkloadModel model(hw);
        const noc::Topology topo = noc::Topology::build(hw.topology);
        DimensionOrderLoadCounter counter(topo, FlitSize(std::llround(hw.link_bytes_per_cycle)),
                                          routing == "xy", group, &hw);
        const PeGrid grid = hw.grid();
        std::vector<Piece> scratch;
        for (const LayerEdge& e : n.w.edges)
          for (const Choice& b : all_choices(n.layer(e.dst), hw)) {
            const PlacedLayer cons{&n.layer(e.dst), b, place(b, grid)};
            const ConsumerNeeds needs = consumer_needs(n.w, e, cons);
            for (const Choice& a : all_choices(n.layer(e.src), hw)) {
              const PlacedLayer prod{&n.layer(e.src), a, place(a, grid)};
              ProducerLayout(prod, grid)
                  .for_each_group(needs, scratch,
                                  [&](const int* dsts, std::size_t m, const Piece* pieces,
                                      std::size_t k) { counter.add_group(dsts, m, pieces, k); });
              const LinkLoad fast = counter.finish();
              const LinkLoad slow = model.route(edge_transfers(n.w, e, prod, cons, grid));
              const std::string what = a.str() + " -> " + b.str() + " on " + std::to_string(rows) +
                                       "x" + std::to_string(cols) + " " + routing +
                                       (group ? " grouped" : "");
              ASSERT_EQ(fast.max_link_flits, slow.max_link_flits) << what;
              ASSERT_EQ(fast.max_router_link_flits, slow.max_router_link_flits) << what;
              ASSERT_EQ(fast.max_endpoint_flits, slow.max_endpoint_flits) << what;
              ASSERT_DOUBLE_EQ(fast.endpoint_cycles, slow.endpoint_cycles) << what;
              slowed_channels += slow.endpoint_cycles > slow.max_endpoint_flits;
              ASSERT_EQ(fast.flits, slow.flits) << what;
              ASSERT_EQ(fast.messages, slow.messages) << what;
              // Short messages: the counter may say so where routes do not, never the other
              // way (needs_routes recounts on its word).
              ASSERT_TRUE(!slow.short_messages || fast.short_messages) << what;
              // Sharing: route walking finds it on every link busier than every channel (it
              // carries ≥ 2 sources), as the difference form infers; the counter infers
              // nothing at a tie, which tables recount.
              if (slow.max_router_link_flits > slow.max_endpoint_flits) {
                ASSERT_TRUE(slow.busiest_router_link_shared) << what;
                ASSERT_EQ(fast.busiest_router_link_shared, slow.busiest_router_link_shared) << what;
              }
              ties += slow.max_router_link_flits == slow.max_endpoint_flits &&
                      slow.max_router_link_flits > 0;
              shared_ties += slow.max_router_link_flits == slow.max_endpoint_flits &&
                             slow.busiest_router_link_shared;
              ASSERT_EQ(fast.router_flit_hops, slow.router_flit_hops) << what;
              ASSERT_EQ(fast.router_links, slow.router_links) << what;
              ASSERT_EQ(fast.max_routers, slow.max_routers) << what;
              ASSERT_EQ(fast.max_sent, slow.max_sent) << what;
              single_sends += slow.max_sent == 1;  // scheduled with deep buffers
              ++pairs;
              router_bound += slow.max_router_link_flits > slow.max_endpoint_flits;
            }
          }
        EXPECT_EQ(model.route({}).router_links, 2 * (rows - 1) * cols + 2 * (cols - 1) * rows);
      }
  EXPECT_GT(router_bound, pairs / 20);  // the slowdown's counts are exercised
  EXPECT_GT(slowed_channels, pairs / 20);  // so are the channels' flow rates
  EXPECT_GT(shared_ties, 0u);           // ties both ways
  EXPECT_GT(ties, shared_ties);
  // Edges of one message per PE, which EqualsEdgeCostForEveryChoicePair's tables recount.
  EXPECT_GT(single_sends, pairs / 50);
}

/// FastPathNetwork's first edge on a calibrated 8x8 mesh, every choice on both sides, and its
/// table computed on one thread.
struct FirstEdgeOnEightByEight {
  FastPathNetwork n;
  HwDesc hw = [] {
    HwDesc h = machine("mesh", 8, 8, "xy");
    h.router_slowdown = 0.8;
    return h;
  }();
  const LayerEdge& e = n.w.edges.at(0);
  std::vector<Choice> cu = all_choices(n.layer(e.src), hw), cv = all_choices(n.layer(e.dst), hw);
  std::vector<double> one = LinkloadModel(hw, {1, false}).edge_cycles_table(n.w, e, cu, cv);
};

TEST(LinkloadTable, TiesAreRecountedTheSameOnEveryThread) {
  // A calibrated table large enough to be shared out to threads (entries × PEs ≥
  // Options::parallel_work, 65,536: ≥ 1,024 entries on 8x8): the tie
  // entries' recounts walk routes on the worker threads; two threads give one thread's table,
  // and sampled entries equal edge_cost.
  const FirstEdgeOnEightByEight t;
  const auto& [n, hw, e, cu, cv, one] = t;
  ASSERT_GE(cu.size() * cv.size(), 1024u);
  const std::vector<double> two = LinkloadModel(hw, {2, false}).edge_cycles_table(n.w, e, cu, cv);
  ASSERT_EQ(one, two);
  const LinkloadModel model(hw);
  const PeGrid grid = hw.grid();
  int shared_ties = 0, contended_channels = 0;
  for (std::size_t k = 0; k < one.size(); k += 23) {
    const std::size_t i = k / cv.size(), j = k % cv.size();
    const double slow = model.edge_cost(n.w, e, cu[i], cv[j]).cycles;
    ASSERT_NEAR(one[k], slow, 1e-9 * std::max(1.0, slow)) << cu[i].str() << " -> " << cv[j].str();
    const LinkLoad l =
        model.route(edge_transfers(n.w, e, {&n.layer(e.src), cu[i], place(cu[i], grid)},
                                   {&n.layer(e.dst), cv[j], place(cv[j], grid)}, grid));
    shared_ties += l.max_router_link_flits == l.max_endpoint_flits && l.busiest_router_link_shared;
    contended_channels += LinkloadModel::channel_contention_scale(l, hw.vc_buffer_flits) > 0;
  }
  EXPECT_GT(shared_ties, 0);  // the recount is exercised
  EXPECT_GT(contended_channels,
            0);  // so is the channels' (a channel binds, its router link contended)
}

TEST(LinkloadTable, RowsSplitByColumnsOverThreadsEqualTheTable) {
  // Fewer rows than threads (greedy-layout asks for one row at a time): each row's columns are
  // shared out in blocks. One and two rows on two and three threads, every table shared out
  // (parallel_work 0), give the rows of the one-thread table.
  const FirstEdgeOnEightByEight t;
  const auto& [n, hw, e, cu, cv, full] = t;
  for (int threads : {2, 3}) {
    const LinkloadModel split(hw, {threads, false, 0});
    EXPECT_TRUE(split.edge_cycles_table(n.w, e, {}, cv).empty());  // no rows, no blocks
    for (std::size_t i = 0; i + 1 < cu.size(); i += 37) {
      const std::vector<double> rows = split.edge_cycles_table(n.w, e, {cu[i], cu[i + 1]}, cv);
      const auto first = full.begin() + static_cast<std::ptrdiff_t>(i * cv.size());
      EXPECT_EQ(rows,
                std::vector<double>(first, first + static_cast<std::ptrdiff_t>(2 * cv.size())))
          << threads << " threads, rows " << i << " and " << i + 1;
      EXPECT_EQ(split.edge_cycles_table(n.w, e, {cu[i]}, cv),
                std::vector<double>(first, first + static_cast<std::ptrdiff_t>(cv.size())))
          << threads << " threads, row " << i;
    }
  }
}

TEST(LinkloadTable, BigGroupsOnAnEightByEightMesh) {
  // Groups large enough for the grouped path to be chosen on its own (OUTP consumers whose
  // nodes all need every input channel), checked entry by entry on a sample of pairs.
  const FastPathNetwork n;
  HwDesc hw = machine("mesh", 8, 8, "xy");
  hw.router_slowdown = 0.8;
  const LinkloadModel model(hw);
  const LayerEdge& e = n.w.edges.at(0);  // pw -> halo
  auto cu = all_choices(n.layer(e.src), hw), cv = all_choices(n.layer(e.dst), hw);
  std::vector<Choice> su, sv;
  for (std::size_t i = 0; i < cu.size(); i += 7) su.push_back(cu[i]);
  for (std::size_t j = 0; j < cv.size(); j += 5) sv.push_back(cv[j]);
  sv.push_back(make({{PartDim::Outp, 16}, {PartDim::Batch, 2}, {PartDim::OfmpH, 2}}));
  su.push_back(make({{PartDim::Outp, 16}, {PartDim::OfmpW, 4}}));
  const std::vector<double> table = model.edge_cycles_table(n.w, e, su, sv);
  for (std::size_t i = 0; i < su.size(); ++i)
    for (std::size_t j = 0; j < sv.size(); ++j) {
      const double slow = model.edge_cost(n.w, e, su[i], sv[j]).cycles;
      ASSERT_NEAR(table[i * sv.size() + j], slow, 1e-9 * std::max(1.0, slow))
          << su[i].str() << " -> " << sv[j].str();
    }
}

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

}  // namespace
}  // namespace nocflow::optimizer
