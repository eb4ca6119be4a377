// SPDX-License-Identifier: MIT
#pragma once
// Which nodes to wake at which cycle. Near wake-ups (within kSpan cycles) go into a ring of
// per-cycle buckets, O(1) each; far ones wait in a heap and move into the ring as time comes
// near. Contract: push(at, node) needs at > now of the last pop_due; pop_due(now) must be
// called for every cycle that next(now) reports (the network never skips past next()).
#include <cstdint>
#include <functional>
#include <queue>
#include <vector>

#include "noc/flit.h"

namespace nocflow::noc {

class WakeCalendar {
 public:
  static constexpr Cycle kSpan = 512;

  WakeCalendar() : ring_(kSpan) {}

  void push(Cycle at, int node, Cycle now) {
    if (at - now < kSpan) {
      ring_[at & (kSpan - 1)].push_back(node);
      ++near_;
    } else {
      far_.push({at, node});
    }
  }

  /// Call f(node) for every node due at `now`, in the order they were pushed.
  template <class F>
  void pop_due(Cycle now, F&& f) {
    while (!far_.empty() && far_.top().first - now < kSpan) {
      ring_[far_.top().first & (kSpan - 1)].push_back(far_.top().second);
      ++near_;
      far_.pop();
    }
    if (near_ == 0) return;
    std::vector<int>& due = ring_[now & (kSpan - 1)];
    if (due.empty()) return;
    due.swap(scratch_);
    near_ -= scratch_.size();
    for (int node : scratch_) f(node);
    scratch_.clear();
  }

  /// The first cycle >= now with a wake-up, or kNever.
  Cycle next(Cycle now) const {
    if (near_ > 0)
      for (Cycle c = now; c < now + kSpan; ++c)
        if (!ring_[c & (kSpan - 1)].empty()) return c;
    return far_.empty() ? kNever : far_.top().first;
  }

  bool empty() const { return near_ == 0 && far_.empty(); }

  void clear() {
    for (auto& b : ring_) b.clear();
    near_ = 0;
    far_ = {};
  }

 private:
  using Entry = std::pair<Cycle, int>;
  std::vector<std::vector<int>> ring_;
  std::vector<int> scratch_;
  std::size_t near_ = 0;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> far_;
};

}  // namespace nocflow::noc
