// SPDX-License-Identifier: MIT
#include "noc/network/network.h"

#include <algorithm>
#include <deque>
#include <limits>
#include <sstream>

#include "noc/base/error.h"

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

Network::Network(const NocSpec& spec, std::unique_ptr<RoutingFunction> routing)
    : spec_(spec),
      topo_(Topology::build(spec.topology)),
      routing_(routing ? std::move(routing) : make_routing(spec.router.routing)),
      channels_(spec.router.sw_alloc_delay + spec.router.st_delay + spec.link.latency + 2) {
  if (spec_.watchdog_cycles <= 0) spec_.watchdog_cycles = 10000;
  if (topo_.num_nodes() > 65535) throw InputError("topology: at most 65535 nodes");
  if (spec_.router.vcs > 255) throw InputError("router.vcs: at most 255");
  if (!topo_.is_mesh() && spec_.router.routing == "west_first")
    throw InputError("router.routing: west_first needs a mesh");
  for (int r = 0; r < topo_.num_routers(); ++r)
    routers_.push_back(std::make_unique<Router>(r, topo_, *routing_, spec_.router, spec_.link));
  nis_.resize(topo_.num_nodes());
  reset();
}

Network::~Network() = default;

std::int64_t Network::ejected_at(int node) const { return nis_[node].ejected; }
std::int64_t Network::injected_at(int node) const { return nis_[node].injected; }
const ActiveSpan& Network::injection_span(int node) const {
  return nis_[node].injection_span;
}

void Network::reset() {
  for (auto& r : routers_) r->reset();
  const int vcs = spec_.router.vcs, depth = spec_.router.buffer_depth;
  for (int n = 0; n < num_nodes(); ++n) {
    Ni& ni = nis_[n];
    const int interval = ni.sink_interval;
    ni = Ni{};
    ni.sink_interval = interval;
    ni.router = topo_.node_router(n);
    ni.port = topo_.node_port(n);
    ni.inj.assign(vcs, OutputVc{false, depth});
    ni.held.assign(static_cast<std::size_t>(vcs) * depth, Flit{});
    ni.held_head.assign(vcs, 0);
    ni.held_count.assign(vcs, 0);
  }
  channels_.clear();
  packets_.clear();
  wakes_.clear();
  active_routers_.clear();
  active_nis_.clear();
  router_listed_.assign(routers_.size(), 0);
  ni_listed_.assign(nis_.size(), 0);
  sources_stopped_ = false;
  now_ = last_progress_ = 0;
  flits_injected_ = flits_ejected_ = packets_delivered_ = outstanding_flits_ = router_steps_ = 0;
  outstanding_created_sum_ = 0;
  if (source_)
    for (int n = 0; n < num_nodes(); ++n) {
      wakes_.push(0, n, 0);
      nis_[n].wake_listed = true;
    }
}

void Network::reset_arbitration() {
  for (auto& r : routers_) {
    if (r->buffered() > 0)
      throw CheckError("reset_arbitration: router " + std::to_string(r->id()) + " holds flits");
    r->reset_arbitration();
  }
  for (std::size_t n = 0; n < nis_.size(); ++n) {
    Ni& ni = nis_[n];
    if (!ni.queue.empty() || ni.held_total > 0)
      throw CheckError("reset_arbitration: the NI of node " + std::to_string(n) + " holds flits");
    ni.next_serial = ni.last_served = 0;
    ni.last_vc = -1;
    ni.next_vc = 0;
  }
}

void Network::set_source(PacketSource* source) {
  source_ = source;
  reset();
}

void Network::set_sink_interval(int node, int cycles) { nis_[node].sink_interval = cycles; }

MessageCut cut_message(const NocSpec& spec, std::int64_t bytes) {
  const std::int64_t width = spec.link.width_bytes;
  const std::int64_t flits = std::max<std::int64_t>(1, (bytes + width - 1) / width);
  const int bound = spec.ni.injection_queue_flits;
  if (bound > 0 && flits > bound)
    throw InputError("message of " + std::to_string(flits) + " flits can never fit the " +
                     std::to_string(bound) + "-flit source queue (ni.injection_queue_flits)");
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
  const int bound = spec_.ni.injection_queue_flits;
  if (bound > 0 && ni.queued_flits + p.flits > bound) return false;
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
  ni.queued_flits += p.flits;
  outstanding_flits_ += p.flits;
  outstanding_created_sum_ += static_cast<double>(p.flits) * static_cast<double>(p.created);
  activate_ni(src);
  return true;
}

void Network::activate_ni(int node) {
  if (!ni_listed_[node]) {
    ni_listed_[node] = 1;
    active_nis_.push_back(node);
  }
}

void Network::activate_router(int r) {
  if (!router_listed_[r]) {
    router_listed_[r] = 1;
    active_routers_.push_back(r);
  }
}

void Network::deliver() {
  Channels::Bucket& due = channels_.due(now_);
  const int depth = spec_.router.buffer_depth;
  for (const FlitArrival& a : due.flits) {
    if (a.to_node) {
      Ni& ni = nis_[a.target];
      const int vc = a.flit.vc;
      if (ni.held_count[vc] >= depth)
        throw CheckError("node " + std::to_string(a.target) + " ejection VC " +
                         std::to_string(vc) + ": flit arrived without a credit");
      int slot = ni.held_head[vc] + ni.held_count[vc];
      if (slot >= depth) slot -= depth;
      ni.held[static_cast<std::size_t>(vc) * depth + slot] = a.flit;
      ++ni.held_count[vc];
      ++ni.held_total;
      activate_ni(a.target);
    } else {
      routers_[a.target]->receive_flit(a.port, a.flit, now_);
      activate_router(a.target);
    }
  }
  for (const CreditArrival& c : due.credits) {
    if (c.to_node) {
      OutputVc& v = nis_[c.target].inj[c.vc];
      if (++v.credits > depth)
        throw CheckError("node " + std::to_string(c.target) + " injection VC " +
                         std::to_string(c.vc) + ": more credits than buffer slots");
    } else {
      Router& router = *routers_[c.target];
      router.receive_credit(c.port, c.vc);
      if (router.buffered() > 0) activate_router(c.target);  // wakes a router asleep on credits
    }
  }
  channels_.done(now_);
}

void Network::pull_sources() {
  wakes_.pop_due(now_, [&](int node) {
    Ni& ni = nis_[node];
    ni.wake_listed = false;
    if (sources_stopped_ || !source_ || !ni.queue.empty()) return;
    NewPacket p;
    Cycle wake = kNever;
    if (source_->pull(node, now_, p, wake)) {
      send(node, p);
    } else if (wake != kNever) {
      wakes_.push(std::max(wake, now_ + 1), node, now_);
      ni.wake_listed = true;
    }
  });
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
                     std::to_string(pk.flits_ejected) + " was expected (lost, duplicated or "
                     "out of order)" + where());
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
  const std::size_t channels = std::min<std::size_t>(ni.queue.size(), std::max(1, spec_.ni.channels));
  std::size_t pick = channels;
  std::uint64_t pick_key = 0;
  auto it = ni.queue.begin();
  for (std::size_t i = 0; i < channels; ++i, ++it) {
    const Ni::Message& m = *it;
    // Round-robin: serials after the last served come first, in order, then the rest.
    const std::uint64_t key = m.serial - ni.last_served - 1;  // wraps for serial <= last_served
    if (pick < channels && key > pick_key) continue;
    const bool can = m.packet >= 0 ? ni.inj[m.vc].credits > 0
                                   : m.desc.created <= now_ && (free_vc == -2 ? find_free_vc() : free_vc) >= 0;
    if (can) {
      pick = i;
      pick_key = key;
    }
  }
  if (pick < channels) {
    Ni::Message& m = ni.queue[pick];
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
    if (f.tail()) {
      ni.inj[m.vc].in_use = false;
      m.packet = -1;
      if (m.desc.flits == 0) ni.queue.erase(ni.queue.begin() + static_cast<std::ptrdiff_t>(pick));
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
      channels_.send_credit(now_ + 1 + spec_.link.latency,
                            {ni.router, static_cast<std::int16_t>(ni.port),
                             static_cast<std::uint8_t>(v), false});
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
}

void Network::watchdog() {
  const std::int64_t in_network = flits_injected_ - flits_ejected_;
  if (in_network > 0 && now_ - last_progress_ > spec_.watchdog_cycles) {
    throw CheckError("watchdog: no flit moved for " + std::to_string(now_ - last_progress_) +
                     " cycles (now cycle " + std::to_string(now_) + ") with " +
                     std::to_string(in_network) + " flits in the network; stuck:\n" +
                     stuck_report());
  }
}

void Network::step() {
  deliver();
  if (!wakes_.empty()) pull_sources();  // before injection: BookSim creates, then injects

  std::size_t keep = 0;
  for (std::size_t i = 0; i < active_nis_.size(); ++i) {
    const int n = active_nis_[i];
    step_ni(n);
    if (nis_[n].busy())
      active_nis_[keep++] = n;
    else
      ni_listed_[n] = 0;
  }
  active_nis_.resize(keep);

  keep = 0;
  for (std::size_t i = 0; i < active_routers_.size(); ++i) {
    const int r = active_routers_[i];
    Router& router = *routers_[r];
    router.step(now_, channels_, packets_);
    ++router_steps_;
    if (router.last_departure() == now_) last_progress_ = now_;
    if (router.buffered() > 0 && !router.can_sleep(now_))
      active_routers_[keep++] = r;
    else
      router_listed_[r] = 0;  // idle, or asleep until a flit or credit arrives
  }
  active_routers_.resize(keep);

  watchdog();
  ++now_;
}

Cycle Network::next_busy_cycle() const {
  if (!active_routers_.empty() || !active_nis_.empty()) return now_;
  Cycle next = channels_.next_event(now_ - 1);
  if (!sources_stopped_) next = std::min(next, wakes_.next(now_));
  // Flits in the network, every router holding them asleep, nothing on its way: nothing can
  // ever move again. Go straight to the cycle where the watchdog reports it.
  if (next == kNever && flits_injected_ > flits_ejected_)
    next = last_progress_ + spec_.watchdog_cycles + 1;
  return std::max(next, now_);
}

void Network::skip_to(Cycle cycle) {
  if (cycle > now_) now_ = cycle;
}

void Network::run_until(Cycle cycle) {
  while (now_ < cycle) {
    const Cycle next = next_busy_cycle();
    if (next == kNever && cycle == kNever) return;  // idle for good
    if (next >= cycle) {
      now_ = cycle;
      return;
    }
    skip_to(next);
    step();
  }
}

bool Network::empty() const {
  return active_routers_.empty() && active_nis_.empty() && channels_.pending() == 0 &&
         outstanding_flits_ == 0;
}

void Network::drain() {
  stop_sources();
  while (!empty()) {
    const Cycle next = next_busy_cycle();
    if (next == kNever) break;
    skip_to(next);
    step();
  }
}

void Network::verify_drained() const {
  auto where = [&](int r, int p, int v) {
    return "router " + topo_.router_name(r) + " port " + topo_.port_name(r, p) + " VC " +
           std::to_string(v);
  };
  for (int r = 0; r < topo_.num_routers(); ++r) {
    const Router& router = *routers_[r];
    for (int p = 0; p < router.num_ports(); ++p)
      for (int v = 0; v < router.vcs(); ++v) {
        const InputVc& in = router.input_vc(p, v);
        if (in.count || in.state != VcState::Idle)
          throw CheckError(where(r, p, v) + ": input VC still holds " +
                           std::to_string(in.count) + " flits after the run");
        const OutputVc& out = router.output_vc(p, v);
        if (out.in_use || out.credits != router.credit_capacity(p))
          throw CheckError(where(r, p, v) + ": output VC " +
                           (out.in_use ? "still allocated" : "") + " has " +
                           std::to_string(out.credits) + " of " +
                           std::to_string(router.credit_capacity(p)) + " credits after the run");
      }
  }
  for (int n = 0; n < num_nodes(); ++n)
    for (int v = 0; v < spec_.router.vcs; ++v) {
      const OutputVc& o = nis_[n].inj[v];
      if (o.in_use || o.credits != spec_.router.buffer_depth)
        throw CheckError("node " + std::to_string(n) + " injection VC " + std::to_string(v) +
                         ": " + std::to_string(o.credits) + " of " +
                         std::to_string(spec_.router.buffer_depth) + " credits after the run");
    }
  if (flits_injected_ != flits_ejected_ || packets_.live() != 0)
    throw CheckError("conservation: " + std::to_string(flits_injected_) + " flits injected, " +
                     std::to_string(flits_ejected_) + " ejected, " +
                     std::to_string(packets_.live()) + " packets unaccounted for");
}

std::string Network::stuck_report(int max_lines) const {
  std::ostringstream s;
  int lines = 0;
  static const char* state_names[] = {"idle", "routing", "waiting for a VC", "active"};
  for (int r = 0; r < topo_.num_routers() && lines < max_lines; ++r) {
    const Router& router = *routers_[r];
    if (router.buffered() == 0) continue;
    for (int p = 0; p < router.num_ports(); ++p)
      for (int v = 0; v < router.vcs(); ++v) {
        const InputVc& in = router.input_vc(p, v);
        if (in.count == 0 || lines >= max_lines) continue;
        const Flit& f = router.front(p, v);
        const Packet& pk = packets_[f.packet];
        s << "  router " << topo_.router_name(r) << " in " << topo_.port_name(r, p) << " VC " << v
          << ": " << in.count << " flit(s), packet " << f.packet << " (node " << pk.src
          << " -> " << pk.dest << "), " << state_names[int(in.state)];
        if (in.out_port >= 0) s << ", out " << topo_.port_name(r, in.out_port);
        if (in.state == VcState::Active)
          s << " VC " << in.out_vc << " with "
            << router.output_vc(in.out_port, in.out_vc).credits << " credit(s)";
        s << "\n";
        ++lines;
      }
  }
  for (int n = 0; n < num_nodes() && lines < max_lines; ++n)
    if (!nis_[n].queue.empty()) {
      s << "  node " << n << " source: " << nis_[n].queue.size() << " message(s), "
        << nis_[n].queued_flits << " flit(s) waiting to inject\n";
      ++lines;
    }
  return s.str();
}

}  // namespace nocflow::noc
