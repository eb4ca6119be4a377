// SPDX-License-Identifier: MIT
#pragma once
// Exact data movement between partitioned layers (DESIGN §5). The one implementation used by
// the linkload cost model and by the simulator's lowering.
//
// Ownership: grid node g of a layer computes output_block(g); with INPP f_C > 1 the f_C nodes
// sharing (b, k, h, w) hold partial sums of the same block and reduce them with a ring
// all-reduce (reduce-scatter + all-gather), after which every one of them holds the whole
// block (replicas).
// Needs: consumer node g needs input_region(...) of its block and reduction slice.
// Moves: for each needed piece, the replica nearest to the consumer's PE (hops; ties: lowest
// PE id) sends exactly the intersection; pieces already on the consumer's PE move nothing.
#include <cstdint>
#include <vector>

#include "optimizer/partition/choice.h"
#include "optimizer/partition/placement.h"
#include "optimizer/partition/workload.h"

namespace nocflow::optimizer {

struct Transfer {
  int src = 0;            ///< PE
  int dst = 0;            ///< PE
  std::int64_t bytes = 0;
  bool operator==(const Transfer& o) const { return src == o.src && dst == o.dst && bytes == o.bytes; }
};

/// One side of an edge: a layer with its choice and placement.
struct PlacedLayer {
  const Layer* layer = nullptr;
  Choice choice;
  Placement placement;
};

/// Moves along workload edge `edge` (producer → consumer input slot), merged per (src, dst)
/// and sorted by (src, dst). Bytes that stay on a PE are not listed.
std::vector<Transfer> edge_transfers(const Workload& workload, const LayerEdge& edge,
                                     const PlacedLayer& producer, const PlacedLayer& consumer,
                                     const PeGrid& grid);

/// The ring all-reduce of a layer's INPP partial sums: member m of each group sends
/// ⌈2(f−1)/f · block bytes⌉ to member m+1 (mod f), members ordered by INPP index. Empty when
/// f_C = 1.
std::vector<Transfer> reduction_transfers(const PlacedLayer& layer);

/// Sum of bytes.
std::int64_t total_bytes(const std::vector<Transfer>& transfers);

}  // namespace nocflow::optimizer
