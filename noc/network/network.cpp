// SPDX-License-Identifier: MIT
#include "noc/network/network.h"

#include <algorithm>
#include <sstream>

#include "noc/base/error.h"
#include "noc/network/ni.h"

namespace nocflow::noc {

Network::Network(const NocSpec& spec, std::unique_ptr<RoutingFunction> routing)
    : spec_(spec),
      topo_(Topology::build(spec.topology)),
      routing_(routing ? std::move(routing) : make_routing(spec.router.routing)),
      channels_(spec.router.sw_alloc_delay + spec.router.st_delay + spec.link.latency + 2) {
  if (spec_.watchdog_cycles <= 0) spec_.watchdog_cycles = 10000;
  if (topo_.num_nodes() > 65535) throw InputError("topology: at most 65535 nodes");
  if (spec_.router.vcs > 255) throw InputError("router.vcs: at most 255");
  if (spec_.ni.channels > kMaxNiChannels)
    throw InputError("ni.channels: at most " + std::to_string(kMaxNiChannels));
  if (const std::string why = routing_mismatch(spec_.router.routing, spec_.topology.kind);
      !why.empty())
    throw InputError("router.routing: " + why);
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
    ni.next_serial = 0;
    ni.last_served = ~std::uint64_t{0};
    ni.last_vc = -1;
    ni.next_vc = 0;
  }
}

void Network::set_source(PacketSource* source) {
  source_ = source;
  reset();
}

void Network::set_sink_interval(int node, int cycles) { nis_[node].sink_interval = cycles; }

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
      ni.blocked = false;
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
      nis_[c.target].blocked = nis_[c.target].inject_blocked = false;  // may unblock injection
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
    // A blocked NI stays listed (the visiting order decides the order of source wake-ups),
    // but its step would change nothing until a credit, a flit or a message arrives.
    if (!nis_[n].blocked) step_ni(n);
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
