// SPDX-License-Identifier: MIT
// The network interface's state, shared by network.cpp (delivery, reset, checks) and
// network_ni.cpp (queueing, injection, ejection). Private to noc/network.
#pragma once

#include <algorithm>
#include <deque>
#include <utility>
#include <vector>

#include "noc/network/network.h"

namespace nocflow::noc {

struct Network::Ni {
  int router = 0, port = 0;
  // Source side: messages oldest first. The oldest message to each destination is its pair's
  // head; the first `channels` heads inject (a pair's messages leave in order).
  struct Message {
    NewPacket desc;            ///< desc.flits: flits not yet in a started packet
    std::uint64_t serial = 0;  ///< arrival order, for the round-robin (0 first)
    std::int64_t packet = -1;  ///< packet being injected
    int next_seq = 0, vc = 0;
  };
  std::deque<Message> queue;
  /// The window (see step_ni): its messages, in queue order, each with its position in `queue`.
  /// Kept between cycles (deque::push_back moves no message); a message leaving the queue, or
  /// joining a window that is not full, sets `window_stale`, and step_ni finds it again. The
  /// pointer spares the per-cycle scan deque indexing (positions alone: validate's 8x8
  /// ALL_TO_ALL and SCATTER cases, 2.8 % more instructions).
  struct Slot {
    Message* message;
    std::size_t at;
  };
  std::vector<Slot> window;
  bool window_stale = false;
  /// The round-robin's place: the window's first message after the last served (its size:
  /// none, start from the oldest). The window's serials rise, as it is in queue order.
  std::size_t window_next = 0;
  /// With several channels: (destination, messages queued to it), one entry per destination.
  std::vector<std::pair<int, int>> queued_to;
  /// One more (+1) or one fewer (-1) message queued to `dest`.
  void count_queued(int dest, int change) {
    auto to = std::find_if(queued_to.begin(), queued_to.end(),
                           [&](const auto& e) { return e.first == dest; });
    if (to == queued_to.end()) {
      queued_to.emplace_back(dest, change);
    } else if ((to->second += change) == 0) {
      *to = queued_to.back();
      queued_to.pop_back();
    }
  }
  std::int64_t queued_flits = 0;
  /// last_served starts one before serial 0, so that the oldest message sends first.
  std::uint64_t next_serial = 0, last_served = ~std::uint64_t{0};
  int last_vc = -1;
  std::vector<OutputVc> inj;  ///< injection VCs at the router's local input port
  bool wake_listed = false;
  /// The last step_ni injected nothing (every window message blocked on credits or VCs, none
  /// waiting for its creation cycle): a credit or a message wakes its injection.
  bool inject_blocked = false;
  /// As inject_blocked, and the NI has nothing to eject: a flit arriving wakes it too.
  bool blocked = false;
  // Sink side.
  std::vector<Flit> held;  ///< vcs * depth ring buffers
  std::vector<std::uint16_t> held_head, held_count;
  int held_total = 0, next_vc = 0;
  int reassembly = 0, sink_interval = 0;
  Cycle next_drain = 0;
  std::int64_t injected = 0, ejected = 0;
  ActiveSpan injection_span;

  bool busy() const {
    return !queue.empty() || held_total > 0 || (sink_interval > 0 && reassembly > 0);
  }
};

}  // namespace nocflow::noc
