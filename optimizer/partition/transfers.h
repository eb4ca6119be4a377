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
#include <algorithm>
#include <array>
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

/// The chunk each of `members` of a ring all-reduce of `block_bytes` sends per round: ⌈elements
/// / members⌉ whole elements of `elem_bytes` (the simulator's lowering and linkload alike; 2000
/// bytes of fp16 over 16 members: 126 bytes, not 125).
inline std::int64_t ring_chunk_bytes(std::int64_t block_bytes, int members, int elem_bytes) {
  const std::int64_t elements = (block_bytes + elem_bytes - 1) / elem_bytes;
  return (elements + members - 1) / members * elem_bytes;
}

/// The ring all-reduce of a layer's INPP partial sums: member m of each group sends
/// 2(f−1) chunks (ring_chunk_bytes of its block) to member m+1 (mod f), members ordered by
/// INPP index: the chunks the simulator's ring sends (sim/lower/collectives.h). Empty when
/// f_C = 1.
std::vector<Transfer> reduction_transfers(const PlacedLayer& layer);

/// Sum of bytes.
std::int64_t total_bytes(const std::vector<Transfer>& transfers);

// ---- The same transfers, fast, for tabulating a cost model over many choice pairs ----------
//
// edge_transfers recomputes everything for one pair. A cost table visits every pair of two
// choice lists, so the work that depends on one side only is done once per choice:
// `consumer_needs` (input_region of every consumer node, nodes with equal needs grouped) once
// per consumer choice, a `ProducerLayout` (block sizes and, per destination PE, the nearest
// replica of every block) once per producer choice. `for_each_group` then lists the pieces a
// group of consumer nodes receives, with bytes as products of 1-D overlaps.
//
// Consumer nodes that need the same box receive the same pieces from the same PEs when the
// producer has one replica per block (no INPP), so the pieces are listed once for the group
// (a conv consumer's nodes that differ only in OUTP need the same input: OUTP 16 lists each
// piece once instead of 16 times). With INPP replicas the nearest one depends on the
// destination and each node is its own group.
//
// Expanded (every destination of a group × every piece whose source is not that
// destination), the listed transfers are exactly those of edge_transfers, in another order:
// the pieces one node needs lie in distinct producer blocks whose replica sets are disjoint, so
// no (src, dst) pair comes twice and nothing needs merging. tests/optimizer/transfers_test.cpp
// checks this over all choice pairs of several edges.

/// The consumer side of an edge under one choice: the distinct non-empty needs, each with the
/// PEs of the consumer nodes that need it.
struct ConsumerNeeds {
  std::vector<Box> need;    ///< input_region of a block, in the producer's output view
  std::vector<int> first;   ///< need g is needed by pe[first[g] .. first[g + 1])
  std::vector<int> pe;      ///< ascending within a group
  std::size_t groups() const { return need.size(); }
};
ConsumerNeeds consumer_needs(const Workload& workload, const LayerEdge& edge,
                             const PlacedLayer& consumer);

/// Bytes one producer PE sends to each destination of the group being visited.
struct Piece {
  int src = 0;  ///< PE
  std::int64_t bytes = 0;
};

/// The producer side of an edge under one choice.
class ProducerLayout {
 public:
  ProducerLayout(const PlacedLayer& producer, const PeGrid& grid);

  /// For every group of `needs`, calls visit(dsts, num_dsts, pieces, num_pieces): each
  /// destination PE receives every piece whose source is another PE (a piece from a
  /// destination's own PE moves nothing to it). Without INPP a group is a group of
  /// `needs`; with INPP every destination is visited alone. `scratch` holds the pieces.
  template <class Visit>
  void for_each_group(const ConsumerNeeds& needs, std::vector<Piece>& scratch, Visit&& visit) const;

 private:
  /// The pieces of `need` with the sources `source[block]` (a destination's nearest replicas;
  /// identity_: the block indices), into `out`.
  Piece* list_pieces(const Box& need, const int* source, Piece* out) const;

  /// Per view axis: where each block starts, and one past the last (block_range).
  std::array<std::vector<std::int64_t>, 4> start_;
  std::array<std::vector<std::int32_t>, 4> block_of_;  ///< per view axis: the block of each index
  std::array<std::int64_t, 4> stride_{};  ///< block index = Σ block coordinate × stride
  std::int64_t elem_bytes_ = 0;
  int blocks_ = 0;           ///< distinct blocks (nodes / f_C)
  std::size_t dst_stride_ = 0;  ///< 0 without INPP (one replica per block), else blocks_
  /// source_[dst × dst_stride_ + block]: the replica of `block` nearest to PE `dst` (ties:
  /// lowest PE id), as in edge_transfers.
  std::vector<int> source_;
  std::vector<int> identity_;  ///< with INPP: 0, 1, ..., blocks_ − 1
};

template <class Visit>
void ProducerLayout::for_each_group(const ConsumerNeeds& needs, std::vector<Piece>& scratch,
                                    Visit&& visit) const {
  // A node needs each block at most once; with INPP a second half holds the blocks listed.
  scratch.resize(static_cast<std::size_t>(blocks_) * (dst_stride_ == 0 ? 1 : 2));
  for (std::size_t g = 0; g < needs.groups(); ++g) {
    const int* dsts = needs.pe.data() + needs.first[g];
    const auto members = static_cast<std::size_t>(needs.first[g + 1] - needs.first[g]);
    if (dst_stride_ == 0) {
      const Piece* end = list_pieces(needs.need[g], source_.data(), scratch.data());
      visit(dsts, members, static_cast<const Piece*>(scratch.data()), static_cast<std::size_t>(end - scratch.data()));
      continue;
    }
    // The blocks and bytes depend on the need only: listed once (src = block index), each
    // member then takes its nearest replicas.
    Piece* const blocks = scratch.data() + blocks_;
    const auto k = static_cast<std::size_t>(list_pieces(needs.need[g], identity_.data(), blocks) - blocks);
    for (std::size_t m = 0; m < members; ++m) {
      const int* source = source_.data() + static_cast<std::size_t>(dsts[m]) * dst_stride_;
      for (std::size_t i = 0; i < k; ++i) scratch[i] = {source[blocks[i].src], blocks[i].bytes};
      visit(dsts + m, std::size_t{1}, static_cast<const Piece*>(scratch.data()), k);
    }
  }
}

inline Piece* ProducerLayout::list_pieces(const Box& need, const int* source, Piece* out) const {
  // The blocks along axis a that overlap need [lo, hi) are those holding lo .. hi − 1; the
  // block index is Σ s_a × stride_a. The axis with the most blocks is visited innermost.
  struct Span {
    std::int64_t first = 0, last = 0;  ///< blocks [first, last)
    std::int64_t stride = 0;
    const std::int64_t* start = nullptr;  ///< block s is [start[s], start[s + 1])
    Range need;
    /// Indices of a contiguous need in block s (≥ 1: the span holds only blocks it meets).
    std::int64_t contiguous_overlap(std::int64_t s) const {
      return std::min(need.hi, start[s + 1]) - std::max(need.lo, start[s]);
    }
    std::int64_t overlap(std::int64_t s) const {
      if (need.step == 1) return contiguous_overlap(s);
      return clip(need, start[s], start[s + 1]).size();  // 0: the block lies between two rows
    }
  };
  std::array<Span, 4> span;
  for (std::size_t a = 0; a < 4; ++a) {
    const std::int32_t* block = block_of_[a].data();
    span[a] = {block[need.r[a].lo], block[need.r[a].hi - 1] + 1, stride_[a], start_[a].data(),
               need.r[a]};
  }
  for (std::size_t a = 0; a < 3; ++a)
    if (span[a].last - span[a].first > span[3].last - span[3].first) std::swap(span[a], span[3]);
  const Span& in = span[3];
  for (std::int64_t s0 = span[0].first; s0 < span[0].last; ++s0) {
    const std::int64_t v0 = span[0].overlap(s0) * elem_bytes_;
    for (std::int64_t s1 = span[1].first; s1 < span[1].last; ++s1) {
      const std::int64_t v1 = v0 * span[1].overlap(s1);
      for (std::int64_t s2 = span[2].first; s2 < span[2].last; ++s2) {
        const std::int64_t v2 = v1 * span[2].overlap(s2);
        if (v2 == 0) continue;
        const int* row = source + s0 * span[0].stride + s1 * span[1].stride + s2 * span[2].stride;
        if (in.need.step == 1) {  // no block of the span is empty: no test for one
          for (std::int64_t s3 = in.first; s3 < in.last; ++s3)
            *out++ = {row[s3 * in.stride], v2 * in.contiguous_overlap(s3)};
          continue;
        }
        for (std::int64_t s3 = in.first; s3 < in.last; ++s3)
          if (const std::int64_t v = v2 * in.overlap(s3)) *out++ = {row[s3 * in.stride], v};
      }
    }
  }
  return out;
}

// ---- All-gathers ---------------------------------------------------------------------------

/// An all-gather inside an edge: consumer PEs that need the same input, all of it held by
/// them, one equal piece each (OUTP peers of one spatial block, or one dimension split over
/// every PE). With `lowering.all_gather: ring` the simulator runs it as a ring all-gather
/// (sim/lower/collectives.h) instead of sending every piece directly; the linkload model
/// prices it so (LinkloadModel::ring_gather_time).
struct RingGather {
  std::vector<int> ring;         ///< members, in ring_order
  std::int64_t chunk_bytes = 0;  ///< each member's piece
};

/// Whether a group visited by ProducerLayout::for_each_group is such an all-gather: at least
/// three destinations (two exchange one message each either way), as many pieces, one from
/// each destination, all of the same size. `dsts` ascending, as for_each_group passes them.
bool is_all_gather_group(const int* dsts, std::size_t num_dsts, const Piece* pieces,
                         std::size_t num_pieces);

/// The all-gathers of an edge (the groups is_all_gather_group accepts), each ring in
/// ring_order. Their transfers are among edge_transfers' (member to member, chunk_bytes each).
std::vector<RingGather> all_gather_groups(const Workload& workload, const LayerEdge& edge,
                                          const PlacedLayer& producer, const PlacedLayer& consumer,
                                          const PeGrid& grid);

/// Per PE: the index of the ring it belongs to, or −1; empty without rings.
std::vector<int> ring_index(const std::vector<RingGather>& rings, int num_pes);
/// Whether a transfer runs inside a ring (both ends in the same one): `ring_of` from ring_index.
inline bool in_ring(const Transfer& t, const std::vector<int>& ring_of) {
  if (ring_of.empty()) return false;
  const int r = ring_of[static_cast<std::size_t>(t.src)];
  return r >= 0 && r == ring_of[static_cast<std::size_t>(t.dst)];
}

}  // namespace nocflow::optimizer
