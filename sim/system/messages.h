// SPDX-License-Identifier: MIT
#pragma once
// Messages over the NoC: a PE-to-PE transfer of `bytes` is cut into flits of the link width,
// queued whole at the source NI, which cuts it into packets of at most ni.max_packet_flits as it
// injects them (noc/network/network.h: ni.channels messages at once). A message completes when
// the last of its packets has arrived. Completed messages wait, keyed by (source, destination, tag),
// until the destination's Recv takes them. At the end, every message sent must have been
// received exactly once, with the size the receiver expected.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "noc/network/network.h"
#include "sim/system/program.h"

namespace nocflow::sim {

class MessageLayer : public noc::DeliveryListener {
 public:
  /// `on_complete(dst)` is called (inside the network's cycle) when a message reaches `dst`.
  MessageLayer(noc::Network& net, std::function<void(int)> on_complete);

  /// Queue a message at its source NI as of `cycle`. False when the source queue is full
  /// (bounded ni.injection_queue_flits): nothing is queued, try again later.
  bool send(int src, int dst, std::int64_t bytes, std::int64_t tag, noc::Cycle cycle);
  /// If the message (src -> dst, tag) has fully arrived, consume it and return the first cycle
  /// its receiver could take it (the one after its last packet arrived). Throws CheckError when its
  /// size differs from `bytes`.
  std::optional<noc::Cycle> take(int src, int dst, std::int64_t tag, std::int64_t bytes);
  /// Throws CheckError unless every message sent was taken.
  void verify_all_taken() const;

  void delivered(const noc::Packet& packet, noc::Cycle now) override;

  std::int64_t messages() const { return static_cast<std::int64_t>(messages_.size()); }
  std::int64_t packets() const { return packets_; }
  std::int64_t flits() const { return flits_; }
  std::int64_t bytes() const { return bytes_; }

 private:
  struct Message {
    int src, dst;
    std::int64_t bytes, tag;
    int packets_left;
    bool taken;
    noc::Cycle arrived;  ///< first cycle its receiver can take it; 0 until its last packet arrives
  };

  noc::Network& net_;
  std::function<void(int)> on_complete_;
  std::vector<Message> messages_;
  std::unordered_map<MessageKey, std::size_t, MessageKeyHash> arrived_;  ///< complete, not yet taken
  std::int64_t packets_ = 0, flits_ = 0, bytes_ = 0;
};

}  // namespace nocflow::sim
