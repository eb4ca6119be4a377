// SPDX-License-Identifier: MIT
#pragma once
// Links as latency pipelines. Everything that crosses between routers and network interfaces
// (flits and credits) is sent into Channels for delivery at a later cycle (≥ 1 ahead), so
// within one cycle no component sees another's writes: the order in which routers are
// evaluated never changes a result (evaluate/commit by construction).
//
// Stored as a timing wheel of per-cycle buckets whose vectors keep their capacity: sending is
// a push_back, delivery walks one bucket; no allocation once warm, cost per flit, not per link.
#include <cstdint>
#include <vector>

#include "noc/flit.h"

namespace nocflow::noc {

struct FlitArrival {
  std::int32_t target;  ///< router (to_node == false) or node
  std::int16_t port;    ///< router input port
  bool to_node;
  Flit flit;
};

struct CreditArrival {
  std::int32_t target;  ///< router (credit for its output port) or node (its injection VC)
  std::int16_t port;
  std::uint8_t vc;
  bool to_node;
};

class Channels {
 public:
  struct Bucket {
    std::vector<FlitArrival> flits;
    std::vector<CreditArrival> credits;
  };

  explicit Channels(int max_delay) {
    std::size_t n = 2;
    while (n < static_cast<std::size_t>(max_delay) + 2) n *= 2;
    buckets_.resize(n);
    mask_ = n - 1;
  }

  void send_flit(Cycle at, const FlitArrival& a) {
    buckets_[at & mask_].flits.push_back(a);
    ++pending_;
  }
  void send_credit(Cycle at, const CreditArrival& c) {
    buckets_[at & mask_].credits.push_back(c);
    ++pending_;
  }

  /// Events due at `now`. The caller processes them and then calls done(now).
  Bucket& due(Cycle now) { return buckets_[now & mask_]; }
  void done(Cycle now) {
    Bucket& b = buckets_[now & mask_];
    pending_ -= b.flits.size() + b.credits.size();
    b.flits.clear();
    b.credits.clear();
  }

  std::size_t pending() const { return pending_; }
  /// The first cycle after `now` with a pending event, or kNever.
  Cycle next_event(Cycle now) const {
    if (pending_ == 0) return kNever;
    for (Cycle c = now + 1; c <= now + static_cast<Cycle>(mask_) + 1; ++c) {
      const Bucket& b = buckets_[c & mask_];
      if (!b.flits.empty() || !b.credits.empty()) return c;
    }
    return kNever;
  }
  void clear() {
    for (auto& b : buckets_) {
      b.flits.clear();
      b.credits.clear();
    }
    pending_ = 0;
  }

 private:
  std::vector<Bucket> buckets_;
  std::size_t mask_ = 1;
  std::size_t pending_ = 0;
};

}  // namespace nocflow::noc
