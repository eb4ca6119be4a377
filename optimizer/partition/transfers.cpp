// SPDX-License-Identifier: MIT
#include "optimizer/partition/transfers.h"

#include <algorithm>
#include <tuple>

#include "optimizer/partition/region.h"

namespace nocflow::optimizer {
namespace {

/// Producer block indices along one view axis that overlap `need`.
Range overlapping_slices(Range need, std::int64_t size, int factor) {
  if (need.empty()) return {0, 0};
  return {block_holding(size, factor, need.lo), block_holding(size, factor, need.hi - 1) + 1};
}

}  // namespace

std::vector<Transfer> edge_transfers(const Workload& w, const LayerEdge& edge,
                                     const PlacedLayer& prod, const PlacedLayer& cons,
                                     const PeGrid& grid) {
  const Layer& pl = *prod.layer;
  const Layer& cl = *cons.layer;
  const Choice& pc = prod.choice;
  std::vector<Transfer> out;
  std::vector<std::int64_t> from(static_cast<std::size_t>(grid.num_pes()), 0);  // bytes per source PE
  std::vector<int> touched;
  const int fc = pc.factor(PartDim::Inpp);
  const std::array<int, 4> pf{pc.factor(PartDim::Batch), pc.factor(PartDim::Outp),
                              pc.factor(PartDim::OfmpH), pc.factor(PartDim::OfmpW)};
  // Consumer nodes by ascending PE, so that a stable counting sort by source below yields
  // (src, dst) order in linear time.
  std::vector<int> by_pe(static_cast<std::size_t>(cons.choice.nodes()));
  for (std::size_t j = 0; j < by_pe.size(); ++j) by_pe[j] = static_cast<int>(j);
  std::sort(by_pe.begin(), by_pe.end(), [&](int a, int b) {
    return cons.placement.pe[static_cast<std::size_t>(a)] < cons.placement.pe[static_cast<std::size_t>(b)];
  });
  for (int j : by_pe) {
    const GridCoord g = grid_coord(cons.choice, j);
    const int dst = cons.placement.pe[static_cast<std::size_t>(j)];
    const Box need = input_region(*w.graph, cl.id, edge.input, output_block(cl, cons.choice, g),
                                  reduction_slice(cl, cons.choice, g));
    if (need.empty()) continue;
    touched.clear();
    std::array<Range, 4> span;
    for (int a = 0; a < 4; ++a) span[a] = overlapping_slices(need.r[a], pl.out[a], pf[a]);
    GridCoord pg{};
    for (pg[0] = static_cast<int>(span[0].lo); pg[0] < span[0].hi; ++pg[0])
      for (pg[1] = static_cast<int>(span[1].lo); pg[1] < span[1].hi; ++pg[1])
        for (pg[2] = static_cast<int>(span[2].lo); pg[2] < span[2].hi; ++pg[2])
          for (pg[3] = static_cast<int>(span[3].lo); pg[3] < span[3].hi; ++pg[3]) {
            pg[4] = 0;
            const std::int64_t bytes =
                intersect(need, output_block(pl, pc, pg)).volume() * pl.elem_bytes;
            if (bytes == 0) continue;
            // Nearest replica among the INPP group; ties: lowest PE id.
            int best = -1, best_dist = 0;
            for (pg[4] = 0; pg[4] < fc; ++pg[4]) {
              const int pe = prod.placement.pe[static_cast<std::size_t>(grid_index(pc, pg))];
              const int d = grid.distance(pe, dst);
              if (best < 0 || d < best_dist || (d == best_dist && pe < best)) best = pe, best_dist = d;
            }
            if (best == dst) continue;
            if (from[static_cast<std::size_t>(best)] == 0) touched.push_back(best);
            from[static_cast<std::size_t>(best)] += bytes;
          }
    for (int src : touched) {
      out.push_back({src, dst, from[static_cast<std::size_t>(src)]});
      from[static_cast<std::size_t>(src)] = 0;
    }
  }
  // (src, dst) pairs are unique (consumer nodes never share a PE) and dst ascends: a stable
  // counting sort by src gives (src, dst) order.
  std::vector<std::size_t> start(static_cast<std::size_t>(grid.num_pes()) + 1, 0);
  for (const Transfer& t : out) ++start[static_cast<std::size_t>(t.src) + 1];
  for (std::size_t i = 1; i < start.size(); ++i) start[i] += start[i - 1];
  std::vector<Transfer> sorted(out.size());
  for (const Transfer& t : out) sorted[start[static_cast<std::size_t>(t.src)]++] = t;
  return sorted;
}

std::vector<Transfer> reduction_transfers(const PlacedLayer& pl) {
  const Choice& c = pl.choice;
  const int f = c.factor(PartDim::Inpp);
  std::vector<Transfer> out;
  if (f <= 1) return out;
  const Layer& l = *pl.layer;
  for (int i = 0; i < c.nodes(); ++i) {
    GridCoord g = grid_coord(c, i);
    const std::int64_t block = output_block(l, c, g).volume() * l.elem_bytes;
    // 2(f - 1) rounds of one chunk of whole elements, as the ring all-reduce sends them.
    const std::int64_t bytes = 2 * (f - 1) * ring_chunk_bytes(block, f, l.elem_bytes);
    const int src = pl.placement.pe[static_cast<std::size_t>(i)];
    g[4] = (g[4] + 1) % f;
    const int dst = pl.placement.pe[static_cast<std::size_t>(grid_index(c, g))];
    out.push_back({src, dst, bytes});
  }
  std::sort(out.begin(), out.end(), [](const Transfer& a, const Transfer& b) {
    return a.src != b.src ? a.src < b.src : a.dst < b.dst;
  });
  return out;
}

bool is_all_gather_group(const int* dsts, std::size_t m, const Piece* pieces, std::size_t k) {
  if (m < 3 || k != m) return false;
  std::vector<char> held(m, 0);  // k pieces from k distinct members: one from each
  for (std::size_t i = 0; i < k; ++i) {
    const int* at = std::lower_bound(dsts, dsts + m, pieces[i].src);
    if (pieces[i].bytes != pieces[0].bytes || at == dsts + m || *at != pieces[i].src) return false;
    char& h = held[static_cast<std::size_t>(at - dsts)];
    if (h) return false;
    h = 1;
  }
  return true;
}

std::vector<RingGather> all_gather_groups(const Workload& w, const LayerEdge& edge,
                                          const PlacedLayer& prod, const PlacedLayer& cons,
                                          const PeGrid& grid) {
  std::vector<RingGather> out;
  std::vector<Piece> scratch;
  ProducerLayout(prod, grid)
      .for_each_group(
          consumer_needs(w, edge, cons), scratch,
          [&](const int* dsts, std::size_t m, const Piece* pieces, std::size_t k) {
            if (is_all_gather_group(dsts, m, pieces, k))
              out.push_back({ring_order(grid, std::vector<int>(dsts, dsts + m)), pieces[0].bytes});
          });
  return out;
}

std::vector<int> ring_index(const std::vector<RingGather>& rings, int num_pes) {
  if (rings.empty()) return {};
  std::vector<int> out(static_cast<std::size_t>(num_pes), -1);
  for (std::size_t i = 0; i < rings.size(); ++i)
    for (int pe : rings[i].ring) out[static_cast<std::size_t>(pe)] = static_cast<int>(i);
  return out;
}

ConsumerNeeds consumer_needs(const Workload& w, const LayerEdge& edge, const PlacedLayer& cons) {
  const Layer& cl = *cons.layer;
  struct Node {
    Box need;
    int pe;
  };
  std::vector<Node> nodes;
  for (int j = 0; j < cons.choice.nodes(); ++j) {
    const GridCoord g = grid_coord(cons.choice, j);
    const Box need = input_region(*w.graph, cl.id, edge.input, output_block(cl, cons.choice, g),
                                  reduction_slice(cl, cons.choice, g));
    if (!need.empty()) nodes.push_back({need, cons.placement.pe[static_cast<std::size_t>(j)]});
  }
  auto key = [](const Node& n) {
    const auto& r = n.need.r;
    return std::tuple(r[0].lo, r[0].hi, r[1].lo, r[1].hi, r[2].lo, r[2].hi, r[3].lo, r[3].hi,
                      r[0].step, r[1].step, r[2].step, r[3].step, n.pe);
  };
  std::sort(nodes.begin(), nodes.end(), [&](const Node& a, const Node& b) { return key(a) < key(b); });
  ConsumerNeeds out;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const bool same = i > 0 && std::equal(nodes[i].need.r.begin(), nodes[i].need.r.end(), nodes[i - 1].need.r.begin());
    if (!same) {
      out.need.push_back(nodes[i].need);
      out.first.push_back(static_cast<int>(i));
    }
    out.pe.push_back(nodes[i].pe);
  }
  out.first.push_back(static_cast<int>(nodes.size()));
  return out;
}

ProducerLayout::ProducerLayout(const PlacedLayer& prod, const PeGrid& grid) {
  const Layer& l = *prod.layer;
  const Choice& c = prod.choice;
  const std::array<std::int64_t, 4> f{c.factor(PartDim::Batch), c.factor(PartDim::Outp),
                                      c.factor(PartDim::OfmpH), c.factor(PartDim::OfmpW)};
  for (std::size_t a = 0; a < 4; ++a) {
    auto& start = start_[a];
    start.resize(static_cast<std::size_t>(f[a]) + 1);
    for (std::int64_t i = 0; i <= f[a]; ++i)
      start[static_cast<std::size_t>(i)] = block_range(l.out[a], f[a], i).lo;
    auto& block = block_of_[a];
    block.resize(static_cast<std::size_t>(l.out[a]));
    for (std::int64_t b = 0; b < f[a]; ++b)
      std::fill(block.begin() + start[static_cast<std::size_t>(b)],
                block.begin() + start[static_cast<std::size_t>(b) + 1],
                static_cast<std::int32_t>(b));
  }
  stride_ = {f[1] * f[2] * f[3], f[2] * f[3], f[3], 1};
  elem_bytes_ = l.elem_bytes;
  const int fc = c.factor(PartDim::Inpp);
  blocks_ = c.nodes() / fc;
  // Grid index = block × f_C + INPP coordinate (INPP varies fastest, placement.h).
  auto pe = [&](int block, int r) { return prod.placement.pe[static_cast<std::size_t>(block * fc + r)]; };
  if (fc == 1) {
    source_.resize(static_cast<std::size_t>(blocks_));
    for (int b = 0; b < blocks_; ++b) source_[static_cast<std::size_t>(b)] = pe(b, 0);
    return;
  }
  dst_stride_ = static_cast<std::size_t>(blocks_);
  identity_.resize(static_cast<std::size_t>(blocks_));
  for (int b = 0; b < blocks_; ++b) identity_[static_cast<std::size_t>(b)] = b;
  source_.resize(static_cast<std::size_t>(grid.num_pes()) * dst_stride_);
  for (int dst = 0; dst < grid.num_pes(); ++dst)
    for (int b = 0; b < blocks_; ++b) {
      int best = -1, best_dist = 0;
      for (int r = 0; r < fc; ++r) {
        const int p = pe(b, r);
        const int d = grid.distance(p, dst);
        if (best < 0 || d < best_dist || (d == best_dist && p < best)) best = p, best_dist = d;
      }
      source_[static_cast<std::size_t>(dst) * dst_stride_ + static_cast<std::size_t>(b)] = best;
    }
}

std::int64_t total_bytes(const std::vector<Transfer>& t) {
  std::int64_t s = 0;
  for (const Transfer& x : t) s += x.bytes;
  return s;
}

}  // namespace nocflow::optimizer
