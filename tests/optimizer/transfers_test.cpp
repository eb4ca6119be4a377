// SPDX-License-Identifier: MIT
// Exact data movement between partitioned layers, checked by hand (issue 5, acceptance 1).
#include "optimizer/partition/transfers.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include "noc/topology/topology.h"
#include "optimizer/cost/dimension_order_loads.h"
#include "optimizer/cost/linkload_model.h"
#include "optimizer/cost/paper_model.h"
#include "optimizer/frontend/graph_builder.h"
#include "tests/optimizer/make_choice.h"

namespace nocflow::optimizer {
namespace {

constexpr PeGrid kMesh4x4{true, 4, 4};

/// The transfers of a two-layer workload's edge under choices a and b, placed on the 4×4 mesh.
std::vector<Transfer> first_edge_moves(const Workload& w, const Choice& a, const Choice& b) {
  const PlacedLayer p{&w.layers[0], a, place(a, kMesh4x4)};
  const PlacedLayer c{&w.layers[1], b, place(b, kMesh4x4)};
  return edge_transfers(w, w.edges.at(0), p, c, kMesh4x4);
}

/// input 1×8×16×16 → producer conv (K=8, 1×1) → consumer conv (K=8, kernel k, pad k/2).
struct TwoLayers {
  Graph graph;
  Workload w;
  explicit TwoLayers(std::int64_t consumer_kernel = 1, std::int64_t batch = 1) {
    GraphBuilder b("two", 4);
    NodeId x = b.input({batch, 8, 16, 16});
    x = b.conv(x, 8, 1, 1, 0, 1, false, "producer");
    b.conv(x, 8, consumer_kernel, 1, consumer_kernel / 2, 1, false, "consumer");
    graph = b.finish();
    w = build_workload(graph);
  }
  std::int64_t tensor_bytes() const { return w.layers[0].output_bytes; }
  std::vector<Transfer> moves(const Choice& a, const Choice& b) const {
    return first_edge_moves(w, a, b);
  }
};

TEST(Transfers, OutpToOutpIsAllGather) {
  const TwoLayers t;
  for (int f : {2, 4, 8}) {
    const Choice c = make({{PartDim::Outp, f}});
    const auto moves = t.moves(c, c);
    std::map<int, std::int64_t> received;
    for (const Transfer& m : moves) received[m.dst] += m.bytes;
    ASSERT_EQ(received.size(), static_cast<std::size_t>(f));
    for (const auto& [dst, bytes] : received) EXPECT_EQ(bytes, t.tensor_bytes() * (f - 1) / f) << f;
    EXPECT_EQ(moves.size(), static_cast<std::size_t>(f * (f - 1)));
  }
}

TEST(Transfers, PaperCallsSameFactorOutpFreeExactMovementDoesNot) {
  // Seed Proposition 1: same OUTP factor on consecutive layers → redistribution 0. The consumer
  // still needs every input channel, so the exact movement is an all-gather: the gap the
  // simulator measures.
  const TwoLayers t;
  const Choice c = make({{PartDim::Outp, 4}});
  EXPECT_EQ(redist_type(t.w.layers[0], c, t.w.layers[1], c), RedistType::None);
  EXPECT_EQ(total_bytes(t.moves(c, c)), 3 * t.tensor_bytes());
}

TEST(Transfers, OutpToAlignedInppMovesNothing) {
  const TwoLayers t;
  for (int f : {2, 4, 8})
    EXPECT_TRUE(t.moves(make({{PartDim::Outp, f}}), make({{PartDim::Inpp, f}})).empty()) << f;
}

TEST(Transfers, BatchToBatchMovesNothing) {
  const TwoLayers t(3, 4);
  const Choice c = make({{PartDim::Batch, 4}});
  EXPECT_TRUE(t.moves(c, c).empty());
}

TEST(Transfers, OutpToOfmpHMovesAllButOwnQuarter) {
  const TwoLayers t;  // 1×1 consumer: no halo
  const auto moves = t.moves(make({{PartDim::Outp, 4}}), make({{PartDim::OfmpH, 4}}));
  EXPECT_EQ(total_bytes(moves), t.tensor_bytes() * 3 / 4);
  EXPECT_EQ(moves.size(), 12u);  // every node sends a 1/16 piece to each of the three others
  for (const Transfer& m : moves) EXPECT_EQ(m.bytes, t.tensor_bytes() / 16);
}

TEST(Transfers, OfmpHToOfmpHMovesExactlyTheHaloRows) {
  const TwoLayers t(3);  // 3×3, pad 1: one row above and one below each tile
  const Choice c = make({{PartDim::OfmpH, 4}});
  const auto moves = t.moves(c, c);
  const std::int64_t row_bytes = 8 * 16 * 4;  // C × W × 4 bytes
  ASSERT_EQ(moves.size(), 6u);                // 3 boundaries, both directions
  for (const Transfer& m : moves) {
    EXPECT_EQ(m.bytes, row_bytes);
    EXPECT_EQ(kMesh4x4.distance(m.src, m.dst), 1);  // neighbours on the snake
  }
  EXPECT_EQ(total_bytes(moves), 2 * 3 * row_bytes);
}

/// input → producer → fc consumer (over the last axis), 4-byte elements.
struct FcEdge {
  Graph graph;
  Workload w;
  explicit FcEdge(bool conv_producer) {
    GraphBuilder b("fc", 4);
    if (conv_producer) {  // 1×8×4×4 conv output, fc over W: positions (C, H) kept
      b.gemm(b.conv(b.input({1, 8, 4, 4}), 8, 1, 1, 0, 1, false, "producer"), 6, true, "consumer");
    } else {  // 1×16×32 tokens, fc over D: tokens kept
      b.gemm(b.gemm(b.input({1, 16, 32}), 32, true, "producer"), 32, true, "consumer");
    }
    graph = b.finish();
    w = build_workload(graph);
  }
  std::int64_t tensor_bytes() const { return w.layers[0].output_bytes; }
  std::vector<Transfer> moves(const Choice& a, const Choice& b) const {
    return first_edge_moves(w, a, b);
  }
};

TEST(Transfers, FcReadsOnlyItsOwnTokensOrPositions) {
  const Choice tokens = make({{PartDim::OfmpH, 4}}), outp = make({{PartDim::Outp, 4}});
  const FcEdge seq(false);
  // Token-split fc -> token-split fc: each node's tokens are already there.
  EXPECT_TRUE(seq.moves(tokens, tokens).empty());
  // Token split -> feature split: every node needs every token's features, 3/4 from others.
  EXPECT_EQ(total_bytes(seq.moves(tokens, outp)), 4 * seq.tensor_bytes() * 3 / 4);
  // INPP 4 reads a quarter of the features of every token: from the token split, 3/16 of the
  // tensor per node.
  EXPECT_EQ(total_bytes(seq.moves(tokens, make({{PartDim::Inpp, 4}}))),
            4 * seq.tensor_bytes() * 3 / 16);
  const FcEdge conv(true);
  // OUTP splits the channels C of an N×C×H×W fc: the conv's OUTP 4 blocks are what it reads.
  EXPECT_TRUE(conv.moves(outp, outp).empty());
  // From a W split, each node needs its quarter of C over all of W: 3/4 of that from others.
  EXPECT_EQ(total_bytes(conv.moves(make({{PartDim::OfmpW, 4}}), outp)),
            4 * conv.tensor_bytes() / 4 * 3 / 4);
}

TEST(Transfers, InppPartialSumsAreReducedBeforeUse) {
  const TwoLayers t;
  const Choice inpp = make({{PartDim::Inpp, 4}});
  const PlacedLayer p{&t.w.layers[0], inpp, place(inpp, kMesh4x4)};
  const auto ring = reduction_transfers(p);
  ASSERT_EQ(ring.size(), 4u);
  for (const Transfer& m : ring) EXPECT_EQ(m.bytes, 2 * 3 * t.tensor_bytes() / 4);  // 2(f−1)/f·D
  // A block f does not divide: 2(f−1) whole chunks of ceil(block / f), as the ring sends them.
  // One 5x1 output channel at 4 bytes (20 bytes) over INPP 3: 4 chunks of 7 bytes (not 27).
  GraphBuilder b("odd", 4);
  b.conv(b.conv(b.input({1, 8, 5, 1}), 1, 1, 1, 0, 1, false, "producer"), 1, 1, 1, 0, 1, false,
         "consumer");
  const Graph g = b.finish();
  const Workload w = build_workload(g);
  const Choice inpp3 = make({{PartDim::Inpp, 3}});
  const auto odd = reduction_transfers({&w.layers[0], inpp3, place(inpp3, kMesh4x4)});
  ASSERT_EQ(odd.size(), 3u);
  for (const Transfer& m : odd) EXPECT_EQ(m.bytes, 4 * 7);
  // After the all-reduce every member holds the whole output: an OUTP 4 consumer on the same
  // PEs reads its replica locally.
  EXPECT_TRUE(t.moves(inpp, make({{PartDim::Outp, 4}})).empty());
  EXPECT_TRUE(reduction_transfers({&t.w.layers[0], make({{PartDim::Outp, 4}}), place(make({{PartDim::Outp, 4}}), kMesh4x4)}).empty());
}

TEST(Transfers, NearestReplicaAndDeterministicOrder) {
  const TwoLayers t;
  // Producer INPP 2 × OUTP 2 (replicas in pairs), consumer OUTP 4 on other PEs than needed.
  const Choice a = make({{PartDim::Outp, 2}, {PartDim::Inpp, 2}});
  const auto m1 = t.moves(a, make({{PartDim::OfmpH, 4}}));
  const auto m2 = t.moves(a, make({{PartDim::OfmpH, 4}}));
  EXPECT_EQ(m1, m2);
  for (std::size_t i = 1; i < m1.size(); ++i)
    EXPECT_TRUE(m1[i - 1].src < m1[i].src || (m1[i - 1].src == m1[i].src && m1[i - 1].dst < m1[i].dst));
  // Consumer node 1 (PE 1) needs rows 4..7 of all channels; channels 0..3 are on PEs 0 and 1
  // (replicas): it takes them from itself, so it receives only channels 4..7 from PE 2 or 3,
  // the nearer being PE 2 (one hop).
  std::int64_t to_pe1 = 0;
  for (const Transfer& m : m1)
    if (m.dst == 1) {
      EXPECT_EQ(m.src, 2);
      to_pe1 += m.bytes;
    }
  EXPECT_EQ(to_pe1, t.tensor_bytes() / 8);
}

TEST(Placement, SnakeKeepsConsecutiveNodesAdjacent) {
  const Choice c = make({{PartDim::Outp, 16}});
  const Placement p = place(c, kMesh4x4);
  for (int i = 1; i < 16; ++i) EXPECT_EQ(kMesh4x4.distance(p.pe[static_cast<std::size_t>(i - 1)], p.pe[static_cast<std::size_t>(i)]), 1);
  const Choice g = make({{PartDim::Outp, 2}, {PartDim::OfmpH, 2}, {PartDim::Inpp, 2}});
  for (int i = 0; i < g.nodes(); ++i) EXPECT_EQ(grid_index(g, grid_coord(g, i)), i);
  EXPECT_EQ(grid_coord(g, 1)[static_cast<std::size_t>(PartDim::Inpp)], 1);  // INPP fastest
}

// ---- The fast path for cost tables (transfers.h: consumer_needs, ProducerLayout;
// linkload_model.cpp: edge_cycles_table) against the straightforward computation ----------

/// Edges of every kind the region rules distinguish: 1×1 conv, 3×3 halo, strided depthwise
/// (grouped), pooling, element-wise add, concat (both inputs), flatten, fully connected.
struct FastPathNetwork {
  Graph graph;
  Workload w;
  FastPathNetwork() {
    GraphBuilder b("fast", 2);
    const NodeId x = b.input({2, 8, 8, 8});
    const NodeId pw = b.conv(x, 16, 1, 1, 0, 1, false, "pw");
    const NodeId halo = b.conv(pw, 16, 3, 1, 1, 1, false, "halo");
    const NodeId dw = b.conv(halo, 16, 3, 2, 1, 16, false, "dw");
    const NodeId pool = b.maxpool(pw, 2, 2, 0, "pool");
    const NodeId sum = b.add(dw, pool, "add");
    const NodeId cat = b.concat({sum, dw}, 1, "cat");
    b.gemm(b.flatten(cat, 1, "flat"), 10, true, "fc");
    graph = b.finish();
    w = build_workload(graph);
  }
  const Layer& layer(int i) const { return w.layers[static_cast<std::size_t>(i)]; }
};

HwDesc machine(const std::string& kind, int rows, int cols, const std::string& routing) {
  HwDesc hw;
  hw.topology = kind == "crossbar" ? noc::TopologySpec{"crossbar", 0, 0, rows * cols} : noc::TopologySpec{"mesh", rows, cols, 0};
  hw.routing = routing;
  return hw;
}

std::vector<Choice> all_choices(const Layer& l, const HwDesc& hw) { return enumerate_choices(l, {hw.num_pes(), false}); }

/// Expands for_each_group into a transfer list sorted like edge_transfers.
std::vector<Transfer> fast_transfers(const ProducerLayout& layout, const ConsumerNeeds& needs) {
  std::vector<Transfer> out;
  std::vector<Piece> scratch;
  layout.for_each_group(needs, scratch, [&](const int* dsts, std::size_t m, const Piece* pieces, std::size_t k) {
    for (std::size_t d = 0; d < m; ++d)
      for (std::size_t i = 0; i < k; ++i)
        if (pieces[i].src != dsts[d]) out.push_back({pieces[i].src, dsts[d], pieces[i].bytes});
  });
  std::sort(out.begin(), out.end(), [](const Transfer& a, const Transfer& b) {
    return a.src != b.src ? a.src < b.src : a.dst < b.dst;
  });
  return out;
}

TEST(FastTransfers, EqualEdgeTransfersForEveryChoicePair) {
  const FastPathNetwork n;
  for (const PeGrid grid : {PeGrid{true, 4, 4}, PeGrid{true, 2, 4}}) {
    const HwDesc hw = machine("mesh", grid.rows, grid.cols, "xy");
    for (const LayerEdge& e : n.w.edges) {
      const auto cu = all_choices(n.layer(e.src), hw), cv = all_choices(n.layer(e.dst), hw);
      std::size_t pairs = 0, moving = 0;
      for (const Choice& b : cv) {
        const PlacedLayer cons{&n.layer(e.dst), b, place(b, grid)};
        const ConsumerNeeds needs = consumer_needs(n.w, e, cons);
        for (const Choice& a : cu) {
          const PlacedLayer prod{&n.layer(e.src), a, place(a, grid)};
          const auto slow = edge_transfers(n.w, e, prod, cons, grid);
          ASSERT_EQ(fast_transfers(ProducerLayout(prod, grid), needs), slow)
              << n.layer(e.src).name << " -> " << n.layer(e.dst).name << " " << a.str() << " -> " << b.str()
              << " on " << grid.rows << "x" << grid.cols;
          ++pairs;
          moving += !slow.empty();
        }
      }
      EXPECT_GT(moving, pairs / 4) << n.layer(e.src).name << " -> " << n.layer(e.dst).name;
    }
  }
}

TEST(FastTransfers, EqualNeedsAreGrouped) {
  const FastPathNetwork n;
  const PeGrid grid{true, 4, 4};
  // pw -> halo, consumer OUTP 4 x OFMP_H 4: the four OUTP nodes of each row strip read the same
  // input box, so 4 groups of 4.
  const Choice b = make({{PartDim::Outp, 4}, {PartDim::OfmpH, 4}});
  const ConsumerNeeds needs = consumer_needs(n.w, n.w.edges.at(0), {&n.layer(1), b, place(b, grid)});
  ASSERT_EQ(needs.groups(), 4u);
  for (std::size_t g = 0; g < needs.groups(); ++g) EXPECT_EQ(needs.first[g + 1] - needs.first[g], 4);
}

/// Every routing the fast table handles differently: dimension order (xy, yx; with and
/// without the grouped path, one and two threads) and route walking (west_first, crossbar);
/// with a router slowdown half of the time, which reads every count of LinkLoad.
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
        for (const std::optional<double> slowdown : {std::optional<double>{}, std::optional<double>{0.8}}) {
          HwDesc hw = machine("mesh", rows, cols, routing);
          hw.router_slowdown = slowdown;
          cases.push_back({hw, {group ? 2 : 1, group}});
        }
  cases.push_back({machine("crossbar", 1, 8, "xy"), {1, false}});
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
          ASSERT_NEAR(table[i * cv.size() + j], slow, 1e-9 * std::max(1.0, slow))
              << n.layer(e.src).name << " -> " << n.layer(e.dst).name << " " << cu[i].str() << " -> "
              << cv[j].str() << " on " << c.hw.topology.kind << " " << c.hw.topology.rows << "x"
              << c.hw.topology.cols << " " << c.hw.routing << (c.options.always_group ? " grouped" : "");
        }
    }
  }
}

/// The difference-form counter's every count equals route walking's (LinkloadModel::route),
/// not only the cycles they add up to: non-square meshes both ways round, xy and yx, with and
/// without the grouped path.
TEST(LinkloadTable, DimensionOrderCountsEqualRouteWalking) {
  const FastPathNetwork n;
  std::size_t pairs = 0, router_bound = 0, ties = 0, shared_ties = 0;
  for (const auto& [rows, cols] : {std::pair{2, 4}, std::pair{4, 2}})
    for (const std::string routing : {"xy", "yx"})
      for (const bool group : {false, true}) {
        const HwDesc hw = machine("mesh", rows, cols, routing);
        const LinkloadModel model(hw);
        const noc::Topology topo = noc::Topology::build(hw.topology);
        DimensionOrderLoadCounter counter(topo, FlitSize(std::llround(hw.link_bytes_per_cycle)), routing == "xy", group);
        const PeGrid grid = hw.grid();
        std::vector<Piece> scratch;
        for (const LayerEdge& e : n.w.edges)
          for (const Choice& b : all_choices(n.layer(e.dst), hw)) {
            const PlacedLayer cons{&n.layer(e.dst), b, place(b, grid)};
            const ConsumerNeeds needs = consumer_needs(n.w, e, cons);
            for (const Choice& a : all_choices(n.layer(e.src), hw)) {
              const PlacedLayer prod{&n.layer(e.src), a, place(a, grid)};
              ProducerLayout(prod, grid).for_each_group(
                  needs, scratch, [&](const int* dsts, std::size_t m, const Piece* pieces, std::size_t k) {
                    counter.add_group(dsts, m, pieces, k);
                  });
              const LinkLoad fast = counter.finish();
              const LinkLoad slow = model.route(edge_transfers(n.w, e, prod, cons, grid));
              const std::string what = a.str() + " -> " + b.str() + " on " + std::to_string(rows) + "x" +
                                       std::to_string(cols) + " " + routing + (group ? " grouped" : "");
              ASSERT_EQ(fast.max_link_flits, slow.max_link_flits) << what;
              ASSERT_EQ(fast.max_router_link_flits, slow.max_router_link_flits) << what;
              ASSERT_EQ(fast.max_endpoint_flits, slow.max_endpoint_flits) << what;
              ASSERT_EQ(fast.flits, slow.flits) << what;
              ASSERT_EQ(fast.messages, slow.messages) << what;
              // Sharing: route walking finds it on every link busier than every channel (it
              // carries ≥ 2 sources), as the difference form infers; the counter infers
              // nothing at a tie, which tables recount.
              if (slow.max_router_link_flits > slow.max_endpoint_flits) {
                ASSERT_TRUE(slow.busiest_router_link_shared) << what;
                ASSERT_EQ(fast.busiest_router_link_shared, slow.busiest_router_link_shared) << what;
              }
              ties += slow.max_router_link_flits == slow.max_endpoint_flits && slow.max_router_link_flits > 0;
              shared_ties += slow.max_router_link_flits == slow.max_endpoint_flits && slow.busiest_router_link_shared;
              ASSERT_EQ(fast.router_flit_hops, slow.router_flit_hops) << what;
              ASSERT_EQ(fast.router_links, slow.router_links) << what;
              ASSERT_EQ(fast.max_routers, slow.max_routers) << what;
              ++pairs;
              router_bound += slow.max_router_link_flits > slow.max_endpoint_flits;
            }
          }
        EXPECT_EQ(model.route({}).router_links, 2 * (rows - 1) * cols + 2 * (cols - 1) * rows);
      }
  EXPECT_GT(router_bound, pairs / 20);  // the slowdown's counts are exercised
  EXPECT_GT(shared_ties, 0u);            // ties both ways
  EXPECT_GT(ties, shared_ties);
}

TEST(LinkloadTable, TiesAreRecountedTheSameOnEveryThread) {
  // A calibrated table large enough to be shared out to threads (≥ 4096 entries): the tie
  // entries' recounts walk routes on the worker threads; two threads give one thread's table,
  // and sampled entries equal edge_cost.
  const FastPathNetwork n;
  HwDesc hw = machine("mesh", 8, 8, "xy");
  hw.router_slowdown = 0.8;
  const LayerEdge& e = n.w.edges.at(0);
  const auto cu = all_choices(n.layer(e.src), hw), cv = all_choices(n.layer(e.dst), hw);
  ASSERT_GE(cu.size() * cv.size(), 4096u);
  const std::vector<double> one = LinkloadModel(hw, {1, false}).edge_cycles_table(n.w, e, cu, cv);
  const std::vector<double> two = LinkloadModel(hw, {2, false}).edge_cycles_table(n.w, e, cu, cv);
  ASSERT_EQ(one, two);
  const LinkloadModel model(hw);
  const PeGrid grid = hw.grid();
  int shared_ties = 0;
  for (std::size_t k = 0; k < one.size(); k += 23) {
    const std::size_t i = k / cv.size(), j = k % cv.size();
    const double slow = model.edge_cost(n.w, e, cu[i], cv[j]).cycles;
    ASSERT_NEAR(one[k], slow, 1e-9 * std::max(1.0, slow)) << cu[i].str() << " -> " << cv[j].str();
    const LinkLoad l = model.route(edge_transfers(n.w, e, {&n.layer(e.src), cu[i], place(cu[i], grid)},
                                                  {&n.layer(e.dst), cv[j], place(cv[j], grid)}, grid));
    shared_ties += l.max_router_link_flits == l.max_endpoint_flits && l.busiest_router_link_shared;
  }
  EXPECT_GT(shared_ties, 0);  // the recount is exercised
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
      ASSERT_NEAR(table[i * sv.size() + j], slow, 1e-9 * std::max(1.0, slow)) << su[i].str() << " -> " << sv[j].str();
    }
}

TEST(LinkloadModel, RouteWalkingTellsASharedTieFromOneSourcesLink) {
  // A 1x4 mesh, PEs 0..3 left to right, 2-flit messages.
  const LinkloadModel model(machine("mesh", 1, 4, "xy"));
  const auto bytes = static_cast<std::int64_t>(2 * machine("mesh", 1, 4, "xy").link_bytes_per_cycle);
  // 0 -> 2: every link of the route carries the injection's 2 flits, one source: not shared.
  const LinkLoad one = model.route({{0, 2, bytes}});
  EXPECT_EQ(one.max_router_link_flits, one.max_endpoint_flits);
  EXPECT_FALSE(one.busiest_router_link_shared);
  // 0 -> 3 and 1 -> 3: link 2 -> 3 carries 4 flits of two sources, as many as 3's ejection.
  const LinkLoad two = model.route({{0, 3, bytes}, {1, 3, bytes}});
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

TEST(LinkloadModel, RouterSlowdownOnlyWhereARouterLinkBinds) {
  LinkLoad l;
  l.max_link_flits = l.max_router_link_flits = 100;
  l.max_endpoint_flits = 60;
  l.flits = 800, l.messages = 100;  // 8-flit messages, 8-flit VC buffers: m / (m + B) = 1/2
  l.router_links = 10, l.router_flit_hops = 500;  // mean router link 50 flits: U = 1/2, U² = 1/4
  l.max_routers = 17;
  l.busiest_router_link_shared = true;  // as set_counts has it: busier than every channel
  HwDesc desc;  // 2-stage routers, 1-cycle links: 3 cycles per router
  desc.vc_buffer_flits = 8;
  EXPECT_DOUBLE_EQ(LinkloadModel::slowdown_scale(l, 8), 0.125);
  desc.router_slowdown = 0.5;
  EXPECT_DOUBLE_EQ(LinkloadModel::drain_flits(l, desc), 106.25);
  // Longest route 17 routers (53 cycles), mean route 1 + 500 / 800 routers (6.875 cycles).
  EXPECT_DOUBLE_EQ(LinkloadModel::midpoint_saving(l, desc), (53 - 6.875) / 2);
  EXPECT_DOUBLE_EQ(LinkloadModel::overlap_cycles(l, desc), (53 - 6.875) / 2);
  l.max_endpoint_flits = 95;  // the drain hides no more than it exceeds the busiest channel
  EXPECT_DOUBLE_EQ(LinkloadModel::overlap_cycles(l, desc), 106.25 - 95);
  desc.router_slowdown = 0;  // calibrated to no slowdown: the overlap stays
  EXPECT_DOUBLE_EQ(LinkloadModel::drain_flits(l, desc), 100);
  EXPECT_DOUBLE_EQ(LinkloadModel::overlap_cycles(l, desc), 100 - 95);
  desc.router_slowdown.reset();  // uncalibrated: longest route + busiest link
  EXPECT_DOUBLE_EQ(LinkloadModel::drain_flits(l, desc), 100);
  EXPECT_DOUBLE_EQ(LinkloadModel::overlap_cycles(l, desc), 0);
  desc.router_slowdown = 0.5;
  l.max_endpoint_flits = l.max_link_flits = 120;  // a PE's channel binds: not slowed
  EXPECT_DOUBLE_EQ(LinkloadModel::drain_flits(l, desc), 120);
  EXPECT_DOUBLE_EQ(LinkloadModel::overlap_cycles(l, desc), 0);
  // As busy as the busiest channel: slowed when ≥ 2 sources share the link (neighbours' flows
  // in a 2-D halo), not when it carries one source's whole traffic (a ring round).
  l.max_endpoint_flits = 100;
  l.max_link_flits = 100;
  l.busiest_router_link_shared = true;
  EXPECT_DOUBLE_EQ(LinkloadModel::drain_flits(l, desc), 106.25);
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
  const Choice outp = make({{PartDim::Outp, 16}}), spatial = make({{PartDim::OfmpH, 4}, {PartDim::OfmpW, 4}});
  const LinkLoad a2a = plain.route(edge_transfers(n.w, e, {&n.layer(e.src), outp, place(outp, hw.grid())},
                                                  {&n.layer(e.dst), spatial, place(spatial, hw.grid())}, hw.grid()));
  ASSERT_GT(a2a.max_router_link_flits, a2a.max_endpoint_flits);
  EXPECT_GT(slowed.serialization_cycles(a2a), plain.serialization_cycles(a2a));
  EXPECT_GT(slowed.overlap_cycles(a2a), 0);
  EXPECT_EQ(plain.overlap_cycles(a2a), 0);
  EXPECT_DOUBLE_EQ(slowed.edge_cost(n.w, e, outp, spatial).cycles,
                   slowed.latency_cycles(a2a) + slowed.serialization_cycles(a2a) - slowed.overlap_cycles(a2a));
  const Choice one = make({});
  EXPECT_EQ(slowed.edge_cost(n.w, e, outp, one).cycles, plain.edge_cost(n.w, e, outp, one).cycles);
}

}  // namespace
}  // namespace nocflow::optimizer
