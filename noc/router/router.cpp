// SPDX-License-Identifier: MIT
#include "noc/router/router.h"

#include <algorithm>
#include <limits>

#include "noc/base/error.h"

namespace nocflow::noc {
Router::Router(int id, const Topology& topo, const RoutingFunction& routing,
               const RouterSpec& spec, const LinkSpec& link)
    : id_(id),
      topo_(topo),
      route_fn_(routing),
      ports_(topo.num_ports(id)),
      vcs_(spec.vcs),
      depth_(spec.buffer_depth),
      routing_delay_(spec.routing_delay),
      vc_alloc_delay_(spec.vc_alloc_delay),
      flit_delay_(spec.sw_alloc_delay - 1 + spec.st_delay + link.latency + 1),
      credit_delay_(1 + link.latency),
      lookahead_(spec.lookahead_routing),
      speculative_(spec.speculative) {
  if (ports_ > kMaxPorts || ports_ * vcs_ > kMaxInputVcs)
    throw InputError("router: " + std::to_string(ports_) + " ports x " + std::to_string(vcs_) +
                     " VCs exceeds the supported " + std::to_string(kMaxPorts) + " ports and " +
                     std::to_string(kMaxInputVcs) + " input VCs per router");
  for (int p = 0; p < ports_; ++p) {
    out_peer_.push_back(topo.out(id, p));
    in_peer_.push_back(topo.in(id, p));
    const PortPeer::Kind k = out_peer_.back().kind;
    capacity_.push_back(k == PortPeer::Kind::None ? 0 : depth_);  // routers and NIs buffer alike
  }
  single_word_ = ports_ * vcs_ <= 64;
  vc_mask_ = vcs_ == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << vcs_) - 1;
  const int iterations = alloc_iterations_for(
      spec, topo.is_mesh() ? TopologySpec{"mesh"} : TopologySpec{"crossbar", 0, 0, ports_});
  va_ = make_allocator(spec.vc_allocator, ports_ * vcs_, ports_ * vcs_, iterations);
  sa_ = make_allocator(spec.sw_allocator, ports_, ports_, iterations);
  reset();
}

void Router::reset() {
  in_.assign(ports_ * vcs_, InputVc{});
  out_.assign(ports_ * vcs_, OutputVc{});
  for (int p = 0; p < ports_; ++p)
    for (int v = 0; v < vcs_; ++v) out_[p * vcs_ + v].credits = credit_capacity(p);
  slots_.assign(static_cast<std::size_t>(ports_) * vcs_ * depth_, Flit{});
  routing_ = {};
  vc_alloc_ = {};
  sa_ready_ = {};
  no_credit_ = {};
  ovc_holder_.assign(ports_ * vcs_, -1);
  out_free_.assign(ports_, vc_mask_);
  sa_offset_.assign(ports_, 0);
  va_->reset_priorities();  // as built: a reset network runs as a new one (traffic's probes)
  sa_->reset_priorities();
  sa_vc_.assign(ports_ * ports_, -1);
  flits_sent_.assign(ports_, 0);
  sent_span_.assign(ports_, {});
  vc_starved_.assign(ports_, 0);
  credit_stalled_.assign(ports_, 0);
  starved_ports_ = stalled_ports_ = sent_ports_ = 0;
  va_blocked_ = credit_waits_ = asked_ = 0;
  va_quiet_until_ = 0;
  last_step_ = -1;
  buffered_ = 0;
  last_departure_ = 0;
  progressed_ = false;
}

void Router::reset_arbitration() {
  sa_offset_.assign(ports_, 0);
  va_->reset_priorities();
  sa_->reset_priorities();
}

const Flit& Router::front(int port, int vc) const {
  const int ivc = port * vcs_ + vc;
  return slots_[static_cast<std::size_t>(ivc) * depth_ + in_[ivc].head];
}

void Router::receive_flit(int port, const Flit& f, Cycle now) {
  const int ivc = port * vcs_ + f.vc;
  InputVc& s = in_[ivc];
  if (s.count >= depth_)
    throw CheckError("buffer overflow at router " + topo_.router_name(id_) + " port " +
                     topo_.port_name(id_, port) + " VC " + std::to_string(f.vc) +
                     ": a flit arrived without a credit");
  int slot = s.head + s.count;
  if (slot >= depth_) slot -= depth_;
  slots_[static_cast<std::size_t>(ivc) * depth_ + slot] = f;
  ++s.count;
  ++buffered_;
  if (s.state == VcState::Active) set(sa_ready_, ivc);
  if (s.state == VcState::Idle) {
    if (!f.head())
      throw CheckError("router " + topo_.router_name(id_) + " port " +
                       topo_.port_name(id_, port) + " VC " + std::to_string(f.vc) +
                       ": body flit of packet " + std::to_string(f.packet) +
                       " arrived at an idle VC (packet interleaving)");
    start_packet(ivc, now);
  }
}

void Router::receive_credit(int out_port, int vc) {
  const int ovc = out_port * vcs_ + vc;
  OutputVc& o = out_[ovc];
  if (++o.credits > credit_capacity(out_port))
    throw CheckError("router " + topo_.router_name(id_) + " output port " +
                     topo_.port_name(id_, out_port) + " VC " + std::to_string(vc) +
                     ": more credits returned than buffer slots (" +
                     std::to_string(o.credits) + " > " +
                     std::to_string(credit_capacity(out_port)) + ")");
  if (o.credits == 1 && o.in_use) unset(no_credit_, ovc_holder_[ovc]);  // its holder may send
}

void Router::start_packet(int ivc, Cycle ready) {
  InputVc& s = in_[ivc];
  s.ready = ready;
  if (lookahead_) {
    compute_route(ivc);
    s.state = VcState::VcAlloc;
    set(vc_alloc_, ivc);
    va_quiet_until_ = 0;  // a new head may ask for a free VC
  } else {
    s.state = VcState::Routing;
    set(routing_, ivc);
  }
}

void Router::compute_route(int ivc) {
  InputVc& s = in_[ivc];
  const Flit& f = slots_[static_cast<std::size_t>(ivc) * depth_ + s.head];
  PortMask candidates = route_fn_.route(topo_, id_, ivc / vcs_, f.dest);
  int best = first_port(candidates);
  if (candidates & (candidates - 1)) {  // adaptive: most free downstream credits wins
    int best_free = -1;
    for (; candidates; candidates &= candidates - 1) {
      const int p = first_port(candidates);
      int free = 0;
      for (int v = 0; v < vcs_; ++v) free += out_[p * vcs_ + v].credits;
      if (free > best_free) best_free = free, best = p;
    }
  }
  s.out_port = static_cast<std::int16_t>(best);
}

void Router::route_stage(Cycle now) {
  for_each_bit(routing_, [&](int ivc) {
    InputVc& s = in_[ivc];
    if (s.ready > now) return;
    compute_route(ivc);
    s.state = VcState::VcAlloc;
    s.ready = now + routing_delay_;
    unset(routing_, ivc);
    set(vc_alloc_, ivc);
    va_quiet_until_ = 0;
    progressed_ = true;
  });
}

void Router::vc_alloc_stage(Cycle now) {
  if (!single_word_) {
    vc_alloc_all(now);
    return;
  }
  // A head asks only for the VCs of its own output port, so the heads wanting different ports
  // share no requester and no resource: matching each port's part on its own makes the same
  // matches and moves the same pointers as one matching of all (with several iterations too,
  // as a part without a grant in one iteration has none in the later ones). Most parts hold
  // one head, which takes the allocator's cheap allocate_single.
  std::uint64_t heads[kMaxPorts];  // per port in `asked`: the ready heads that want it
  std::uint64_t asked = 0;         // ports wanted by a ready head while one of their VCs is free
  std::uint64_t blocked = 0;       // ports wanted by a ready head while all their VCs are held
  Cycle wake = std::numeric_limits<Cycle>::max();  // when the next waiting head is ready
  for (std::uint64_t m = vc_alloc_[0]; m; m &= m - 1) {
    const int ivc = __builtin_ctzll(m);
    const InputVc& s = in_[ivc];
    if (s.ready > now) {
      wake = std::min(wake, s.ready);
      continue;
    }
    const std::uint64_t port = std::uint64_t{1} << s.out_port;
    if (!out_free_[s.out_port]) {
      blocked |= port;
    } else if (asked & port) {
      heads[s.out_port] |= std::uint64_t{1} << ivc;
    } else {
      asked |= port;
      heads[s.out_port] = std::uint64_t{1} << ivc;
    }
  }
  va_blocked_ |= blocked;
  if (!asked) {  // no request: the allocator is not called (it would match nothing, move no
                 // pointer), and the same holds until a head becomes ready or wants a freed VC
    va_quiet_until_ = wake;
    va_quiet_blocked_ = blocked;
    return;
  }
  for (; asked; asked &= asked - 1) {
    const int p = __builtin_ctzll(asked);
    const std::uint64_t free = out_free_[p] << (p * vcs_);
    std::uint64_t h = heads[p];
    if (!(h & (h - 1))) {
      const int ivc = __builtin_ctzll(h);
      if (va_->allocate_single(ivc, free) >= 0) grant_vc(ivc, now);
      continue;
    }
    for (; h; h &= h - 1) va_->request_outputs(__builtin_ctzll(h), free);
    va_->allocate();
    for (int ivc : va_->matched_inputs()) grant_vc(ivc, now);
  }
}

void Router::vc_alloc_all(Cycle now) {
  // Each ready head requests every free VC of its output port.
  for_each_bit(vc_alloc_, [&](int ivc) {
    const InputVc& s = in_[ivc];
    if (s.ready > now) return;
    if (!out_free_[s.out_port]) va_blocked_ |= std::uint64_t{1} << s.out_port;
    const int base = s.out_port * vcs_;
    for (std::uint64_t free = out_free_[s.out_port]; free; free &= free - 1)
      va_->request(ivc, base + __builtin_ctzll(free));
  });
  if (va_->empty()) return;
  va_->allocate();
  for (int ivc : va_->matched_inputs()) grant_vc(ivc, now);
}

void Router::grant_vc(int ivc, Cycle now) {
  progressed_ = true;
  const int ovc = va_->matched_output(ivc);
  out_[ovc].in_use = true;
  ovc_holder_[ovc] = static_cast<std::int16_t>(ivc);
  if (out_[ovc].credits <= 0) set(no_credit_, ivc);  // downstream still full from its last packet
  out_free_[ovc / vcs_] &= ~(std::uint64_t{1} << (ovc % vcs_));
  InputVc& s = in_[ivc];
  s.out_vc = static_cast<std::int16_t>(ovc % vcs_);
  s.state = VcState::Active;
  s.ready = now + vc_alloc_delay_ - (speculative_ ? 1 : 0);
  unset(vc_alloc_, ivc);
  set(sa_ready_, ivc);  // its head is buffered
}

std::uint64_t Router::port_bits_wide(const Mask& m, int port) const {
  const int start = port * vcs_, word = start >> 6, shift = start & 63;
  std::uint64_t bits = m[word] >> shift;
  if (shift + vcs_ > 64 && word + 1 < static_cast<int>(m.size())) bits |= m[word + 1] << (64 - shift);
  return bits & vc_mask_;
}

void Router::switch_alloc_stage(Cycle now, Channels& channels, PacketTable& packets) {
  // Candidates without a credit cannot ask for the switch; they only mark their output port
  // as wanted but blocked (credit-stalled, count_waits). The rest are the eligible ones.
  Mask eligible{}, waiting{};
  std::uint64_t blocked = 0;
  for (std::size_t w = 0; w < (single_word_ ? 1 : eligible.size()); ++w) {
    eligible[w] = sa_ready_[w] & ~no_credit_[w];
    waiting[w] = sa_ready_[w] & no_credit_[w];
  }
  for_each_bit(waiting, [&](int ivc) {
    const InputVc& s = in_[ivc];
    if (s.ready <= now) blocked |= std::uint64_t{1} << s.out_port;
  });
  // Requests go to the allocator once a second input port asks: a lone requester (the first
  // port's request, held back) takes the allocator's cheaper allocate_single.
  int requesters = 0, lone = -1;
  std::uint64_t lone_requests = 0, asked = 0;  // asked: output ports some input asks for
  for (int p = 0; p < ports_; ++p) {
    if (single_word_) {  // jump straight to the next port with a candidate
      const std::uint64_t rest = eligible[0] >> (p * vcs_);
      if (!rest) break;
      p += __builtin_ctzll(rest) / vcs_;
    }
    const std::uint64_t bits = port_bits(eligible, p);
    if (!bits) continue;
    // Visit this port's candidate VCs round-robin from the VC after the last winner (the
    // mask rotated so that bit k is VC offset + k); the first one asking for an output port
    // is the one that requests it.
    const int offset = sa_offset_[p];
    std::uint64_t order = offset ? ((bits >> offset) | (bits << (vcs_ - offset))) & vc_mask_ : bits;
    std::uint64_t requested = 0;  // output ports asked for by this input port
    for (; order; order &= order - 1) {
      int vc = __builtin_ctzll(order) + offset;
      if (vc >= vcs_) vc -= vcs_;
      const InputVc& s = in_[p * vcs_ + vc];
      if (s.ready > now) continue;
      const std::uint64_t bit = std::uint64_t{1} << s.out_port;
      if (requested & bit) continue;
      requested |= bit;
      sa_vc_[p * ports_ + s.out_port] = static_cast<std::int16_t>(vc);
    }
    if (!requested) continue;
    asked |= requested;
    if (++requesters == 1) {
      lone = p, lone_requests = requested;
      continue;
    }
    if (requesters == 2) sa_->request_outputs(lone, lone_requests);
    sa_->request_outputs(p, requested);
  }
  asked_ = asked;
  credit_waits_ = blocked & ~asked;  // an asked port sends or loses the switch: not stalled
  if (requesters == 0) return;
  if (requesters == 1)
    sa_->allocate_single(lone, lone_requests);
  else
    sa_->allocate();
  for (int p : sa_->matched_inputs()) {
    const int o = sa_->matched_output(p);
    const int vc = sa_vc_[p * ports_ + o];
    const int ivc = p * vcs_ + vc;
    InputVc& s = in_[ivc];
    Flit f = slots_[static_cast<std::size_t>(ivc) * depth_ + s.head];
    if (++s.head == depth_) s.head = 0;
    --s.count;
    --buffered_;
    if (s.count == 0) unset(sa_ready_, ivc);
    OutputVc& ov = out_[o * vcs_ + s.out_vc];
    if (--ov.credits == 0) set(no_credit_, ivc);
    sa_offset_[p] = static_cast<std::uint16_t>(vc + 1 == vcs_ ? 0 : vc + 1);

    const PortPeer& up = in_peer_[p];
    channels.send_credit(now + credit_delay_,
                         {up.id, static_cast<std::int16_t>(up.port), static_cast<std::uint8_t>(vc),
                          up.kind == PortPeer::Kind::Node});
    const PortPeer& down = out_peer_[o];
    f.vc = static_cast<std::uint8_t>(s.out_vc);
    channels.send_flit(now + flit_delay_, {down.id, static_cast<std::int16_t>(down.port),
                                           down.kind == PortPeer::Kind::Node, f});
    if (f.head()) ++packets[f.packet].routers;
    ++flits_sent_[o];
    sent_ports_ |= std::uint64_t{1} << o;
    sent_span_[o].add(now);
    last_departure_ = now;
    progressed_ = true;
    if (f.tail()) {
      ov.in_use = false;
      out_free_[o] |= std::uint64_t{1} << s.out_vc;
      va_quiet_until_ = 0;     // a waiting head may take it
      unset(no_credit_, ivc);  // it holds no output VC any more
      if (s.count > 0) {
        unset(sa_ready_, ivc);
        start_packet(ivc, now + 1);
      } else {
        s.state = VcState::Idle;
      }
    }
  }
}

bool Router::can_sleep(Cycle now) const {
  if (progressed_) return false;
  bool timer = false;
  auto pending = [&](int ivc) { timer |= in_[ivc].ready > now; };
  for_each_bit(routing_, pending);
  for_each_bit(vc_alloc_, pending);
  for_each_bit(sa_ready_, pending);
  return !timer;
}

std::int64_t Router::vc_starved_cycles(int out_port, Cycle now) const {
  return vc_starved_[out_port] + (((starved_ports_ >> out_port) & 1) ? slept(now) : 0);
}

std::int64_t Router::credit_stalled_cycles(int out_port, Cycle now) const {
  return credit_stalled_[out_port] + (((stalled_ports_ >> out_port) & 1) ? slept(now) : 0);
}

void Router::count_waits(Cycle now) {
  // The cycles slept through since the last step, as that step found them.
  if (const Cycle cycles = slept(now)) {
    for (std::uint64_t m = starved_ports_; m; m &= m - 1) vc_starved_[__builtin_ctzll(m)] += cycles;
    for (std::uint64_t m = stalled_ports_; m; m &= m - 1)
      credit_stalled_[__builtin_ctzll(m)] += cycles;
  }
  // Of the ports a head waited for, those no input asked the switch for (asked_; a port that
  // sent was asked for).
  // Only a port that has sent: before its first flit, a wait maps to link cycles before the
  // link's span (a head waits while every VC is held by packets still in VC allocation).
  starved_ports_ = va_blocked_ & ~asked_ & sent_ports_;
  for (std::uint64_t m = starved_ports_; m; m &= m - 1) ++vc_starved_[__builtin_ctzll(m)];
  // Of the ports a ready flit found without a credit and nobody asked for, those not VC-starved.
  stalled_ports_ = credit_waits_ & ~starved_ports_ & sent_ports_;
  for (std::uint64_t m = stalled_ports_; m; m &= m - 1) ++credit_stalled_[__builtin_ctzll(m)];
  va_blocked_ = 0;
  last_step_ = now;
}

void Router::step(Cycle now, Channels& channels, PacketTable& packets) {
  progressed_ = false;
  if (!none(routing_)) route_stage(now);
  if (!none(vc_alloc_)) {
    if (now < va_quiet_until_)
      va_blocked_ |= va_quiet_blocked_;  // what VA found in its last step (va_quiet_until_)
    else
      vc_alloc_stage(now);
  }
  if (!none(sa_ready_))
    switch_alloc_stage(now, channels, packets);
  else
    asked_ = credit_waits_ = 0;
  if (va_blocked_ | starved_ports_ | credit_waits_ | stalled_ports_) count_waits(now);
}

}  // namespace nocflow::noc
