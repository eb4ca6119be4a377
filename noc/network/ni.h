// SPDX-License-Identifier: MIT
// The network interface's state, shared by network.cpp (delivery, reset, checks) and
// network_ni.cpp (queueing, injection, ejection). Private to noc/network.
#pragma once

#include <deque>
#include <vector>

#include "noc/network/network.h"

namespace nocflow::noc {

struct Network::Ni {
  int router = 0, port = 0;
  // Source side: messages oldest first; the first `channels` of them inject.
  struct Message {
    NewPacket desc;            ///< desc.flits: flits not yet in a started packet
    std::uint64_t serial = 0;  ///< arrival order, for the round-robin
    std::int64_t packet = -1;  ///< packet being injected
    int next_seq = 0, vc = 0;
  };
  std::deque<Message> queue;
  std::int64_t queued_flits = 0;
  std::uint64_t next_serial = 0, last_served = 0;
  int last_vc = -1;
  std::vector<OutputVc> inj;  ///< injection VCs at the router's local input port
  bool wake_listed = false;
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
