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

TEST(Transfers, InppPartialSumsAreReducedBeforeUse) {
  const TwoLayers t = convs();
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
}  // namespace
}  // namespace nocflow::optimizer
