// SPDX-License-Identifier: MIT
#include "sim/lower/collectives.h"

#include <algorithm>

#include "optimizer/partition/transfers.h"

namespace nocflow::sim {

namespace {

/// One ring round: every member sends `bytes` to its successor, then receives from its
/// predecessor (and, with reduce_cycles > 0, adds what it received to its own partial sums).
void ring_round(ProgramSet& set, const std::vector<int>& ring, std::int64_t bytes, int layer,
                int edge, std::int64_t reduce_cycles) {
  const int n = static_cast<int>(ring.size());
  std::vector<std::int64_t> tags(n);
  for (int i = 0; i < n; ++i) {
    tags[i] = set.new_tag();
    set.send(ring[i], ring[(i + 1) % n], layer, bytes, tags[i], edge);
  }
  for (int i = 0; i < n; ++i) {
    const int prev = (i + n - 1) % n;
    set.recv(ring[i], ring[prev], layer, bytes, tags[prev], edge);
    if (reduce_cycles > 0) set.reduce(ring[i], layer, reduce_cycles, edge);
  }
}

}  // namespace

void ring_all_gather(ProgramSet& set, const std::vector<int>& ring, std::int64_t chunk_bytes, int layer,
                     int edge) {
  for (std::size_t round = 0; round + 1 < ring.size(); ++round)
    ring_round(set, ring, chunk_bytes, layer, edge, 0);
}

void direct_all_gather(ProgramSet& set, const std::vector<int>& members, std::int64_t chunk_bytes, int layer) {
  const int n = static_cast<int>(members.size());
  std::vector<std::vector<std::int64_t>> tag(n, std::vector<std::int64_t>(n));
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      if (i != j) {
        tag[i][j] = set.new_tag();
        set.send(members[i], members[j], layer, chunk_bytes, tag[i][j]);
      }
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i)
      if (i != j) set.recv(members[j], members[i], layer, chunk_bytes, tag[i][j]);
}

void ring_all_reduce(ProgramSet& set, const std::vector<int>& ring, std::int64_t total_bytes,
                     int element_bytes, std::int64_t adds_per_cycle, int layer, int edge) {
  const int n = static_cast<int>(ring.size());
  if (n < 2) return;
  const std::int64_t chunk = optimizer::ring_chunk_bytes(total_bytes, n, element_bytes);
  const std::int64_t elements = chunk / element_bytes;
  const std::int64_t reduce_cycles = std::max<std::int64_t>(1, (elements + adds_per_cycle - 1) / adds_per_cycle);
  // Reduce-scatter: after n-1 rounds each PE holds one fully reduced chunk; then all-gather.
  for (int round = 0; round < n - 1; ++round) ring_round(set, ring, chunk, layer, edge, reduce_cycles);
  ring_all_gather(set, ring, chunk, layer, edge);
}

void scatter(ProgramSet& set, int root, const std::vector<int>& members, std::int64_t bytes_each, int layer) {
  for (int m : members)
    if (m != root) set.transfer(root, m, layer, bytes_each);
}

void all_to_all(ProgramSet& set, const std::vector<int>& members, std::int64_t bytes_per_pair, int layer) {
  direct_all_gather(set, members, bytes_per_pair, layer);  // the same message pattern
}

void halo_exchange(ProgramSet& set, const std::vector<HaloTransfer>& transfers, int layer) {
  std::vector<std::int64_t> tags;
  for (const auto& t : transfers) {
    tags.push_back(set.new_tag());
    set.send(t.from, t.to, layer, t.bytes, tags.back());
  }
  for (std::size_t i = 0; i < transfers.size(); ++i)
    set.recv(transfers[i].to, transfers[i].from, layer, transfers[i].bytes, tags[i]);
}

}  // namespace nocflow::sim
