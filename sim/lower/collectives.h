// SPDX-License-Identifier: MIT
#pragma once
// Collectives as messages with topology-aware schedules, appended to per-PE programs.
// Every schedule is deterministic and moves exactly the bytes its contract states; each PE's
// part is sends first, then the receives it needs, so no schedule can deadlock on its own.
//
//   ring_all_gather     n-1 rounds; in round k PE i forwards the chunk it got in round k-1 to
//                       its ring successor: every PE ends with all n chunks.
//                       Bytes on the wire: n (n-1) chunk.
//   direct_all_gather   every PE sends its chunk to every other PE at once. Same bytes.
//   ring_all_reduce     reduce-scatter then all-gather on the ring, each n-1 rounds of a
//                       chunk per PE, total/n in whole elements (ring_chunk_bytes); each
//                       reduce-scatter round adds a chunk's partial sums. Bytes: 2 (n-1) n chunks.
//   scatter             the root sends each other member its part.
//   all_to_all          every PE sends `bytes_per_pair` to every other member.
//   halo_exchange       each listed (from, to, bytes) neighbour transfer.
// A ring is the members in the order given (lowering passes INPP order for reductions and
// optimizer::ring_order, a snake walk over the mesh rows, for all-gathers).
#include <cstdint>
#include <vector>

#include "sim/system/program.h"

namespace nocflow::sim {

void ring_all_gather(ProgramSet& set, const std::vector<int>& ring, std::int64_t chunk_bytes, int layer,
                     int edge = -1);
void direct_all_gather(ProgramSet& set, const std::vector<int>& members, std::int64_t chunk_bytes, int layer);
/// `adds_per_cycle` and `element_bytes` turn each round's received bytes into reduce cycles.
void ring_all_reduce(ProgramSet& set, const std::vector<int>& ring, std::int64_t total_bytes,
                     int element_bytes, std::int64_t adds_per_cycle, int layer, int edge = -1);
void scatter(ProgramSet& set, int root, const std::vector<int>& members, std::int64_t bytes_each, int layer);
void all_to_all(ProgramSet& set, const std::vector<int>& members, std::int64_t bytes_per_pair, int layer);

struct HaloTransfer {
  int from, to;
  std::int64_t bytes;
};
void halo_exchange(ProgramSet& set, const std::vector<HaloTransfer>& transfers, int layer);

}  // namespace nocflow::sim
