// SPDX-License-Identifier: MIT
#pragma once
// linkload's internals, shared by its translation unit only (linkload_model.cpp): the topology
// and route cache (LinkloadModel::Impl) and the route-walking link counter.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <tuple>
#include <vector>

#include "noc/router/routing.h"
#include "noc/topology/topology.h"
#include "optimizer/cost/dimension_order_loads.h"
#include "optimizer/cost/linkload_model.h"
#include "optimizer/cost/round_robin_fluid.h"

namespace nocflow::optimizer {

struct LinkloadModel::Impl {
  noc::Topology topo;
  std::unique_ptr<noc::RoutingFunction> routing;
  /// Links (router × port index) of the route src → dst, computed on first use: routing is a
  /// pure function, so the cache changes no result (and makes the model not thread-safe).
  mutable std::vector<std::vector<int>> paths;

  const std::vector<int>& path(int src, int dst) const {
    auto& p = paths[static_cast<std::size_t>(src * topo.num_nodes() + dst)];
    if (p.empty()) walk(src, dst, [&](int link) { p.push_back(link); });
    return p;
  }
  /// Calls on_link for each link of the route, without the cache (thread-safe).
  template <class F>
  void walk(int src, int dst, F&& on_link) const {
    const int ports = topo.max_ports();
    int router = topo.node_router(src), in_port = topo.node_port(src);
    for (int guard = 0; guard < 4 * topo.num_routers() + 4; ++guard) {
      const int port = noc::first_port(routing->route(topo, router, in_port, dst));
      on_link(router * ports + port);
      const noc::PortPeer& peer = topo.out(router, port);
      if (peer.kind != noc::PortPeer::Kind::Router) break;
      router = peer.id;
      in_port = peer.port;
    }
  }
  /// Router output ports, then one injection channel per node.
  std::size_t num_links() const {
    return static_cast<std::size_t>(topo.num_routers() * topo.max_ports() + topo.num_nodes());
  }
  int injection_link(int node) const { return topo.num_routers() * topo.max_ports() + node; }
  std::vector<bool> router_to_router;  ///< per link: between two routers (not a PE's channel)
  int router_links = 0;                 ///< how many are
  FlitSize flit;  ///< link width
  const HwDesc* hw = nullptr;  ///< the model's: the channels' flow rates
};

/// Where a PathLoadCounter takes its routes from: the model's route cache (one thread only) or
/// a walk of each route (any thread).
enum class Routes { Cached, Walked };
/// Whether a PathLoadCounter schedules the links where every source sends one message
/// (LinkLoad::scheduled_cycles), or always prices by the sum form (a ring's rounds).
enum class OneMessageSchedule { On, Off };

/// Flits per link of a set of transfers, added one transfer at a time along the routes
/// (exact integers), and which links carry more than one source. finish() returns the loads
/// and starts over.
class PathLoadCounter {
 public:
  explicit PathLoadCounter(const LinkloadModel::Impl& impl, Routes routes = Routes::Cached,
                           OneMessageSchedule schedule = OneMessageSchedule::On)
      : impl_(impl),
        cached_(routes == Routes::Cached),
        schedule_(schedule == OneMessageSchedule::On &&
                  LinkloadModel::schedules_single_sends(*impl.hw)),
        // (ring rounds, priced by their plain drain, never use the short messages' fluid run)
        arbitration_(schedule == OneMessageSchedule::On && impl.hw->topology.kind == "mesh" &&
                     impl.hw->routing == "xy"),
        load_(impl.num_links(), 0),
        owner_(impl.num_links(), kNobody),
        shared_(impl.num_links(), 0),
        first_dst_(impl.num_links(), kNobody),
        dsts_shared_(impl.num_links(), 0),
        shortest_(impl.num_links(), 0),
        visits_on_(schedule_ ? impl.num_links() : 0, 0),
        slot_(visits_on_.size(), -1),
        sent_(static_cast<std::size_t>(impl.topo.num_nodes()), 0),
        received_(sent_.size(), 0) {}

  /// Returns the routers the route crosses.
  int add(int src, int dst, std::int64_t bytes) {
    const std::int64_t flits = impl_.flit.flits(bytes);
    flits_ += flits;
    ++messages_;
    longest_ = std::max(longest_, flits);
    shortest_message_ = std::min(shortest_message_, flits);
    max_sent_ = std::max(max_sent_, ++sent_[static_cast<std::size_t>(src)]);
    ++received_[static_cast<std::size_t>(dst)];
    load_[static_cast<std::size_t>(impl_.injection_link(src))] += flits;
    if (arbitration_) sends_.push_back({src, dst, flits});
    // The schedule's visits, while every source has sent one message (none of the injection
    // channel, which carries this message only).
    const bool record = schedule_ && max_sent_ == 1;
    if (!record) forget_visits();
    const std::size_t first_visit = visits_.size();
    int routers = 0;
    auto on_link = [&](int link) {
      const auto i = static_cast<std::size_t>(link);
      load_[i] += flits;
      if (owner_[i] == kNobody) owner_[i] = src, first_dst_[i] = dst, shortest_[i] = flits;
      shared_[i] |= owner_[i] != src;
      dsts_shared_[i] |= first_dst_[i] != dst;
      shortest_[i] = std::min(shortest_[i], flits);
      ++routers;
      if (record) {
        visits_.push_back({link, routers, static_cast<double>(flits), 0});
        ++visits_on_[i];
      }
    };
    if (cached_)
      for (int link : impl_.path(src, dst)) on_link(link);
    else
      impl_.walk(src, dst, on_link);
    if (record) {
      const double route = LinkloadModel::route_cycles(routers, *impl_.hw);
      for (std::size_t v = first_visit; v < visits_.size(); ++v) visits_[v].route = route;
      alone_ = std::max(alone_, route + static_cast<double>(flits));
    }
    // Router-to-router links (Manhattan distance on a mesh); the crossbar's one switch counts
    // as one hop, as in the paper model's h_avg.
    const int hops = std::max(1, routers - 1);
    out_.max_hops = std::max(out_.max_hops, hops);
    out_.max_routers = std::max(out_.max_routers, routers);
    byte_hops_ += flits * impl_.flit.bytes() * hops;  // whole flits, as the links carry them
    return routers;
  }

  /// Every destination receives every piece from another PE (ProducerLayout::for_each_group).
  void add_group(const int* dsts, std::size_t num_dsts, const Piece* pieces, std::size_t num_pieces) {
    for (std::size_t d = 0; d < num_dsts; ++d)
      for (std::size_t i = 0; i < num_pieces; ++i)
        if (pieces[i].src != dsts[d]) add(pieces[i].src, dsts[d], pieces[i].bytes);
  }

  LinkLoad finish() {
    LinkLoad out = out_;
    std::int64_t router = 0, endpoint = 0, router_flit_hops = 0;
    for (std::size_t i = 0; i < load_.size(); ++i) {
      std::int64_t& busiest = impl_.router_to_router[i] ? router : endpoint;
      busiest = std::max(busiest, load_[i]);
      if (impl_.router_to_router[i]) router_flit_hops += load_[i];
    }
    out.set_counts(router, endpoint, router_flit_hops, impl_.router_links, flits_, messages_);
    // Walked, not inferred from the counts: any busiest router link crossed by ≥ 2 sources.
    out.busiest_router_link_shared = false;
    std::int64_t shortest = std::numeric_limits<std::int64_t>::max();  // on such a link, if any
    for (std::size_t i = 0; i < load_.size(); ++i) {
      if (!impl_.router_to_router[i] || router <= 0 || load_[i] != router || !shared_[i]) continue;
      out.busiest_router_link_shared = true;
      if (dsts_shared_[i] && shortest_[i] <= longest_ / kShortFraction)  // see short_messages
        shortest = std::min(shortest, shortest_[i]);
    }
    if (shortest != std::numeric_limits<std::int64_t>::max()) {
      out.busiest_router_link_shortest = static_cast<double>(shortest);
      if (arbitration_ && router < endpoint)
        out.short_messages_arbitration_cycles = arbitration_cycles();
    }
    out.byte_hops = static_cast<double>(byte_hops_);
    out.max_sent = static_cast<int>(max_sent_);
    out.short_messages = shortest_message_ <= longest_ / kShortFraction;
    if (schedule_ && max_sent_ == 1) out.scheduled_cycles = scheduled_cycles();  // single_sends
    if (impl_.hw->flow_rate() < 1) {  // each channel at the rate its flows reach
      out.endpoint_cycles = impl_.hw->stream_cycles(static_cast<double>(longest_));  // one flow
      const int ports = impl_.topo.max_ports();
      for (int n = 0; n < impl_.topo.num_nodes(); ++n) {
        const auto i = static_cast<std::size_t>(n);
        const auto ejection =
            static_cast<std::size_t>(impl_.topo.node_router(n) * ports + impl_.topo.node_port(n));
        const std::int64_t injected = load_[static_cast<std::size_t>(impl_.injection_link(n))];
        if (sent_[i] > 0)
          out.endpoint_cycles =
              std::max(out.endpoint_cycles, static_cast<double>(injected) /
                                                impl_.hw->injection_rate(sent_[i], injected));
        if (received_[i] > 0)
          out.endpoint_cycles = std::max(
              out.endpoint_cycles, static_cast<double>(load_[ejection]) /
                                       impl_.hw->ejection_rate(received_[i], load_[ejection]));
      }
    }
    std::fill(sent_.begin(), sent_.end(), 0);
    std::fill(received_.begin(), received_.end(), 0);
    std::fill(load_.begin(), load_.end(), 0);
    std::fill(owner_.begin(), owner_.end(), kNobody);
    std::fill(shared_.begin(), shared_.end(), 0);
    std::fill(first_dst_.begin(), first_dst_.end(), kNobody);
    std::fill(dsts_shared_.begin(), dsts_shared_.end(), 0);
    out_ = {};
    sends_.clear();
    byte_hops_ = flits_ = messages_ = longest_ = max_sent_ = 0;
    shortest_message_ = std::numeric_limits<std::int64_t>::max();
    forget_visits();
    alone_ = 0;
    return out;
  }

 private:
  /// A message at one link of its route: the link, its routers up to there (its head arrives
  /// routers × hop after the start, unhindered), its flits, and its route's zero-load cycles.
  struct Visit {
    int link, routers;
    double flits, route;
  };

  /// Every link serves its visits in order of arrival (ties: the longer route first, so that
  /// the result does not depend on the order of add()), each for its flits; the latest tail
  /// leaving a link plus the rest of its route. A message alone on a link leaves it as it
  /// would alone on the NoC (alone_).
  double scheduled_cycles() {
    const double hop =
        LinkloadModel::route_cycles(1, *impl_.hw) - LinkloadModel::route_cycles(0, *impl_.hw);
    // The visits at links with more than one, by link (a counting sort: slot_ is where the
    // link's next visit goes, −1 elsewhere).
    std::size_t total = 0;
    for (const Visit& v : visits_) {
      const auto i = static_cast<std::size_t>(v.link);
      if (visits_on_[i] > 1 && slot_[i] < 0)
        slot_[i] = static_cast<int>(total), total += static_cast<std::size_t>(visits_on_[i]);
    }
    by_link_.resize(total);
    for (const Visit& v : visits_) {
      const auto i = static_cast<std::size_t>(v.link);
      if (visits_on_[i] > 1) by_link_[static_cast<std::size_t>(slot_[i]++)] = v;
    }
    double latest = alone_;
    for (const Visit& first : visits_) {
      const auto i = static_cast<std::size_t>(first.link);
      if (visits_on_[i] < 2 || slot_[i] < 0) continue;  // alone, or done
      const auto end = by_link_.begin() + slot_[i];
      slot_[i] = -1;
      std::sort(end - visits_on_[i], end, [](const Visit& a, const Visit& b) {
        return a.routers != b.routers ? a.routers < b.routers : a.route > b.route;
      });
      double free = 0;
      for (auto v = end - visits_on_[i]; v != end; ++v) {
        const double arrival = v->routers * hop;
        free = std::max(free, arrival) + v->flits;
        latest = std::max(latest, free + v->route - arrival);
      }
    }
    return latest;
  }
  /// LinkLoad::short_messages_arbitration_cycles: the round-robin fluid run of the short sends
  /// (in order of source and destination, whatever order they were added in) less the busiest
  /// link they load.
  double arbitration_cycles() {
    std::vector<FluidMessage> short_sends;
    for (const FluidMessage& m : sends_)
      if (m.flits <= longest_ / kShortFraction) short_sends.push_back(m);
    std::sort(short_sends.begin(), short_sends.end(),
              [](const FluidMessage& a, const FluidMessage& b) {
                return std::tie(a.src, a.dst, a.flits) < std::tie(b.src, b.dst, b.flits);
              });
    std::vector<std::int64_t> load(load_.size(), 0);
    std::int64_t busiest = 0;
    for (const FluidMessage& m : short_sends) {
      auto add_to = [&](std::size_t link) { busiest = std::max(busiest, load[link] += m.flits); };
      add_to(static_cast<std::size_t>(impl_.injection_link(m.src)));
      impl_.walk(m.src, m.dst, [&](int link) { add_to(static_cast<std::size_t>(link)); });
    }
    const noc::TopologySpec& mesh = impl_.hw->topology;
    return std::max(
        0.0, round_robin_fluid_cycles(short_sends, mesh.rows, mesh.cols, impl_.hw->ni_channels) -
                 static_cast<double>(busiest));
  }
  void forget_visits() {
    for (const Visit& v : visits_) visits_on_[static_cast<std::size_t>(v.link)] = 0;
    visits_.clear();
  }

  static constexpr int kNobody = -1;
  const LinkloadModel::Impl& impl_;
  bool cached_;
  bool schedule_;
  bool arbitration_;  ///< short_messages_arbitration_cycles applies: an xy mesh, not ring rounds
  std::vector<FluidMessage> sends_;  ///< with arbitration_: every message added
  std::vector<std::int64_t> load_;
  std::vector<int> owner_;    ///< per link: the first source whose flits crossed it
  std::vector<char> shared_;  ///< per link: another source's crossed it too
  std::vector<int> first_dst_;          ///< per link: the first destination whose flits crossed it
  std::vector<char> dsts_shared_;       ///< per link: another destination's crossed it too
  std::vector<std::int64_t> shortest_;  ///< per link: its shortest message, flits (once crossed)
  std::vector<int> visits_on_;  ///< per link: visits_ at it
  std::vector<int> slot_;       ///< per link: scheduled_cycles' counting sort; −1 between calls
  std::vector<Visit> by_link_;  ///< scheduled_cycles' sorted visits
  std::vector<Visit> visits_;   ///< with schedule_, while every source sent one message
  double alone_ = 0;            ///< the slowest of those messages alone on the NoC, cycles
  std::vector<std::int64_t> sent_, received_;  ///< per node: messages
  LinkLoad out_;
  std::int64_t byte_hops_ = 0, flits_ = 0, messages_ = 0;
  std::int64_t longest_ = 0;  ///< the longest message's flits
  std::int64_t shortest_message_ = std::numeric_limits<std::int64_t>::max();  ///< the shortest's
  std::int64_t max_sent_ = 0;
};

}  // namespace nocflow::optimizer
