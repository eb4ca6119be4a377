// SPDX-License-Identifier: MIT
// linkload's cost tables (edge_cycles_table: grouped needs, difference-form link counts, all
// threads) against edge_cost on every choice pair (the model's terms: linkload_terms_test.cpp).
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

}  // namespace
}  // namespace nocflow::optimizer
