// SPDX-License-Identifier: MIT
#pragma once
// linkload's internals, shared by its translation unit only (linkload_model.cpp): the topology
// and route cache (LinkloadModel::Impl) and the route-walking link counter.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "noc/router/routing.h"
#include "noc/topology/topology.h"
#include "optimizer/cost/dimension_order_loads.h"
#include "optimizer/cost/linkload_model.h"

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

/// Flits per link of a set of transfers, added one transfer at a time along the routes
/// (exact integers), and which links carry more than one source. `cached`: along the model's
/// route cache (one thread), else walking each route (any thread). finish() returns the loads
/// and starts over.
class PathLoadCounter {
 public:
  explicit PathLoadCounter(const LinkloadModel::Impl& impl, bool cached = true)
      : impl_(impl),
        cached_(cached),
        load_(impl.num_links(), 0),
        owner_(impl.num_links(), kNobody),
        shared_(impl.num_links(), 0),
        sent_(static_cast<std::size_t>(impl.topo.num_nodes()), 0),
        received_(sent_.size(), 0) {}

  /// Returns the routers the route crosses.
  int add(int src, int dst, std::int64_t bytes) {
    const std::int64_t flits = impl_.flit.flits(bytes);
    flits_ += flits;
    ++messages_;
    longest_ = std::max(longest_, flits);
    ++sent_[static_cast<std::size_t>(src)];
    ++received_[static_cast<std::size_t>(dst)];
    load_[static_cast<std::size_t>(impl_.injection_link(src))] += flits;
    int routers = 0;
    auto on_link = [&](int link) {
      const auto i = static_cast<std::size_t>(link);
      load_[i] += flits;
      if (owner_[i] == kNobody) owner_[i] = src;
      shared_[i] |= owner_[i] != src;
      ++routers;
    };
    if (cached_)
      for (int link : impl_.path(src, dst)) on_link(link);
    else
      impl_.walk(src, dst, on_link);
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
    for (std::size_t i = 0; i < load_.size(); ++i)
      out.busiest_router_link_shared |= impl_.router_to_router[i] && router > 0 && load_[i] == router && shared_[i];
    out.byte_hops = static_cast<double>(byte_hops_);
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
    out_ = {};
    byte_hops_ = flits_ = messages_ = longest_ = 0;
    return out;
  }

 private:
  static constexpr int kNobody = -1;
  const LinkloadModel::Impl& impl_;
  bool cached_;
  std::vector<std::int64_t> load_;
  std::vector<int> owner_;    ///< per link: the first source whose flits crossed it
  std::vector<char> shared_;  ///< per link: another source's crossed it too
  std::vector<std::int64_t> sent_, received_;  ///< per node: messages
  LinkLoad out_;
  std::int64_t byte_hops_ = 0, flits_ = 0, messages_ = 0;
  std::int64_t longest_ = 0;  ///< the longest message's flits
};

}  // namespace nocflow::optimizer
