// SPDX-License-Identifier: MIT
#pragma once
// Link loads of dimension-order routing (xy, yx) on a mesh, counted without walking routes: the
// linkload cost model's counter for tabulating edge tables (linkload_model.cpp).
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <vector>

#include "noc/topology/topology.h"
#include "optimizer/cost/linkload_model.h"
#include "optimizer/partition/transfers.h"

namespace nocflow::optimizer {

/// A message (one transfer) is cut into flits of the link width, at least one
/// (sim/system/messages.h).
class FlitSize {
 public:
  explicit FlitSize(std::int64_t bytes = 1) : bytes_(std::max<std::int64_t>(1, bytes)) {
    if ((bytes_ & (bytes_ - 1)) == 0) shift_ = __builtin_ctzll(static_cast<unsigned long long>(bytes_));
  }
  std::int64_t bytes() const { return bytes_; }
  std::int64_t flits(std::int64_t bytes) const {
    const std::int64_t rounded = bytes + bytes_ - 1;
    return std::max<std::int64_t>(1, shift_ >= 0 ? rounded >> shift_ : rounded / bytes_);
  }

 private:
  std::int64_t bytes_;
  int shift_ = -1;  ///< log2(bytes_) when a power of two: a shift instead of a division
};

/// The smallest index range holding everything added (empty: lo > hi).
struct Extent {
  int lo = std::numeric_limits<int>::max(), hi = -1;
  void add(int i) { lo = std::min(lo, i), hi = std::max(hi, i); }
  void add(const Extent& e) { lo = std::min(lo, e.lo), hi = std::max(hi, e.hi); }
};

/// The same loads for dimension-order routing on a mesh, without walking routes. A route goes
/// along the first dimension A (x for xy, y for yx) in the source's line, then along B in the
/// destination's line, then ejects. Each straight run adds its flits to a contiguous range of
/// links of one line and direction, kept in difference form (+flits at the link where the run
/// starts, −flits at the router where it stops); finish() takes prefix sums in each direction
/// over the lines that carried something. Per group of destinations (for_each_group):
///  - one destination: O(1) per piece, the B runs' common stop and the ejection once;
///  - several destinations, grouped below not paying (add_direct): each piece's flits,
///    coordinates, injection and the extents once per group, then per destination O(1) per piece
///    along A and O(1) per source line along B;
///  - several (m) destinations: O(pieces + lines × (m + routers per line)) instead of
///    O(pieces × m): a source's A runs towards all destinations start at its router (flits ×
///    destinations beyond it in each direction), stop at the destinations' coordinates along A
///    (in each source line: destinations there × flits of the line's sources before them),
///    and each destination's B runs start at every source line (that line's flits).
/// Everything is exact integer arithmetic, equal to walking every route (linkload_model.cpp's
/// PathLoadCounter; tests/optimizer/transfers_test.cpp). For cost tables only: byte_hops
/// (energy) is not counted.
class DimensionOrderLoadCounter {
 public:
  DimensionOrderLoadCounter(const DimensionOrderLoadCounter&) = delete;  // run_a_, run_b_ point into runs_
  DimensionOrderLoadCounter& operator=(const DimensionOrderLoadCounter&) = delete;

  /// `always_group`: take the grouped path whenever a group has ≥ 2 destinations (tests).
  /// `hw`: the channels' flow rates for LinkLoad::endpoint_cycles (nullptr: every flow streams).
  DimensionOrderLoadCounter(const noc::Topology& t, FlitSize flit, bool x_first, bool always_group,
                            const HwDesc* hw = nullptr)
      : flit_(flit),
        na_(x_first ? t.cols() : t.rows()),
        nb_(x_first ? t.rows() : t.cols()),
        always_group_(always_group),
        hw_(hw && hw->flow_rate() < 1 ? hw : nullptr) {
    for (int n = 0; n < t.num_nodes(); ++n) {
      const int r = t.node_router(n);
      a_.push_back(x_first ? t.x(r) : t.y(r));
      b_.push_back(x_first ? t.y(r) : t.x(r));
      at_.push_back({a_.back(), b_.back(), b_.back() * na_});
    }
    const auto links = static_cast<std::size_t>(na_ * nb_);
    links_ = links;
    runs_.assign(4 * links, 0);
    run_a_ = {runs_.data(), runs_.data() + links};
    run_b_ = {runs_.data() + 2 * links, runs_.data() + 3 * links};
    for (auto* v : {&injected_, &weight_, &sent_}) v->assign(links, 0);
    line_flits_.assign(static_cast<std::size_t>(nb_), 0);
    own_.assign(static_cast<std::size_t>(t.num_nodes()), -1);
    seen_.assign(own_.size(), 0);
    per_a_.assign(static_cast<std::size_t>(na_), 0);
    per_b_.assign(static_cast<std::size_t>(nb_), 0);
    for (auto* v : {&beyond_[kUp], &beyond_[kDown]}) v->assign(static_cast<std::size_t>(na_), 0);
  }

  void add_group(const int* dsts, std::size_t m, const Piece* pieces, std::size_t k) {
    const std::size_t direct = k * m, grouped = 2 * (k + std::min<std::size_t>(k, static_cast<std::size_t>(nb_)) *
                                                          (static_cast<std::size_t>(na_) + m));
    if (m > 1 && (grouped < direct || always_group_)) return add_many(dsts, m, pieces, k);
    if (m > 1 && add_direct(dsts, m, pieces, k)) return;
    for (std::size_t d = 0; d < m; ++d) add_one(dsts[d], pieces, k);
  }

  LinkLoad finish() {
    std::int64_t router = 0, endpoint = most_, router_flit_hops = 0, unused = 0;
    auto take = [](std::int64_t& cell, std::int64_t& sum, std::int64_t& most, std::int64_t& total) {
      sum += cell;
      cell = 0;
      most = std::max(most, sum);
      total += sum;
    };
    // Each line's two directions at once, with their own maxima and totals (integers: the
    // same results in any order), so that the two dependency chains overlap.
    auto lines = [&](std::int64_t* up_cells, std::int64_t* down_cells, int n) {
      std::int64_t up = 0, down = 0, most_up = 0, most_down = 0, total_up = 0, total_down = 0;
      for (int i = 0, j = n - 1; i < n; ++i, --j) {
        take(up_cells[i], up, most_up, total_up);
        take(down_cells[j], down, most_down, total_down);
      }
      router = std::max({router, most_up, most_down});
      router_flit_hops += total_up + total_down;
    };
    for (int line = lines_a_.lo; line <= lines_a_.hi; ++line)
      lines(run_a_[kUp] + cell(line, 0), run_a_[kDown] + cell(line, 0), na_);
    for (int line = lines_b_.lo; line <= lines_b_.hi; ++line)
      lines(run_b_[kUp] + cell_b(line, 0), run_b_[kDown] + cell_b(line, 0), nb_);
    double endpoint_cycles =
        hw_ ? std::max(slowest_ejection_, hw_->stream_cycles(static_cast<double>(longest_))) : 0;
    std::int64_t max_sent = 0;
    for (int c = sources_.lo; c <= sources_.hi; ++c) {
      const auto i = static_cast<std::size_t>(c);
      max_sent = std::max(max_sent, sent_[i]);
      if (hw_ && sent_[i] > 0)
        endpoint_cycles =
            std::max(endpoint_cycles, static_cast<double>(injected_[i]) /
                                          hw_->injection_rate(sent_[i], injected_[i]));
      sent_[i] = 0;
      std::int64_t sum = 0;
      take(injected_[i], sum, endpoint, unused);
    }
    lines_a_ = lines_b_ = sources_ = {};
    LinkLoad out;
    out.set_counts(router, endpoint, router_flit_hops, 2 * (na_ - 1) * nb_ + 2 * (nb_ - 1) * na_, flits_, messages_);
    if (hw_) out.endpoint_cycles = endpoint_cycles;
    out.max_sent = static_cast<int>(max_sent);
    // Over a superset of the messages (own pieces too): never false where they have one.
    out.short_messages = shortest_ <= longest_ / kShortFraction;
    slowest_ejection_ = 0;
    flits_ = messages_ = longest_ = 0;
    shortest_ = std::numeric_limits<std::int64_t>::max();
    out.max_routers = max_routers_;
    out.max_hops = max_routers_ > 0 ? max_routers_ - 1 : 0;
    max_routers_ = 0;
    most_ = 0;
    return out;
  }

 private:
  static constexpr std::size_t kUp = 0, kDown = 1;  ///< towards larger / smaller coordinates

  /// [line b][a]: runs along A, injection, and a node's weight are indexed by its router's
  /// cell; [line a][b]: runs along B.
  std::size_t cell(int line_b, int a) const { return static_cast<std::size_t>(line_b * na_ + a); }
  std::size_t cell_b(int line_a, int b) const { return static_cast<std::size_t>(line_a * nb_ + b); }

  /// One destination, O(1) per piece. Accumulators, sizes and array bases are locals: as
  /// members they would be stored and reloaded for every piece (the int64 stores may alias
  /// them). The cells injecting are recorded as whole lines (a superset: finish() scans zeros
  /// at no effect).
  void add_one(int dst, const Piece* pieces, std::size_t k) {
    const NodeAt* const at = at_.data();
    const int na = na_;
    const std::size_t links = links_;
    const FlitSize flit = flit_;
    const int ad = at[dst].a, bd = at[dst].b;
    std::int64_t* const run_a = run_a_[kUp];  // kDown: + links
    std::int64_t* const run_b_line = run_b_[kUp] + static_cast<std::size_t>(ad * nb_);
    std::int64_t* const injected = injected_.data();
    std::int64_t* const sent = sent_.data();
    std::int64_t into = 0, stop_up = 0, stop_down = 0, messages = 0, longest = 0;
    std::int64_t shortest = std::numeric_limits<std::int64_t>::max();
    int routers = 0;
    int lines_lo = std::numeric_limits<int>::max(), lines_hi = -1;
    for (const Piece* p = pieces; p != pieces + k; ++p) {
      const int src = p->src;
      if (src == dst) continue;
      const std::int64_t flits = flit.flits(p->bytes);
      const int as = at[src].a, bs = at[src].b, row = at[src].row;
      const auto c = static_cast<std::size_t>(row + as);
      injected[c] += flits;
      ++sent[c];
      into += flits;
      ++messages;
      longest = std::max(longest, flits);
      shortest = std::min(shortest, flits);
      // Run 1 along A in line bs, from as up to (not including) ad; run 2 along B in line ad,
      // from bs to bd, whose stop is common to the destination. Branch-free: the direction is
      // data-dependent and would mispredict; an empty run adds 0. The direction is an offset.
      std::int64_t* const along_a = run_a + static_cast<std::size_t>(as > ad) * links;
      const std::int64_t flits_a = as != ad ? flits : 0;
      along_a[c] += flits_a;
      along_a[static_cast<std::size_t>(row + ad)] -= flits_a;
      lines_lo = std::min(lines_lo, bs), lines_hi = std::max(lines_hi, bs);
      run_b_line[static_cast<std::size_t>(bs > bd) * links + static_cast<std::size_t>(bs)] +=
          bs != bd ? flits : 0;
      stop_up += bs < bd ? flits : 0;
      stop_down += bs > bd ? flits : 0;
      const int r = std::abs(as - ad) + std::abs(bs - bd) + 1;
      routers = std::max(routers, r);
    }
    if (into == 0) return;
    longest_ = std::max(longest_, longest);
    shortest_ = std::min(shortest_, shortest);
    flits_ += into;
    messages_ += messages;
    run_b_line[bd] -= stop_up;
    run_b_line[links + static_cast<std::size_t>(bd)] -= stop_down;
    lines_a_.add(Extent{lines_lo, lines_hi});
    lines_b_.add(ad);
    sources_.add(Extent{lines_lo * na, lines_hi * na + na - 1});
    most_ = std::max(most_, into);  // the ejection link, complete: each destination comes once
    if (hw_)
      slowest_ejection_ = std::max(slowest_ejection_,
                                   static_cast<double>(into) / hw_->ejection_rate(messages, into));
    max_routers_ = std::max(max_routers_, routers);
  }

  /// m > 1 destinations receiving the same pieces, each piece counted per destination as
  /// add_one would (the same integer sums), with the per-piece work that does not depend on
  /// the destination done once: flits, coordinates, injection (m × flits, less a
  /// destination's own piece), extents, and the longest route (the Manhattan distance from a
  /// destination to the pieces' sources is set by the extremes of a + b and a − b). With
  /// m ≥ 2 every piece goes to some destination that receives something, so the extents and
  /// the longest message are those of add_one's. Returns false (having done nothing) when a
  /// source sends two pieces or a destination comes twice: add_one then counts them.
  bool add_direct(const int* dsts, std::size_t m, const Piece* pieces, std::size_t k) {
    const NodeAt* const at = at_.data();
    const int na = na_, nb = nb_;
    const std::size_t links = links_;
    const FlitSize flit = flit_;
    if (direct_.size() < k) direct_.resize(k);
    DirectPiece* const dp = direct_.data();
    int* const own = own_.data();
    bool unique = true;
    for (std::size_t i = 0; i < k; ++i) {
      int& o = own[static_cast<std::size_t>(pieces[i].src)];
      unique &= o < 0;
      o = static_cast<int>(i);
    }
    char* const seen = seen_.data();
    for (std::size_t d = 0; d < m; ++d) {
      char& v = seen[static_cast<std::size_t>(dsts[d])];
      unique &= v == 0;
      v = 1;
    }
    auto clear = [&] {
      for (std::size_t i = 0; i < k; ++i) own[static_cast<std::size_t>(pieces[i].src)] = -1;
      for (std::size_t i = 0; i < k; ++i) line_flits_[static_cast<std::size_t>(at_[pieces[i].src].b)] = 0;
      for (std::size_t d = 0; d < m; ++d) seen[static_cast<std::size_t>(dsts[d])] = 0;
    };
    if (!unique) {
      clear();
      return false;
    }
    const auto dm = static_cast<std::int64_t>(m);
    std::int64_t* const injected = injected_.data();
    std::int64_t* const sent = sent_.data();
    std::int64_t* const line = line_flits_.data();  // zero between calls
    std::int64_t total = 0, longest = 0, shortest = std::numeric_limits<std::int64_t>::max();
    int lines_lo = std::numeric_limits<int>::max(), lines_hi = -1;
    int lo_s[2] = {1 << 30, 1 << 30}, hi_s[2] = {-(1 << 30), -(1 << 30)};
    for (std::size_t i = 0; i < k; ++i) {
      const int src = pieces[i].src;
      const std::int64_t flits = flit.flits(pieces[i].bytes);
      const int as = at[src].a, bs = at[src].b, row = at[src].row;
      dp[i] = {as, bs, row, flits};
      line[bs] += flits;
      injected[row + as] += flits * dm;
      sent[row + as] += dm;
      total += flits;
      longest = std::max(longest, flits);
      shortest = std::min(shortest, flits);  // own pieces too: a superset of the messages
      lines_lo = std::min(lines_lo, bs), lines_hi = std::max(lines_hi, bs);
      lo_s[0] = std::min(lo_s[0], as + bs), hi_s[0] = std::max(hi_s[0], as + bs);
      lo_s[1] = std::min(lo_s[1], as - bs), hi_s[1] = std::max(hi_s[1], as - bs);
    }
    std::int64_t* const run_a = run_a_[kUp];  // kDown: + links
    bool any = false;
    for (std::size_t d = 0; d < m; ++d) {
      const int dst = dsts[d];
      const int o = own[static_cast<std::size_t>(dst)];
      const std::int64_t own_flits = o >= 0 ? dp[o].flits : 0;
      const std::int64_t into = total - own_flits;
      if (o >= 0) {  // its own piece moves nothing (its runs below are empty)
        const auto c = static_cast<std::size_t>(dp[o].row + dp[o].a);
        injected[c] -= own_flits;
        --sent[c];
      }
      if (into == 0) continue;  // only its own piece: nothing else to count
      any = true;
      const std::int64_t messages = static_cast<std::int64_t>(k) - (o >= 0 ? 1 : 0);
      const int ad = at[dst].a, bd = at[dst].b;
      std::int64_t* const run_b_line = run_b_[kUp] + static_cast<std::size_t>(ad * nb);
      for (const DirectPiece* p = dp; p != dp + k; ++p) {
        const int as = p->a;
        std::int64_t* const along_a = run_a + static_cast<std::size_t>(as > ad) * links;
        const std::int64_t flits_a = as != ad ? p->flits : 0;
        along_a[p->row + as] += flits_a;
        along_a[p->row + ad] -= flits_a;
      }
      // The B runs, a line's pieces at once (the same integer sums as piece by piece).
      std::int64_t stop_up = 0, stop_down = 0;
      for (int b = lines_lo; b < bd && b <= lines_hi; ++b) run_b_line[b] += line[b], stop_up += line[b];
      for (int b = std::max(lines_lo, bd + 1); b <= lines_hi; ++b)
        run_b_line[links + static_cast<std::size_t>(b)] += line[b], stop_down += line[b];
      flits_ += into;
      messages_ += messages;
      run_b_line[bd] -= stop_up;
      run_b_line[links + static_cast<std::size_t>(bd)] -= stop_down;
      lines_b_.add(ad);
      most_ = std::max(most_, into);
      if (hw_)
        slowest_ejection_ = std::max(slowest_ejection_,
                                     static_cast<double>(into) / hw_->ejection_rate(messages, into));
      const int distance = std::max({hi_s[0] - (ad + bd), (ad + bd) - lo_s[0], hi_s[1] - (ad - bd),
                                     (ad - bd) - lo_s[1]});
      max_routers_ = std::max(max_routers_, distance + 1);
    }
    if (any) {
      longest_ = std::max(longest_, longest);
      shortest_ = std::min(shortest_, shortest);
      lines_a_.add(Extent{lines_lo, lines_hi});
      sources_.add(Extent{lines_lo * na, lines_hi * na + na - 1});
    }
    clear();
    return true;
  }

  /// m > 1 destinations receiving the same pieces (see the class comment).
  void add_many(const int* dsts, std::size_t m, const Piece* pieces, std::size_t k) {
    const auto dm = static_cast<std::int64_t>(m);
    // Sources by router cell and by line; destinations per coordinate along A and along B.
    Extent lines;
    std::int64_t total = 0;
    for (std::size_t i = 0; i < k; ++i) {
      const auto s = static_cast<std::size_t>(pieces[i].src);
      const std::int64_t flits = flit_.flits(pieces[i].bytes);
      weight_[cell(b_[s], a_[s])] = flits;
      line_flits_[static_cast<std::size_t>(b_[s])] += flits;
      lines.add(b_[s]);
      total += flits;
      longest_ = std::max(longest_, flits);  // m ≥ 2: every piece goes to another PE
      shortest_ = std::min(shortest_, flits);
    }
    for (std::size_t d = 0; d < m; ++d) {
      const auto j = static_cast<std::size_t>(dsts[d]);
      ++per_a_[static_cast<std::size_t>(a_[j])];
      ++per_b_[static_cast<std::size_t>(b_[j])];
    }
    // Injection and ejection: every piece goes to every destination but its own PE.
    for (std::size_t i = 0; i < k; ++i) {
      const auto s = static_cast<std::size_t>(pieces[i].src);
      injected_[cell(b_[s], a_[s])] += weight_[cell(b_[s], a_[s])] * dm;
      sent_[cell(b_[s], a_[s])] += dm;
      sources_.add(static_cast<int>(cell(b_[s], a_[s])));
    }
    for (std::size_t d = 0; d < m; ++d) {
      const auto j = static_cast<std::size_t>(dsts[d]);
      const std::int64_t own = weight_[cell(b_[j], a_[j])];
      injected_[cell(b_[j], a_[j])] -= own;
      const std::int64_t received = static_cast<std::int64_t>(k) - (own > 0 ? 1 : 0);
      sent_[cell(b_[j], a_[j])] -= own > 0 ? 1 : 0;
      most_ = std::max(most_, total - own);
      if (hw_ && received > 0)
        slowest_ejection_ =
            std::max(slowest_ejection_,
                     static_cast<double>(total - own) / hw_->ejection_rate(received, total - own));
      flits_ += total - own;
      messages_ += received;
    }
    // A runs start at each source router: flits × destinations beyond it in each direction.
    std::vector<std::int64_t>& beyond_up = beyond_[kUp];
    std::vector<std::int64_t>& beyond_down = beyond_[kDown];
    beyond_up[na_ - 1] = beyond_down[0] = 0;
    for (int a = na_ - 2; a >= 0; --a) beyond_up[a] = beyond_up[a + 1] + per_a_[a + 1];
    for (int a = 1; a < na_; ++a) beyond_down[a] = beyond_down[a - 1] + per_a_[a - 1];
    for (std::size_t i = 0; i < k; ++i) {
      const auto s = static_cast<std::size_t>(pieces[i].src);
      const std::size_t c = cell(b_[s], a_[s]);
      run_a_[kUp][c] += weight_[c] * beyond_up[a_[s]];
      run_a_[kDown][c] += weight_[c] * beyond_down[a_[s]];
    }
    // ... and stop at each destination coordinate: destinations there × the line's flits
    // from sources before it.
    lines_a_.add(lines);
    for (int line = lines.lo; line <= lines.hi; ++line) {
      std::int64_t before = 0;
      for (int a = 0; a < na_; ++a) {
        run_a_[kUp][cell(line, a)] -= per_a_[a] * before;
        before += weight_[cell(line, a)];
      }
      before = 0;
      for (int a = na_ - 1; a >= 0; --a) {
        run_a_[kDown][cell(line, a)] -= per_a_[a] * before;
        before += weight_[cell(line, a)];
      }
    }
    // B runs: in the destination's line along A, from every source line to the destination.
    for (std::size_t d = 0; d < m; ++d) {
      const auto j = static_cast<std::size_t>(dsts[d]);
      const int ad = a_[j], bd = b_[j];
      std::int64_t up = 0, down = 0;
      for (int b = 0; b < nb_; ++b) {
        const std::int64_t flits = line_flits_[static_cast<std::size_t>(b)];
        if (b < bd) run_b_[kUp][cell_b(ad, b)] += flits, up += flits;
        if (b > bd) run_b_[kDown][cell_b(ad, b)] += flits, down += flits;
      }
      run_b_[kUp][cell_b(ad, bd)] -= up;
      run_b_[kDown][cell_b(ad, bd)] -= down;
      lines_b_.add(ad);
    }
    // The longest route: the Manhattan distance between the sets is set by the extremes of
    // a + b and a − b (a piece to its own PE has distance 0).
    int lo_s[2] = {1 << 30, 1 << 30}, hi_s[2] = {-(1 << 30), -(1 << 30)}, lo_d[2] = {1 << 30, 1 << 30},
        hi_d[2] = {-(1 << 30), -(1 << 30)};
    auto extremes = [](int a, int b, int* lo, int* hi) {
      lo[0] = std::min(lo[0], a + b), hi[0] = std::max(hi[0], a + b);
      lo[1] = std::min(lo[1], a - b), hi[1] = std::max(hi[1], a - b);
    };
    for (std::size_t i = 0; i < k; ++i) extremes(a_[pieces[i].src], b_[pieces[i].src], lo_s, hi_s);
    for (std::size_t d = 0; d < m; ++d) extremes(a_[dsts[d]], b_[dsts[d]], lo_d, hi_d);
    int distance = 0;
    for (int r = 0; r < 2; ++r) distance = std::max({distance, hi_s[r] - lo_d[r], hi_d[r] - lo_s[r]});
    if (distance > 0) max_routers_ = std::max(max_routers_, distance + 1);
    // Scratch back to zero.
    for (std::size_t i = 0; i < k; ++i) {
      const auto s = static_cast<std::size_t>(pieces[i].src);
      weight_[cell(b_[s], a_[s])] = 0;
      line_flits_[static_cast<std::size_t>(b_[s])] = 0;
    }
    std::fill(per_a_.begin(), per_a_.end(), 0);
    std::fill(per_b_.begin(), per_b_.end(), 0);
  }

  FlitSize flit_;
  int na_, nb_;                ///< routers along A and along B
  bool always_group_;
  std::vector<int> a_, b_;     ///< per node: its router's coordinates along A and B
  /// Loads in difference form per direction: runs along A by cell(), along B by cell_b().
  /// run_a_[kUp], run_a_[kDown], run_b_[kUp], run_b_[kDown]: consecutive blocks of links_ in
  /// runs_, so that a direction is an offset.
  std::array<std::int64_t*, 2> run_a_, run_b_;
  std::vector<std::int64_t> runs_;
  std::size_t links_ = 0;  ///< cells: na_ × nb_
  struct NodeAt {
    int a, b, row;  ///< a_, b_, and cell(b, 0)
  };
  std::vector<NodeAt> at_;  ///< per node
  std::vector<std::int64_t> injected_;  ///< by cell()
  std::vector<std::int64_t> sent_;      ///< messages, by cell()
  const HwDesc* hw_;                    ///< nullptr: every flow streams (no rates to apply)
  double slowest_ejection_ = 0;         ///< the slowest ejection channel so far, in cycles
  Extent lines_a_, lines_b_, sources_;  ///< lines along A, along B, cells that carry flits
  std::int64_t most_ = 0;      ///< the busiest ejection link so far
  std::int64_t flits_ = 0, messages_ = 0;  ///< so far
  std::int64_t longest_ = 0;               ///< the longest message's flits so far
  std::int64_t shortest_ = std::numeric_limits<std::int64_t>::max();  ///< the shortest's
  int max_routers_ = 0;
  // add_many's scratch, zero between calls.
  std::vector<std::int64_t> weight_;      ///< flits of the piece from each cell
  std::vector<std::int64_t> line_flits_;  ///< flits of the pieces from each line along A
  std::vector<std::int64_t> per_a_, per_b_;  ///< destinations per coordinate along A, along B
  // add_direct's scratch: per node the index of the piece it sends (−1 between calls) and
  // whether it is a destination (0 between calls), and the pieces' flits and coordinates.
  struct DirectPiece {
    int a, b, row;  ///< row: cell(b, 0)
    std::int64_t flits;
  };
  std::vector<int> own_;
  std::vector<char> seen_;
  std::vector<DirectPiece> direct_;
  // add_many's work arrays, overwritten by each call.
  std::array<std::vector<std::int64_t>, 2> beyond_;  ///< destinations beyond each coordinate along A
};

}  // namespace nocflow::optimizer
