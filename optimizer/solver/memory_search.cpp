// SPDX-License-Identifier: MIT
#include "optimizer/solver/memory_search.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace nocflow::optimizer {

double StageMemory::bytes(const std::vector<int>& choice) const {
  double sum = 0, most = 0;
  for (std::size_t l = 0; l < choice.size(); ++l) {
    const auto c = static_cast<std::size_t>(choice[l]);
    sum += summed[l][c];
    most = std::max(most, peak[l][c]);
  }
  return sum + most;
}

namespace {

/// A layer's front longer than this is thinned to this many points, evenly, so that two-layer
/// moves stay quadratic in the layers only.
constexpr std::size_t kMaxFront = 32;

class Search {
 public:
  Search(const Problem& p, const StageMemory& m, std::vector<int>& x)
      : p_(p), m_(m), x_(x), scale_(std::max(1.0, std::fabs(evaluate(p, x)))) {
    adj_.resize(x.size());
    for (std::size_t k = 0; k < p.edges.size(); ++k) {
      const Problem::Edge& e = p.edges[k];
      if (!e.tabulated()) throw std::logic_error("improve_within_memory: an edge has no table");
      adj_[static_cast<std::size_t>(e.u)].push_back({k, true});
      adj_[static_cast<std::size_t>(e.v)].push_back({k, false});
    }
    for (std::size_t l = 0; l < x.size(); ++l) summed_ += m.summed[l][at(l)];
  }

  /// Best single-layer changes, applied one layer at a time; true if any improved.
  bool one_layer_moves() {
    bool improved = false;
    for (std::size_t l = 0; l < x_.size(); ++l) {
      int best = -1;
      double best_delta = -tolerance();
      for (int c = 0; c < p_.num_choices(static_cast<int>(l)); ++c) {
        if (c == x_[l] || !p_.fits(static_cast<int>(l), c)) continue;
        const double d = delta(l, c);
        if (d < best_delta && bytes_with(l, c, l, c) <= m_.limit) best = c, best_delta = d;
      }
      if (best >= 0) {
        apply(l, best);
        improved = true;
      }
    }
    return improved;
  }

  /// Single-layer changes, each the one that frees bytes at the least cost per byte, until the
  /// assignment fits; where none frees any (several layers share the peak), every layer at the
  /// peak takes its lightest choice below it. False if it cannot fit.
  bool repair() {
    // Once the peak is lowered below P, no choice of P or more comes back: the single changes
    // lower the bytes under a cap that only falls, so the two kinds of step cannot undo each
    // other (they did, on mobilenet_v2's 46-layer stages). Bytes are counted as the running sum
    // counts them, which a move's comparison uses, and a step must free more than rounding:
    // each step frees bytes or lowers the cap, and the bound is only a guard.
    double cap = std::numeric_limits<double>::infinity();  // choices must peak below it
    for (int steps = 0; steps < 1000000; ++steps) {
      const double now = running_bytes();
      if (now <= m_.limit) return true;
      std::size_t best_l = 0;
      int best_c = -1;
      double best_rate = std::numeric_limits<double>::infinity();
      for (std::size_t l = 0; l < x_.size(); ++l)
        for (int c = 0; c < p_.num_choices(static_cast<int>(l)); ++c) {
          if (c == x_[l] || !p_.fits(static_cast<int>(l), c) ||
              m_.peak[l][static_cast<std::size_t>(c)] >= cap)
            continue;
          const double bytes = bytes_with(l, c, l, c);
          if (bytes >= now * (1 - 1e-12)) continue;
          const double rate = delta(l, c) / (now - bytes);
          if (rate < best_rate) best_l = l, best_c = c, best_rate = rate;
        }
      if (best_c >= 0) {
        apply(best_l, best_c);
        continue;
      }
      double peak = 0;
      for (std::size_t l = 0; l < x_.size(); ++l) peak = std::max(peak, m_.peak[l][at(l)]);
      cap = peak;
      for (std::size_t l = 0; l < x_.size(); ++l) {
        if (m_.peak[l][at(l)] < peak) continue;
        int lightest = -1;
        for (int c = 0; c < p_.num_choices(static_cast<int>(l)); ++c) {
          const auto cc = static_cast<std::size_t>(c);
          if (!p_.fits(static_cast<int>(l), c) || m_.peak[l][cc] >= peak ||
              !std::isfinite(p_.node[l][cc]))
            continue;
          if (lightest < 0 || m_.summed[l][cc] < m_.summed[l][static_cast<std::size_t>(lightest)])
            lightest = c;
        }
        if (lightest < 0) return false;  // this layer cannot go below the peak
        apply(l, lightest);
      }
    }
    return false;
  }

  /// The best change of two layers at once, applied; true if one improved.
  bool two_layer_move() {
    std::vector<std::vector<Point>> front(x_.size());
    for (std::size_t l = 0; l < x_.size(); ++l) front[l] = front_of(l);
    top_peaks();
    double best = -tolerance();
    std::size_t ba = 0, bb = 0;
    int ca = -1, cb = -1;
    for (std::size_t a = 0; a < x_.size(); ++a)
      for (std::size_t b = a + 1; b < x_.size(); ++b) {
        const bool adjacent = std::any_of(adj_[a].begin(), adj_[a].end(), [&](const Use& u) {
          return other_end(u) == b;
        });
        for (const Point& pa : front[a])
          for (const Point& pb : front[b]) {
            double d = pa.delta + pb.delta;
            if (adjacent) d += correction(a, pa.choice, b, pb.choice);
            if (d >= best) continue;
            // The bytes exactly: the summed ones with the largest peak of the others (top_peaks).
            const double peak = std::max({m_.peak[a][static_cast<std::size_t>(pa.choice)],
                                          m_.peak[b][static_cast<std::size_t>(pb.choice)],
                                          peak_without(a, b)});
            if (summed_ + pa.bytes + pb.bytes + peak > m_.limit) continue;
            best = d, ba = a, bb = b, ca = pa.choice, cb = pb.choice;
          }
      }
    if (ca < 0) return false;
    apply(ba, ca);
    apply(bb, cb);
    return true;
  }

 private:
  struct Use {
    std::size_t edge;
    bool as_u;  ///< the layer is the edge's producer (its choice indexes rows)
  };
  struct Point {
    int choice;
    double delta, bytes;  ///< cost change and summed-bytes change
  };

  std::size_t at(std::size_t l) const { return static_cast<std::size_t>(x_[l]); }
  std::size_t other_end(const Use& u) const {
    const Problem::Edge& e = p_.edges[u.edge];
    return static_cast<std::size_t>(u.as_u ? e.v : e.u);
  }
  /// A move must gain more than this: rounding never counts as a gain, so the search ends.
  double tolerance() const { return 1e-9 * scale_; }

  /// Cost change when layer l takes choice c, the others as they are.
  double delta(std::size_t l, int c) const {
    const int old = x_[l];
    double d = p_.node[l][static_cast<std::size_t>(c)] - p_.node[l][at(l)];
    for (const Use& u : adj_[l]) {
      const Problem::Edge& e = p_.edges[u.edge];
      if (u.as_u) {
        const int j = x_[static_cast<std::size_t>(e.v)];
        d += e.at(c, j) - e.at(old, j);
      } else {
        const int i = x_[static_cast<std::size_t>(e.u)];
        d += e.at(i, c) - e.at(i, old);
      }
    }
    return d;
  }

  /// What delta(a, ca) + delta(b, cb) miscounts on the edges between a and b.
  double correction(std::size_t a, int ca, std::size_t b, int cb) const {
    double d = 0;
    for (const Use& u : adj_[a]) {
      if (other_end(u) != b) continue;
      const Problem::Edge& e = p_.edges[u.edge];
      const int xa = x_[a], xb = x_[b];
      if (u.as_u) d += e.at(ca, cb) - e.at(ca, xb) - e.at(xa, cb) + e.at(xa, xb);
      else d += e.at(cb, ca) - e.at(xb, ca) - e.at(cb, xa) + e.at(xb, xa);
    }
    return d;
  }

  /// The bytes of the current choices, as the running sum counts them.
  double running_bytes() const {
    double most = 0;
    for (std::size_t l = 0; l < x_.size(); ++l) most = std::max(most, m_.peak[l][at(l)]);
    return summed_ + most;
  }

  /// Bytes with layer a at ca and layer b at cb (a == b: one change).
  double bytes_with(std::size_t a, int ca, std::size_t b, int cb) const {
    // As apply() adds: the bytes after a move are exactly what was compared before it.
    double sum = summed_ + (m_.summed[a][static_cast<std::size_t>(ca)] - m_.summed[a][at(a)]);
    if (b != a) sum += m_.summed[b][static_cast<std::size_t>(cb)] - m_.summed[b][at(b)];
    double most = 0;
    for (std::size_t l = 0; l < x_.size(); ++l) {
      const int c = l == a ? ca : l == b ? cb : x_[l];
      most = std::max(most, m_.peak[l][static_cast<std::size_t>(c)]);
    }
    return sum + most;
  }

  /// Layer l's improving-or-freeing choices: the front of (cost change, summed-bytes change),
  /// both lower being better.
  std::vector<Point> front_of(std::size_t l) const {
    std::vector<Point> all;
    for (int c = 0; c < p_.num_choices(static_cast<int>(l)); ++c) {
      if (c == x_[l] || !p_.fits(static_cast<int>(l), c)) continue;
      const double d = delta(l, c);
      if (!std::isfinite(d)) continue;
      all.push_back({c, d, m_.summed[l][static_cast<std::size_t>(c)] - m_.summed[l][at(l)]});
    }
    std::sort(all.begin(), all.end(), [](const Point& a, const Point& b) {
      return a.bytes != b.bytes ? a.bytes < b.bytes : a.delta < b.delta;
    });
    std::vector<Point> front;
    for (const Point& pt : all)
      if (front.empty() || pt.delta < front.back().delta) front.push_back(pt);
    if (front.size() <= kMaxFront) return front;
    std::vector<Point> thin;
    for (std::size_t i = 0; i < kMaxFront; ++i)
      thin.push_back(front[i * (front.size() - 1) / (kMaxFront - 1)]);
    return thin;
  }

  /// The three largest peaks of the current choices, for peak_without.
  void top_peaks() {
    top_.clear();
    for (std::size_t l = 0; l < x_.size(); ++l) top_.push_back({m_.peak[l][at(l)], l});
    const std::size_t keep = std::min<std::size_t>(3, top_.size());
    std::partial_sort(top_.begin(), top_.begin() + static_cast<std::ptrdiff_t>(keep), top_.end(),
                      [](const auto& a, const auto& b) { return a.first > b.first; });
    top_.resize(keep);
  }
  /// The largest peak of the layers other than a and b.
  double peak_without(std::size_t a, std::size_t b) const {
    for (const auto& [bytes, l] : top_)
      if (l != a && l != b) return bytes;
    return 0;
  }

  void apply(std::size_t l, int c) {
    summed_ += m_.summed[l][static_cast<std::size_t>(c)] - m_.summed[l][at(l)];
    x_[l] = c;
  }

  const Problem& p_;
  const StageMemory& m_;
  std::vector<int>& x_;
  double scale_;  ///< the starting cost's magnitude
  std::vector<std::vector<Use>> adj_;
  double summed_ = 0;
  std::vector<std::pair<double, std::size_t>> top_;
};

}  // namespace

double fit_within_memory(const Problem& p, const StageMemory& m, std::vector<int>& choice) {
  // The running sum the moves compare may round differently from a fresh one: the fresh one
  // decides.
  if (!Search(p, m, choice).repair() || m.bytes(choice) > m.limit)
    return std::numeric_limits<double>::infinity();
  return improve_within_memory(p, m, choice);
}

double improve_within_memory(const Problem& p, const StageMemory& m, std::vector<int>& choice) {
  const std::vector<int> start = choice;
  {
    Search search(p, m, choice);
    // Each move lowers the cost by more than the tolerance, so this ends; the bound is a guard.
    for (int round = 0; round < 10000; ++round) {
      while (search.one_layer_moves()) {
      }
      if (!search.two_layer_move()) break;
    }
  }
  if (m.bytes(choice) > m.limit) choice = start;  // rounding of the running sum: never so far
  return evaluate(p, choice);
}

}  // namespace nocflow::optimizer
