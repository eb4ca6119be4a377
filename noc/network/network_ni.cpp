// SPDX-License-Identifier: MIT
// The network interfaces: cutting messages into packets, queueing them, injecting one flit
// per cycle round-robin over the oldest `ni.channels` messages to distinct destinations, and
// ejecting into reassembly.
#include <algorithm>
#include <array>
#include <limits>

#include "noc/base/error.h"
#include "noc/network/ni.h"

namespace nocflow::noc {

MessageCut cut_message(const NocSpec& spec, std::int64_t bytes) {
  const std::int64_t width = spec.link.width_bytes;
  // bytes / width rounded up without bytes + width - 1, which overflows near INT64_MAX.
  const std::int64_t flits = std::max<std::int64_t>(1, bytes / width + (bytes % width != 0));
  if (flits > std::numeric_limits<int>::max())
    throw InputError("message of " + std::to_string(bytes) +
                     " bytes: more flits than the NI can count");
  MessageCut c;
  c.flits = static_cast<int>(flits);
  c.packet_flits = std::max(1, spec.ni.max_packet_flits);
  c.packets = (c.flits + c.packet_flits - 1) / c.packet_flits;
  return c;
}

bool Network::send(int src, const NewPacket& p) {
  Ni& ni = nis_[src];
  // A bounded queue takes a message that fits beside what it holds; a longer one only when it is
  // empty (its DMA then streams it whole), so that no message waits forever.
  const int bound = spec_.ni.injection_queue_flits;
  if (bound > 0 && ni.queued_flits > 0 && ni.queued_flits + p.flits > bound) return false;
  const int packet_flits = p.packet_flits > 0 ? std::min(p.packet_flits, p.flits) : p.flits;
  if (p.dest < 0 || p.dest >= num_nodes() || p.flits < 1 || packet_flits > 65535)
    throw InputError("send: bad message (dest " + std::to_string(p.dest) + ", " +
                     std::to_string(p.flits) + " flits in packets of " +
                     std::to_string(packet_flits) + ")");
  Ni::Message m;
  m.desc = p;
  m.desc.packet_flits = packet_flits;
  m.serial = ni.next_serial++;
  ni.queue.push_back(m);
  // A full window keeps its older messages; one that is not full may take this one.
  if (ni.window.size() < static_cast<std::size_t>(std::max(1, spec_.ni.channels)))
    ni.window_stale = true;
  ni.blocked = ni.inject_blocked = false;
  if (spec_.ni.channels > 1) ni.count_queued(p.dest, +1);
  ni.queued_flits += p.flits;
  outstanding_flits_ += p.flits;
  outstanding_created_sum_ += static_cast<double>(p.flits) * static_cast<double>(p.created);
  activate_ni(src);
  return true;
}

void Network::eject_flit(Ni& ni, int node, const Flit& f) {
  Packet& pk = packets_[f.packet];
  auto where = [&] {
    return " (packet " + std::to_string(f.packet) + " from node " + std::to_string(pk.src) +
           " to node " + std::to_string(pk.dest) + ", arrived at node " + std::to_string(node) +
           " through router " + topo_.router_name(ni.router) + " port " +
           topo_.port_name(ni.router, ni.port) + " VC " + std::to_string(f.vc) + ")";
  };
  if (pk.dest != node || f.dest != node) throw CheckError("flit misrouted" + where());
  if (f.seq != pk.flits_ejected)
    throw CheckError("flit " + std::to_string(f.seq) + " arrived when flit " +
                     std::to_string(pk.flits_ejected) +
                     " was expected (lost, duplicated or "
                     "out of order)" +
                     where());
  ++pk.flits_ejected;
  ++flits_ejected_;
  ++ni.ejected;
  --outstanding_flits_;
  outstanding_created_sum_ -= static_cast<double>(pk.created);
  last_progress_ = now_;
  if (listener_) listener_->flit_arrived(pk, f, now_);
  if (f.tail()) {
    if (pk.flits_ejected != pk.length)
      throw CheckError("tail arrived after " + std::to_string(pk.flits_ejected) + " of " +
                       std::to_string(pk.length) + " flits" + where());
    ++packets_delivered_;
    if (listener_) listener_->delivered(pk, now_);
    packets_.release(f.packet);
  }
}

void Network::step_ni(int node) {
  Ni& ni = nis_[node];
  const int vcs = spec_.router.vcs, depth = spec_.router.buffer_depth;
  // Inject at most one flit: from the next channel after the last served that can send, a
  // packet in progress with a credit or a message starting a packet on a free VC (looked for
  // only when a message needs one).
  int free_vc = -2;  // -2: not looked for yet, -1: none
  auto find_free_vc = [&] {
    free_vc = -1;
    for (int k = 0, v = ni.last_vc; k < vcs; ++k) {
      if (++v == vcs) v = 0;
      if (!ni.inj[v].in_use && ni.inj[v].credits > 0) return free_vc = v;
    }
    return free_vc;
  };
  // The window: the oldest message to each destination, the first `channels` of them (a later
  // message to a destination waits for the earlier: it would share its route and only delay
  // it). The scan ends once it has seen every destination queued. The window is kept from cycle
  // to cycle and found again only after the queue changed (send, or a message done below).
  if (ni.window_stale) {
    const std::size_t channels =
        spec_.ni.channels > 1
            ? std::min(ni.queued_to.size(), static_cast<std::size_t>(spec_.ni.channels))
            : std::min<std::size_t>(ni.queue.size(), 1);
    std::array<int, kMaxNiChannels> window_dest;
    ni.window.clear();
    for (std::size_t i = 0; ni.window.size() < channels; ++i) {
      Ni::Message& m = ni.queue[i];
      const auto end = window_dest.begin() + static_cast<std::ptrdiff_t>(ni.window.size());
      if (std::find(window_dest.begin(), end, m.desc.dest) != end) continue;
      window_dest[ni.window.size()] = m.desc.dest;
      ni.window.push_back({&m, i});
    }
    // The round-robin goes on after the last served (none at first: last_served starts above
    // every serial); the window's serials rise, as the queue's.
    ni.window_next = 0;
    while (ni.window_next < ni.window.size() &&
           ni.window[ni.window_next].message->serial <= ni.last_served)
      ++ni.window_next;
    ni.window_stale = false;
  }
  // Round-robin: the window's messages after the last served in turn, then from the oldest; the
  // first that can send sends. A blocked injection stays so until a credit or a message comes.
  const std::size_t channels = ni.inject_blocked ? 0 : ni.window.size();
  std::size_t next = ni.window_next;
  const Ni::Slot* pick = nullptr;
  bool timed = false;  // a window message looked at waits for its creation cycle
  for (std::size_t k = 0; k < channels && !pick; ++k, ++next) {
    if (next == channels) next = 0;
    const Ni::Message& m = *ni.window[next].message;
    if (m.packet < 0 && m.desc.created > now_) timed = true;
    const bool can =
        m.packet >= 0 ? ni.inj[m.vc].credits > 0
                      : m.desc.created <= now_ && (free_vc == -2 ? find_free_vc() : free_vc) >= 0;
    if (can) pick = &ni.window[next];
  }
  ni.inject_blocked = !pick && !timed;
  if (pick) {
    Ni::Message& m = *pick->message;
    if (m.packet < 0) {
      Packet pk;
      pk.src = node;
      pk.dest = m.desc.dest;
      pk.length = std::min(m.desc.flits, m.desc.packet_flits);
      pk.created = m.desc.created;
      pk.tag = m.desc.tag;
      pk.measured = m.desc.measured;
      pk.head_injected = now_;
      m.desc.flits -= pk.length;
      m.packet = packets_.add(pk);
      m.next_seq = 0;
      m.vc = ni.last_vc = free_vc;
      ni.inj[free_vc].in_use = true;
    }
    const Packet& pk = packets_[static_cast<std::uint32_t>(m.packet)];
    Flit f;
    f.packet = static_cast<std::uint32_t>(m.packet);
    f.seq = static_cast<std::uint16_t>(m.next_seq);
    f.dest = static_cast<std::uint16_t>(pk.dest);
    f.vc = static_cast<std::uint8_t>(m.vc);
    f.flags = (m.next_seq == 0 ? Flit::kHead : 0) | (m.next_seq + 1 == pk.length ? Flit::kTail : 0);
    f.inject_cycle = now_;
    --ni.inj[m.vc].credits;
    channels_.send_flit(now_ + 1 + spec_.link.latency,
                        {ni.router, static_cast<std::int16_t>(ni.port), false, f});
    ++ni.injected;
    ni.injection_span.add(now_);
    ++flits_injected_;
    --ni.queued_flits;
    last_progress_ = now_;
    ni.last_served = m.serial;
    ni.window_next = static_cast<std::size_t>(pick - ni.window.data()) + 1;  // while it stays
    if (f.tail()) {
      ni.inj[m.vc].in_use = false;
      m.packet = -1;
      if (m.desc.flits == 0) {
        if (spec_.ni.channels > 1) ni.count_queued(m.desc.dest, -1);
        if (pick->at == 0)
          ni.queue.pop_front();  // the common case; deque::erase is a general, costlier call
        else
          ni.queue.erase(ni.queue.begin() + static_cast<std::ptrdiff_t>(pick->at));
        ni.window_stale = true;
      }
      if (ni.queue.empty() && source_ && !ni.wake_listed && !sources_stopped_) {
        wakes_.push(now_ + 1, node, now_);
        ni.wake_listed = true;
      }
    } else {
      ++m.next_seq;
    }
  }
  // Take at most one flit from the network into reassembly.
  const int capacity = spec_.ni.ejection_queue_flits;
  const bool counted = capacity > 0 || ni.sink_interval > 0;
  if (ni.held_total > 0 && (capacity == 0 || ni.reassembly < capacity)) {
    for (int k = 0, v = ni.next_vc; k < vcs; ++k, v = v + 1 == vcs ? 0 : v + 1) {
      if (ni.held_count[v] == 0) continue;
      const Flit f = ni.held[static_cast<std::size_t>(v) * depth + ni.held_head[v]];
      if (++ni.held_head[v] == depth) ni.held_head[v] = 0;
      --ni.held_count[v];
      --ni.held_total;
      ni.next_vc = v + 1 == vcs ? 0 : v + 1;
      channels_.send_credit(
          now_ + 1 + spec_.link.latency,
          {ni.router, static_cast<std::int16_t>(ni.port), static_cast<std::uint8_t>(v), false});
      if (counted) ++ni.reassembly;
      eject_flit(ni, node, f);
      break;
    }
  }
  if (ni.sink_interval > 0 && ni.reassembly > 0 && now_ >= ni.next_drain) {
    --ni.reassembly;
    ni.next_drain = now_ + ni.sink_interval;
  } else if (ni.sink_interval == 0 && capacity > 0) {
    ni.reassembly = 0;  // an instant consumer
  }
  ni.blocked =
      ni.inject_blocked && ni.held_total == 0 && !(ni.sink_interval > 0 && ni.reassembly > 0);
}

}  // namespace nocflow::noc
