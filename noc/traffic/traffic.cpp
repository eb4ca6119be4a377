// SPDX-License-Identifier: MIT
#include "noc/traffic/traffic.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <ostream>

#include "noc/base/error.h"
#include "noc/base/limits.h"

namespace nocflow::noc {
namespace {

/// Lazy Bernoulli sources plus the statistics of delivered packets.
class SyntheticTraffic final : public PacketSource, public DeliveryListener {
 public:
  SyntheticTraffic(const Network& net, const TrafficOptions& o)
      : pattern_(make_pattern(o.pattern, net.topology(), o.pattern_options)),
        rng_(o.seed),
        p_(std::clamp(o.rate / o.packet_flits, 0.0, 1.0)),
        flits_(o.packet_flits),
        next_(net.num_nodes(), 0) {
    for (Cycle& t : next_) t = gap() - 1;  // first success among cycles 0, 1, 2, ...
  }

  bool pull(int node, Cycle now, NewPacket& packet, Cycle& wake) override {
    if (next_[node] > now) {
      wake = next_[node];
      return false;
    }
    packet.dest = pattern_->dest(node, rng_);
    packet.flits = flits_;
    packet.created = next_[node];
    packet.measured = packet.created >= measure_from_ && packet.created < measure_until_;
    if (packet.measured) ++measured_created_;
    const Cycle g = gap();
    next_[node] = g == kNever ? kNever : next_[node] + g;  // both below kMaxCycles: no wrap
    wake = std::max(next_[node], now + 1);
    return true;
  }

  void flit_arrived(const Packet& p, const Flit& f, Cycle now) override {
    if (!counts(p, now)) return;
    flit_latency_sum_ += static_cast<double>(now - f.inject_cycle);
    ++flits_counted_;
  }

  void delivered(const Packet& p, Cycle now) override {
    ++phase_delivered_;
    phase_latency_sum_ += static_cast<double>(now - p.created);
    if (p.measured) ++measured_delivered_;
    if (!counts(p, now)) return;
    const auto plat = static_cast<std::size_t>(now - p.created);
    if (plat >= histogram_.size()) histogram_.resize(plat + 1, 0);
    ++histogram_[plat];
    packet_latency_sum_ += static_cast<double>(plat);
    network_latency_sum_ += static_cast<double>(now - p.head_injected);
    hops_sum_ += p.routers;
    ++packets_counted_;
  }

  /// How far `node`'s source is behind at `now`: cycles since its next packet's creation date
  /// (0 when that is still to come): its queue, in cycles of its offered load.
  Cycle behind(int node, Cycle now) const { return next_[node] < now ? now - next_[node] : 0; }
  /// BookSim mode tags by creation; fixed mode counts what arrives inside the window.
  bool counts(const Packet& p, Cycle now) const {
    return by_arrival_ ? (now >= measure_from_ && now < measure_until_) : p.measured;
  }

  Cycle gap() {
    if (p_ <= 0) return kNever;
    if (p_ >= 1) return 1;
    const double u = 1.0 - std::generate_canonical<double, 53>(rng_);  // (0, 1]
    // A rate so low that the wait passes any run's length (and int64) never injects again.
    const double wait = std::floor(std::log(u) / std::log1p(-p_));
    return wait >= static_cast<double>(kMaxCycles) ? kNever : 1 + static_cast<Cycle>(wait);
  }

  std::unique_ptr<TrafficPattern> pattern_;
  Rng rng_;
  double p_;
  int flits_;
  std::vector<Cycle> next_;

  Cycle measure_from_ = kNever, measure_until_ = kNever;
  bool by_arrival_ = false;
  std::int64_t measured_created_ = 0, measured_delivered_ = 0;
  std::vector<std::int64_t> histogram_;
  double packet_latency_sum_ = 0, network_latency_sum_ = 0, flit_latency_sum_ = 0;
  std::int64_t packets_counted_ = 0, flits_counted_ = 0, hops_sum_ = 0;
  std::int64_t phase_delivered_ = 0;  ///< since the last statistics reset (stability test)
  double phase_latency_sum_ = 0;
};

double percentile(const std::vector<std::int64_t>& histogram, std::int64_t total, double q) {
  if (total == 0) return 0;
  const auto rank = static_cast<std::int64_t>(std::ceil(q * static_cast<double>(total)));
  std::int64_t seen = 0;
  for (std::size_t i = 0; i < histogram.size(); ++i) {
    seen += histogram[i];
    if (seen >= std::max<std::int64_t>(rank, 1)) return static_cast<double>(i);
  }
  return static_cast<double>(histogram.size() - 1);
}

}  // namespace

std::vector<LinkLoad> link_loads(const Network& net, Cycle cycles) {
  const Topology& t = net.topology();
  std::vector<LinkLoad> links;
  const double c = std::max<Cycle>(cycles, 1);
  for (int n = 0; n < t.num_nodes(); ++n) {
    const int r = t.node_router(n);
    links.push_back({"node " + std::to_string(n),
                     t.router_name(r) + "." + t.port_name(r, t.node_port(n)), net.injected_at(n),
                     net.injected_at(n) / c, LinkLoad::Kind::Injection, net.injection_span(n)});
  }
  for (int r = 0; r < t.num_routers(); ++r)
    for (int p = 0; p < t.num_ports(r); ++p) {
      const PortPeer& peer = t.out(r, p);
      if (peer.kind == PortPeer::Kind::None) continue;
      const bool ejection = peer.kind == PortPeer::Kind::Node;
      const std::string to = ejection ? "node " + std::to_string(peer.id)
                                      : t.router_name(peer.id) + "." + t.port_name(peer.id, peer.port);
      const Router& router = net.router(r);
      const std::int64_t f = router.flits_sent(p);
      links.push_back({t.router_name(r) + "." + t.port_name(r, p), to, f, f / c,
                       ejection ? LinkLoad::Kind::Ejection : LinkLoad::Kind::RouterToRouter,
                       router.sent_span(p), router.vc_starved_cycles(p, net.now()),
                       router.credit_stalled_cycles(p, net.now())});
    }
  return links;
}

BusiestLinks busiest_links(const std::vector<LinkLoad>& links) {
  static const LinkLoad kNone = [] {
    LinkLoad none;
    none.vc_starved = none.credit_stalled = 0;  // no router link: it never waited
    return none;
  }();
  BusiestLinks b{&kNone, &kNone, &kNone};
  for (const LinkLoad& l : links) {
    const LinkLoad*& kind = l.kind == LinkLoad::Kind::Injection  ? b.injection
                            : l.kind == LinkLoad::Kind::Ejection ? b.ejection
                                                                 : b.router;
    // Among equally busy router outputs, the most VC-starved: the link the wormhole blocking
    // hit hardest (injection channels are not counted, -1, so they keep the first of equals).
    if (l.flits > kind->flits ||
        (l.flits > 0 && l.flits == kind->flits && l.vc_starved > kind->vc_starved))
      kind = &l;
  }
  return b;
}

void write_span_fields(std::ostream& out, const LinkLoad& l) {
  out << ",";
  if (l.span.first >= 0) out << l.span.first;
  out << ",";
  if (l.span.last >= 0) out << l.span.last;
  out << ",";
  if (l.span.first >= 0) out << l.busy_share();  // a link that carried nothing has no span
  out << ",";
  if (l.vc_starved >= 0) out << l.vc_starved;
  out << ",";
  if (l.credit_stalled >= 0) out << l.credit_stalled;
}

void check_traffic(const TrafficOptions& o) {
  if (o.rate < 0 || o.rate > 1) throw InputError("--rate must be in [0, 1] flits/node/cycle");
  if (o.packet_flits < 1 || o.packet_flits > 65535) throw InputError("--packet-flits must be in [1, 65535]");
}

TrafficResult run_traffic(Network& net, const TrafficOptions& o, const Advance& advance) {
  check_traffic(o);
  SyntheticTraffic traffic(net, o);
  net.set_listener(&traffic);
  net.set_source(&traffic);  // resets the network

  TrafficResult r;
  r.offered = o.rate;
  const int nodes = net.num_nodes();
  std::vector<std::int64_t> ejected_at_start(nodes), ejected_at_end(nodes);
  std::vector<Cycle> behind_at_start(nodes), behind_at_end(nodes);
  auto snapshot = [&](std::vector<std::int64_t>& into, std::vector<Cycle>& behind) {
    for (int n = 0; n < nodes; ++n) {
      into[n] = net.ejected_at(n);
      behind[n] = traffic.behind(n, net.now());
    }
  };
  auto reset_phase = [&] {
    traffic.phase_delivered_ = 0;
    traffic.phase_latency_sum_ = 0;
  };
  // BookSim's stability test: mean latency of delivered packets plus in-flight flits.
  auto check_stable = [&] {
    const double in_flight = static_cast<double>(net.flits_outstanding());
    const double count = static_cast<double>(traffic.phase_delivered_) + in_flight;
    const double latency =
        count == 0 ? 0
                   : (traffic.phase_latency_sum_ + in_flight * static_cast<double>(net.now()) -
                      net.outstanding_created_sum()) / count;
    if (latency > o.latency_limit) {
      r.stable = false;
      r.unstable_latency = latency;
    }
    return r.stable;
  };

  Cycle t = 0, window_start = 0, window_end = 0;
  if (o.fixed_cycles > 0) {
    t = std::max<Cycle>(o.warmup_cycles, 0);
    advance(t);
    traffic.by_arrival_ = true;
    traffic.measure_from_ = window_start = t;
    traffic.measure_until_ = window_end = t + o.fixed_cycles;
    snapshot(ejected_at_start, behind_at_start);
    reset_phase();
    advance(window_end);
    snapshot(ejected_at_end, behind_at_end);
    check_stable();  // the same latency rule, over the window (a fixed run keeps going past it)
    r.samples = 1;
  } else {
    for (int i = 0; i < o.warmup_periods && check_stable(); ++i) {
      t += o.sample_period;
      advance(t);
      if (i == 0 || i == 2) reset_phase();  // BookSim clears statistics at these points
    }
    reset_phase();
    window_start = t;
    traffic.measure_from_ = t;
    snapshot(ejected_at_start, behind_at_start);
    double prev_latency = 0, prev_accepted = 0;
    int calm = 0;
    std::int64_t ejected_before = net.flits_ejected();
    while (check_stable() && r.samples < o.max_samples) {
      t += o.sample_period;
      advance(t);
      ++r.samples;
      const double latency =
          traffic.packets_counted_ ? traffic.packet_latency_sum_ / traffic.packets_counted_ : 0;
      const double accepted = static_cast<double>(net.flits_ejected() - ejected_before) /
                              (static_cast<double>(o.sample_period) * nodes);
      ejected_before = net.flits_ejected();
      const bool calm_now = r.samples > 1 && latency > 0 && accepted > 0 &&
                            std::abs(latency - prev_latency) / latency < o.threshold &&
                            std::abs(accepted - prev_accepted) / accepted < o.threshold;
      calm = calm_now ? calm + 1 : 0;
      prev_latency = latency;
      prev_accepted = accepted;
      if (calm >= o.converge_samples) {
        r.converged = true;
        break;
      }
    }
    window_end = t;
    traffic.measure_until_ = t;
    snapshot(ejected_at_end, behind_at_end);
    // Drain the tagged packets with the load still on: done when every packet created in the
    // window has arrived and no source will create another one dated inside it.
    auto tagged_done = [&] {
      return traffic.measured_delivered_ >= traffic.measured_created_ &&
             std::all_of(traffic.next_.begin(), traffic.next_.end(),
                         [&](Cycle c) { return c >= window_end; });
    };
    while (r.stable && !tagged_done()) {
      t += 1000;
      advance(t);
      check_stable();
    }
  }
  r.measured_cycles = window_end - window_start;
  if (r.measured_cycles > 0) {
    double sum = 0, least = std::numeric_limits<double>::max();
    Cycle fell_behind = 0;
    for (int n = 0; n < nodes; ++n) {
      const double a = static_cast<double>(ejected_at_end[n] - ejected_at_start[n]) /
                       static_cast<double>(r.measured_cycles);
      sum += a;
      least = std::min(least, a);
      fell_behind = std::max(fell_behind, behind_at_end[n] - behind_at_start[n]);
    }
    r.accepted = sum / nodes;
    r.min_accepted = least;
    r.min_source_share =
        1 - static_cast<double>(fell_behind) / static_cast<double>(r.measured_cycles);
  }
  r.packets_measured = traffic.packets_counted_;
  if (traffic.packets_counted_) {
    const double n = static_cast<double>(traffic.packets_counted_);
    r.avg_packet_latency = traffic.packet_latency_sum_ / n;
    r.avg_network_latency = traffic.network_latency_sum_ / n;
    r.avg_hops = static_cast<double>(traffic.hops_sum_) / n;
    r.p50_packet_latency = percentile(traffic.histogram_, traffic.packets_counted_, 0.5);
    r.p99_packet_latency = percentile(traffic.histogram_, traffic.packets_counted_, 0.99);
    r.max_packet_latency = static_cast<double>(traffic.histogram_.size() - 1);
  }
  if (traffic.flits_counted_) r.avg_flit_latency = traffic.flit_latency_sum_ / traffic.flits_counted_;

  net.stop_sources();
  advance(kNever);  // drain through the caller's driver, so its clock stays in step
  net.verify_drained();
  r.cycles = net.now();
  r.flits_injected = net.flits_injected();
  r.flits_ejected = net.flits_ejected();
  r.router_steps = net.router_steps();
  r.links = link_loads(net, r.cycles);
  net.set_listener(nullptr);
  return r;
}

}  // namespace nocflow::noc
