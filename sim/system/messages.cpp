// SPDX-License-Identifier: MIT
#include "sim/system/messages.h"

#include <algorithm>
#include <limits>

#include "noc/base/error.h"

namespace nocflow::sim {

MessageLayer::MessageLayer(noc::Network& net, std::function<void(int)> on_complete)
    : net_(net), on_complete_(std::move(on_complete)) {
  net_.set_listener(this);
}

bool MessageLayer::send(int src, int dst, std::int64_t bytes, std::int64_t tag, noc::Cycle cycle) {
  const noc::MessageCut cut = noc::cut_message(net_.spec(), bytes);
  const std::size_t id = messages_.size();
  if (!net_.send(src,
                 {dst, cut.flits, cycle, static_cast<std::int64_t>(id), false, cut.packet_flits}))
    return false;
  messages_.push_back({src, dst, bytes, tag, cut.packets, false, 0});
  packets_ += cut.packets;
  flits_ += cut.flits;
  bytes_ += bytes;
  return true;
}

void MessageLayer::delivered(const noc::Packet& packet, noc::Cycle now) {
  Message& m = messages_[static_cast<std::size_t>(packet.tag)];
  if (packet.dest != m.dst) throw CheckError("a packet of a message to PE " + std::to_string(m.dst) +
                                             " arrived at PE " + std::to_string(packet.dest));
  if (--m.packets_left > 0) return;
  m.arrived = now + 1;  // the NoC runs half a cycle after the PEs: they see it next cycle
  if (!arrived_.emplace(MessageKey{m.src, m.dst, m.tag}, static_cast<std::size_t>(packet.tag)).second)
    throw CheckError("two messages from PE " + std::to_string(m.src) + " to PE " +
                     std::to_string(m.dst) + " carry tag " + std::to_string(m.tag));
  on_complete_(m.dst);
}

std::optional<noc::Cycle> MessageLayer::take(int src, int dst, std::int64_t tag,
                                             std::int64_t bytes) {
  auto it = arrived_.find(MessageKey{src, dst, tag});
  if (it == arrived_.end()) return std::nullopt;
  Message& m = messages_[it->second];
  if (m.bytes != bytes)
    throw CheckError("PE " + std::to_string(dst) + " expected " + std::to_string(bytes) +
                     " bytes from PE " + std::to_string(src) + " (tag " + std::to_string(tag) +
                     ") but " + std::to_string(m.bytes) + " arrived");
  m.taken = true;
  arrived_.erase(it);
  return m.arrived;
}

void MessageLayer::verify_all_taken() const {
  for (const Message& m : messages_) {
    if (m.arrived == 0)
      throw CheckError("message PE " + std::to_string(m.src) + " -> PE " + std::to_string(m.dst) +
                       " (tag " + std::to_string(m.tag) + ", " + std::to_string(m.bytes) +
                       " bytes) never arrived");
    if (!m.taken)
      throw CheckError("message PE " + std::to_string(m.src) + " -> PE " + std::to_string(m.dst) +
                       " (tag " + std::to_string(m.tag) + ") arrived but no step received it");
  }
}

}  // namespace nocflow::sim
