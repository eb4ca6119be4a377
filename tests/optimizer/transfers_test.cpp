// SPDX-License-Identifier: MIT
// Exact data movement between partitioned layers, checked by hand (issue 5, acceptance 1).
#include "optimizer/partition/transfers.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include "noc/base/error.h"
#include "noc/topology/topology.h"
#include "optimizer/cost/dimension_order_loads.h"
#include "optimizer/cost/linkload_model.h"
#include "optimizer/cost/paper_model.h"
#include "optimizer/frontend/graph_builder.h"
#include "optimizer/partition/region.h"
#include "tests/optimizer/fast_path_network.h"
#include "tests/optimizer/make_choice.h"

namespace nocflow::optimizer {
namespace {

constexpr PeGrid kMesh4x4{true, 4, 4};

/// input → producer → consumer, 4-byte elements, and the edge's transfers on the 4×4 mesh.
struct TwoLayers {
  Graph graph;
  Workload w;
  explicit TwoLayers(Graph g) : graph(std::move(g)), w(build_workload(graph)) {}
  TwoLayers(const TwoLayers&) = delete;  // w points into graph
  std::int64_t tensor_bytes() const { return w.layers[0].output_bytes; }
  std::vector<Transfer> moves(const Choice& a, const Choice& b) const {
    const PlacedLayer p{&w.layers[0], a, place(a, kMesh4x4)};
    const PlacedLayer c{&w.layers[1], b, place(b, kMesh4x4)};
    return edge_transfers(w, w.edges.at(0), p, c, kMesh4x4);
  }
};

/// input 1×8×16×16 → producer conv (K=8, 1×1) → consumer conv (K=8, kernel k, pad k/2).
TwoLayers convs(std::int64_t consumer_kernel = 1, std::int64_t batch = 1) {
  GraphBuilder b("two", 4);
  NodeId x = b.input({batch, 8, 16, 16});
  x = b.conv(x, 8, 1, 1, 0, 1, false, "producer");
  b.conv(x, 8, consumer_kernel, 1, consumer_kernel / 2, 1, false, "consumer");
  return TwoLayers(b.finish());
}

/// input → producer → fc consumer (over the last axis).
TwoLayers fc_edge(bool conv_producer) {
  GraphBuilder b("fc", 4);
  if (conv_producer) {  // 1×8×4×4 conv output, fc over W: positions (C, H) kept
    b.gemm(b.conv(b.input({1, 8, 4, 4}), 8, 1, 1, 0, 1, false, "producer"), 6, true, "consumer");
  } else {  // 1×16×32 tokens, fc over D: tokens kept
    b.gemm(b.gemm(b.input({1, 16, 32}), 32, true, "producer"), 32, true, "consumer");
  }
  return TwoLayers(b.finish());
}

TEST(Transfers, OutpToOutpIsAllGather) {
  const TwoLayers t = convs();
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

// OUTP 4 x OFMP_H 4 on both sides of a 1x1 conv: each OFMP_H slice's 4 OUTP peers need all 8
// channels of their rows, which they hold in 4 equal pieces: 4 all-gathers, in ring order, whose
// transfers are all of the edge's. A halo, or pairs (OUTP 2), are not.
TEST(Transfers, OutpPeersOfABlockAreAllGatherRings) {
  const TwoLayers t = convs();
  const Choice c = make({{PartDim::Outp, 4}, {PartDim::OfmpH, 4}});
  const PlacedLayer p{&t.w.layers[0], c, place(c, kMesh4x4)},
      q{&t.w.layers[1], c, place(c, kMesh4x4)};
  const std::vector<RingGather> rings = all_gather_groups(t.w, t.w.edges.at(0), p, q, kMesh4x4);
  ASSERT_EQ(rings.size(), 4u);
  std::vector<int> members;
  for (const RingGather& r : rings) {
    EXPECT_EQ(r.ring.size(), 4u);
    EXPECT_EQ(r.chunk_bytes, t.tensor_bytes() / 16);
    for (std::size_t m = 1; m < r.ring.size(); ++m)  // one per mesh row, in ring order
      EXPECT_EQ(r.ring[m] / 4, r.ring[m - 1] / 4 + 1);
    members.insert(members.end(), r.ring.begin(), r.ring.end());
  }
  std::sort(members.begin(), members.end());
  EXPECT_EQ(members.size(), 16u);
  EXPECT_EQ(std::unique(members.begin(), members.end()), members.end());  // every PE in one ring
  const std::vector<Transfer> moves = t.moves(c, c);
  EXPECT_EQ(moves.size(), 4u * 4 * 3);
  const std::vector<int> ring_of = ring_index(rings, 16);
  for (const Transfer& m : moves) EXPECT_TRUE(in_ring(m, ring_of)) << m.src << " -> " << m.dst;

  // Behind a 3x3 conv the same OUTP peers also need their neighbours' halo rows, held
  // outside the group; behind INPP replicas each destination takes the nearest replica.
  const TwoLayers halo = convs(3);
  EXPECT_TRUE(all_gather_groups(halo.w, halo.w.edges.at(0),
                                {&halo.w.layers[0], c, place(c, kMesh4x4)},
                                {&halo.w.layers[1], c, place(c, kMesh4x4)}, kMesh4x4)
                  .empty());
  EXPECT_GT(halo.moves(c, c).size(), moves.size());
  const Choice replicas = make({{PartDim::Outp, 4}, {PartDim::OfmpH, 2}, {PartDim::Inpp, 2}});
  EXPECT_TRUE(all_gather_groups(t.w, t.w.edges.at(0),
                                {&t.w.layers[0], replicas, place(replicas, kMesh4x4)},
                                {&t.w.layers[1], c, place(c, kMesh4x4)}, kMesh4x4)
                  .empty());
  EXPECT_FALSE(t.moves(replicas, c).empty());
  const Choice pairs = make({{PartDim::Outp, 2}, {PartDim::OfmpH, 8}});
  EXPECT_TRUE(all_gather_groups(t.w, t.w.edges.at(0),
                                {&t.w.layers[0], pairs, place(pairs, kMesh4x4)},
                                {&t.w.layers[1], pairs, place(pairs, kMesh4x4)}, kMesh4x4)
                  .empty());
  EXPECT_FALSE(t.moves(pairs, pairs).empty());
}

// The test itself: one piece from each of ≥ 3 members, all the same size.
TEST(Transfers, AnAllGatherGroupHasOneEqualPieceFromEachMember) {
  const int dsts[] = {1, 4, 6};
  const Piece ok[] = {{4, 8}, {1, 8}, {6, 8}};
  EXPECT_TRUE(is_all_gather_group(dsts, 3, ok, 3));
  const Piece outside[] = {{4, 8}, {1, 8}, {7, 8}};
  EXPECT_FALSE(is_all_gather_group(dsts, 3, outside, 3));
  const Piece unequal[] = {{4, 8}, {1, 8}, {6, 16}};
  EXPECT_FALSE(is_all_gather_group(dsts, 3, unequal, 3));
  const Piece twice[] = {{4, 8}, {4, 8}, {6, 8}};
  EXPECT_FALSE(is_all_gather_group(dsts, 3, twice, 3));
  EXPECT_FALSE(is_all_gather_group(dsts, 3, ok, 2));  // a member holds nothing
  const int pair[] = {1, 4};
  EXPECT_FALSE(is_all_gather_group(pair, 2, ok, 2));  // two exchange one message either way
}

// Rings go row by row, each row in the snake's direction.
TEST(Placement, RingOrderWalksTheRowsLikeTheSnake) {
  EXPECT_EQ(ring_order(kMesh4x4, {15, 0, 5, 6, 12, 3}), (std::vector<int>{0, 3, 6, 5, 15, 12}));
  EXPECT_EQ(ring_order(PeGrid{false, 1, 8}, {5, 1, 3}), (std::vector<int>{1, 3, 5}));
}

TEST(Transfers, PaperCallsSameFactorOutpFreeExactMovementDoesNot) {
  // Seed Proposition 1: same OUTP factor on consecutive layers → redistribution 0. The consumer
  // still needs every input channel, so the exact movement is an all-gather: the gap the
  // simulator measures.
  const TwoLayers t = convs();
  const Choice c = make({{PartDim::Outp, 4}});
  EXPECT_EQ(redist_type(t.w.layers[0], c, t.w.layers[1], c), RedistType::None);
  EXPECT_EQ(total_bytes(t.moves(c, c)), 3 * t.tensor_bytes());
}

TEST(Transfers, OutpToAlignedInppMovesNothing) {
  const TwoLayers t = convs();
  for (int f : {2, 4, 8})
    EXPECT_TRUE(t.moves(make({{PartDim::Outp, f}}), make({{PartDim::Inpp, f}})).empty()) << f;
}

TEST(Transfers, BatchToBatchMovesNothing) {
  const TwoLayers t = convs(3, 4);
  const Choice c = make({{PartDim::Batch, 4}});
  EXPECT_TRUE(t.moves(c, c).empty());
}

TEST(Transfers, OutpToOfmpHMovesAllButOwnQuarter) {
  const TwoLayers t = convs();  // 1×1 consumer: no halo
  const auto moves = t.moves(make({{PartDim::Outp, 4}}), make({{PartDim::OfmpH, 4}}));
  EXPECT_EQ(total_bytes(moves), t.tensor_bytes() * 3 / 4);
  EXPECT_EQ(moves.size(), 12u);  // every node sends a 1/16 piece to each of the three others
  for (const Transfer& m : moves) EXPECT_EQ(m.bytes, t.tensor_bytes() / 16);
}

TEST(Transfers, OfmpHToOfmpHMovesExactlyTheHaloRows) {
  const TwoLayers t = convs(3);  // 3×3, pad 1: one row above and one below each tile
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

TEST(Transfers, FcReadsOnlyItsOwnTokensOrPositions) {
  const Choice tokens = make({{PartDim::OfmpH, 4}}), outp = make({{PartDim::Outp, 4}});
  const TwoLayers seq = fc_edge(false);
  // Token-split fc -> token-split fc: each node's tokens are already there.
  EXPECT_TRUE(seq.moves(tokens, tokens).empty());
  // Token split -> feature split: every node needs every token's features, 3/4 from others.
  EXPECT_EQ(total_bytes(seq.moves(tokens, outp)), 4 * seq.tensor_bytes() * 3 / 4);
  // INPP 4 reads a quarter of the features of every token: from the token split, 3/16 of the
  // tensor per node.
  EXPECT_EQ(total_bytes(seq.moves(tokens, make({{PartDim::Inpp, 4}}))),
            4 * seq.tensor_bytes() * 3 / 16);
  const TwoLayers conv = fc_edge(true);
  // OUTP splits the channels C of an N×C×H×W fc: the conv's OUTP 4 blocks are what it reads.
  EXPECT_TRUE(conv.moves(outp, outp).empty());
  // From a W split, each node needs its quarter of C over all of W: 3/4 of that from others.
  EXPECT_EQ(total_bytes(conv.moves(make({{PartDim::OfmpW, 4}}), outp)),
            4 * conv.tensor_bytes() / 4 * 3 / 4);
}

// A ReduceMean over the last axis (a LayerNorm as ONNX exports it) reads, for its block of
// positions, those positions' whole rows: no more (it used to read the whole sample).
TEST(Transfers, AReduceMeanReadsItsOwnPositionsWholeRows) {
  GraphBuilder b("mean", 4);
  OpAttrs mean;
  mean.axes = {-1};
  const NodeId x = b.conv(b.input({1, 8, 16, 16}), 8, 1, 1, 0, 1, false, "producer");
  b.op(OpKind::ReduceMean, mean, {x}, "consumer");
  const TwoLayers t(b.finish());
  const Choice rows = make({{PartDim::OfmpH, 4}}), cols = make({{PartDim::OfmpW, 4}});
  // Rows split alike on both sides: each node has its rows whole already.
  EXPECT_TRUE(t.moves(rows, rows).empty());
  // From a column split each node needs its quarter of the rows over all 16 columns, 3/4 of
  // them from the others.
  EXPECT_EQ(total_bytes(t.moves(cols, rows)), 4 * t.tensor_bytes() / 4 * 3 / 4);
  // The region itself: 2 channels of 8 (OUTP 4), all 16 rows and 16 columns.
  const NodeId consumer = t.w.layers[1].id;
  Box block = full_box(view4(t.graph.node(consumer).output.shape));
  block.r[kC] = {2, 4};
  EXPECT_EQ(input_region(t.graph, consumer, 0, block, Range{0, 1}).volume(), 2 * 16 * 16);
}

TEST(Transfers, InppPartialSumsAreReducedBeforeUse) {
  const TwoLayers t = convs();
  const Choice inpp = make({{PartDim::Inpp, 4}});
  const PlacedLayer p{&t.w.layers[0], inpp, place(inpp, kMesh4x4)};
  const auto ring = reduction_transfers(p);
  ASSERT_EQ(ring.size(), 4u);
  for (const Transfer& m : ring) EXPECT_EQ(m.bytes, 2 * 3 * t.tensor_bytes() / 4);  // 2(f−1)/f·D
  // A block f does not divide: 2(f−1) chunks of ceil(elements / f) whole elements, as the ring
  // sends them. 5 fp32 (20 bytes) over INPP 3: 4 chunks of 8 bytes (not 27, nor ceil(20 / 3)).
  GraphBuilder b("odd", 4);
  b.conv(b.conv(b.input({1, 8, 5, 1}), 1, 1, 1, 0, 1, false, "producer"), 1, 1, 1, 0, 1, false,
         "consumer");
  const Graph g = b.finish();
  const Workload w = build_workload(g);
  const Choice inpp3 = make({{PartDim::Inpp, 3}});
  const auto odd = reduction_transfers({&w.layers[0], inpp3, place(inpp3, kMesh4x4)});
  ASSERT_EQ(odd.size(), 3u);
  for (const Transfer& m : odd) EXPECT_EQ(m.bytes, 4 * 8);
  // After the all-reduce every member holds the whole output: an OUTP 4 consumer on the same
  // PEs reads its replica locally.
  EXPECT_TRUE(t.moves(inpp, make({{PartDim::Outp, 4}})).empty());
  EXPECT_TRUE(reduction_transfers({&t.w.layers[0], make({{PartDim::Outp, 4}}), place(make({{PartDim::Outp, 4}}), kMesh4x4)}).empty());
}

TEST(Transfers, NearestReplicaAndDeterministicOrder) {
  const TwoLayers t = convs();
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

TEST(Placement, BalancedBlocksTileTheAxisAndDifferByOne) {
  for (std::int64_t size = 1; size <= 40; ++size)
    for (std::int64_t f = 1; f <= size; ++f) {
      std::int64_t next = 0;
      for (std::int64_t i = 0; i < f; ++i) {
        const Range b = block_range(size, f, i);
        ASSERT_EQ(b.lo, next) << size << " in " << f;  // contiguous, from 0
        ASSERT_TRUE(b.size() == size / f || b.size() == (size + f - 1) / f) << size << " in " << f;
        for (std::int64_t x = b.lo; x < b.hi; ++x) ASSERT_EQ(block_holding(size, f, x), i);
        next = b.hi;
      }
      ASSERT_EQ(next, size);
      if (size % f == 0) {  // equal blocks, as before balanced splits
        for (std::int64_t i = 0; i < f; ++i) ASSERT_EQ(block_range(size, f, i).lo, i * (size / f));
      }
    }
  // 7 rows in 4: 1, 2, 2, 2.
  EXPECT_EQ(block_range(7, 4, 0).size(), 1);
  EXPECT_EQ(block_range(7, 4, 3).lo, 5);
}

TEST(Placement, SnakeKeepsConsecutiveNodesAdjacent) {
  const Choice c = make({{PartDim::Outp, 16}});
  const Placement p = place(c, kMesh4x4);
  for (int i = 1; i < 16; ++i) EXPECT_EQ(kMesh4x4.distance(p.pe[static_cast<std::size_t>(i - 1)], p.pe[static_cast<std::size_t>(i)]), 1);
  const Choice g = make({{PartDim::Outp, 2}, {PartDim::OfmpH, 2}, {PartDim::Inpp, 2}});
  for (int i = 0; i < g.nodes(); ++i) EXPECT_EQ(grid_index(g, grid_coord(g, i)), i);
  EXPECT_EQ(grid_coord(g, 1)[static_cast<std::size_t>(PartDim::Inpp)], 1);  // INPP fastest
}

TEST(Placement, RowsPlacementKeepsHaloNeighboursInLine) {
  // OFMP_H=4,OFMP_W=4 on 4×4: each row of nodes fills one mesh row (m = 1). The snake mirrors
  // rows 1 and 3 and puts (h, 0) and (h+1, 0) three columns apart; PLACE=ROWS makes every halo
  // 1 hop and every corner 2.
  const TwoLayers t = convs(3);
  Choice square = make({{PartDim::OfmpH, 4}, {PartDim::OfmpW, 4}});
  const auto snake_moves = t.moves(square, square);
  ASSERT_TRUE(rows_placement_applies(square, kMesh4x4));
  square.rows_placement = true;
  const Placement p = place(square, kMesh4x4);
  for (int i = 0; i < 16; ++i) EXPECT_EQ(p.pe[static_cast<std::size_t>(i)], i);  // row-major
  const auto moves = t.moves(square, square);
  ASSERT_EQ(moves.size(), 2u * (3 * 4 + 4 * 3) + 4u * 3 * 3);  // sides, both ways; corners
  ASSERT_EQ(snake_moves.size(), moves.size());
  int hops = 0, snake_hops = 0;
  for (std::size_t i = 0; i < moves.size(); ++i) {
    const Transfer& m = moves[i];
    const int dr = std::abs(m.src / 4 - m.dst / 4), dc = std::abs(m.src % 4 - m.dst % 4);
    EXPECT_LE(dr, 1);
    EXPECT_LE(dc, 1);
    hops += kMesh4x4.distance(m.src, m.dst);
    snake_hops += kMesh4x4.distance(snake_moves[i].src, snake_moves[i].dst);
  }
  EXPECT_EQ(hops, 2 * 24 + 2 * 36);  // sides 1 hop, corners 2
  EXPECT_GT(snake_hops, hops);
  // m = 3 (OFMP_W=6 on a 2-column mesh): (h, w) sits three rows straight below (h-1, w), and
  // consecutive nodes of a row stay one hop apart.
  const PeGrid narrow{true, 6, 2};
  Choice tall = make({{PartDim::OfmpH, 2}, {PartDim::OfmpW, 6}});
  tall.rows_placement = true;
  const Placement q = place(tall, narrow);
  for (int w = 0; w < 6; ++w) {
    EXPECT_EQ(q.pe[static_cast<std::size_t>(6 + w)] - q.pe[static_cast<std::size_t>(w)], 3 * 2);
    if (w > 0) {
      EXPECT_EQ(
          narrow.distance(q.pe[static_cast<std::size_t>(w - 1)], q.pe[static_cast<std::size_t>(w)]),
          1);
    }
  }
  // m even (OFMP_W=8 on 4 columns; 8 nodes per OUTP slice), one row of nodes (a 1-D split)
  // and crossbars are not offered, and refused.
  for (const Choice& c :
       {make({{PartDim::OfmpH, 2}, {PartDim::OfmpW, 8}}), make({{PartDim::OfmpW, 16}}),
        make({{PartDim::OfmpH, 2}, {PartDim::Outp, 4}}), make({{PartDim::OfmpW, 4}})}) {
    EXPECT_FALSE(rows_placement_applies(c, kMesh4x4)) << c.str();
    EXPECT_EQ(with_rows_placements({c}, kMesh4x4), std::vector<Choice>{c}) << c.str();
    Choice r = c;
    r.rows_placement = true;
    EXPECT_THROW(place(r, kMesh4x4), InputError) << c.str();
  }
  EXPECT_FALSE(rows_placement_applies(make({{PartDim::OfmpH, 4}, {PartDim::OfmpW, 4}}),
                                      PeGrid{false, 1, 16}));
  // The twin follows its choice, and survives the plan file's string form.
  const auto twins =
      with_rows_placements({make({{PartDim::OfmpH, 4}, {PartDim::OfmpW, 4}})}, kMesh4x4);
  ASSERT_EQ(twins.size(), 2u);
  EXPECT_FALSE(twins[0].rows_placement);
  EXPECT_EQ(twins[1].str(), "OFMP_H=4,OFMP_W=4,PLACE=ROWS");
  EXPECT_EQ(parse_choice(twins[1].str(), "t"), twins[1]);
  EXPECT_NE(twins[0], twins[1]);
  EXPECT_THROW(parse_choice("OFMP_H=4,PLACE=DIAGONAL", "t"), InputError);
}

TEST(Placement, RowsPlacementLinesUpOutpGroupsInColumns) {
  // OUTP=4,OFMP_H=4 on 4×4: the 4 nodes of one OUTP slice fill a mesh row. The snake puts the
  // OUTP group of slice h in columns h and 3 − h by turns; PLACE=ROWS puts it in column h, so
  // its all-gather runs along the column only.
  Choice c = make({{PartDim::Outp, 4}, {PartDim::OfmpH, 4}});
  ASSERT_EQ(rows_of_nodes(c, kMesh4x4), 4);
  ASSERT_TRUE(rows_placement_applies(c, kMesh4x4));
  auto columns_of_groups = [&](const Choice& choice) {
    const Placement p = place(choice, kMesh4x4);
    std::vector<std::set<int>> columns(4);
    for (int i = 0; i < choice.nodes(); ++i) {
      const int h = grid_coord(choice, i)[static_cast<std::size_t>(PartDim::OfmpH)];
      columns[static_cast<std::size_t>(h)].insert(p.pe[static_cast<std::size_t>(i)] %
                                                  kMesh4x4.cols);
    }
    return columns;
  };
  for (const std::set<int>& cols : columns_of_groups(c)) EXPECT_EQ(cols.size(), 2u);
  c.rows_placement = true;
  const auto columns = columns_of_groups(c);
  for (int h = 0; h < 4; ++h) EXPECT_EQ(columns[static_cast<std::size_t>(h)], std::set<int>{h});
  // OUTP → OUTP between two such layers: every member gathers the others' channels, on its
  // column's links only.
  const TwoLayers t = convs(1);
  const auto moves = t.moves(c, c);
  ASSERT_EQ(moves.size(), 16u * 3);
  for (const Transfer& m : moves) EXPECT_EQ(m.src % 4, m.dst % 4) << m.src << " -> " << m.dst;
  // Whole rows of nodes from a BATCH slice when OUTP slices do not fill one: 2 OUTP × 2 OFMP_H
  // fill a 4-wide row.
  const Choice b = make({{PartDim::Batch, 4}, {PartDim::Outp, 2}, {PartDim::OfmpH, 2}});
  EXPECT_EQ(rows_of_nodes(b, kMesh4x4), 4);
  EXPECT_TRUE(rows_placement_applies(b, kMesh4x4));
}

// ---- The fast path for cost tables (transfers.h: consumer_needs, ProducerLayout;
// linkload_model.cpp: edge_cycles_table) against the straightforward computation ----------

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
  // 3x3 with balanced splits: factors 3 and 9 of the 8-wide axes, blocks that differ by one.
  for (const PeGrid grid : {PeGrid{true, 4, 4}, PeGrid{true, 2, 4}, PeGrid{true, 3, 3}}) {
    HwDesc hw = machine("mesh", grid.rows, grid.cols, "xy");
    hw.balanced_splits = grid.rows == 3;
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

// Balanced blocks: every consumer node gets each element it needs exactly once, from another
// PE or from its own (producers without INPP, which hold each element once).
TEST(Transfers, BalancedBlocksDeliverEveryNeededElementOnce) {
  const FastPathNetwork n;
  const PeGrid grid{true, 3, 3};
  HwDesc hw = machine("mesh", 3, 3, "xy");
  hw.balanced_splits = true;
  std::size_t uneven = 0;
  for (const LayerEdge& e : n.w.edges) {
    const Layer& pl = n.layer(e.src);
    const Layer& cl = n.layer(e.dst);
    for (const Choice& a : all_choices(pl, hw)) {
      if (a.factor(PartDim::Inpp) > 1) continue;
      const PlacedLayer prod{&pl, a, place(a, grid)};
      for (const Choice& b : all_choices(cl, hw)) {
        const PlacedLayer cons{&cl, b, place(b, grid)};
        std::map<int, std::int64_t> received;
        for (const Transfer& t : edge_transfers(n.w, e, prod, cons, grid))
          received[t.dst] += t.bytes;
        for (int j = 0; j < b.nodes(); ++j) {
          const GridCoord g = grid_coord(b, j);
          const Box need = input_region(*n.w.graph, cl.id, e.input, output_block(cl, b, g),
                                        reduction_slice(cl, b, g));
          const int dst = cons.placement.pe[static_cast<std::size_t>(j)];
          std::int64_t local = 0;
          for (int i = 0; i < a.nodes(); ++i)
            if (prod.placement.pe[static_cast<std::size_t>(i)] == dst)
              local += intersect(need, output_block(pl, a, grid_coord(a, i))).volume();
          ASSERT_EQ(received[dst] + local * pl.elem_bytes, need.volume() * pl.elem_bytes)
              << pl.name << " -> " << cl.name << " " << a.str() << " -> " << b.str() << " node "
              << j;
        }
        uneven += a.nodes() % 3 == 0 && b.nodes() % 3 == 0;
      }
    }
  }
  EXPECT_GT(uneven, 100u);  // pairs where both sides split by 3 or 9
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
}  // namespace
}  // namespace nocflow::optimizer
