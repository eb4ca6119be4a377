// SPDX-License-Identifier: MIT
#include "optimizer/cost/linkload_model.h"

#include <algorithm>
#include <cmath>

#include "noc/router/routing.h"
#include "noc/topology/topology.h"
#include "optimizer/cost/pe_model.h"

namespace nocflow::optimizer {

struct LinkloadModel::Impl {
  noc::Topology topo;
  std::unique_ptr<noc::RoutingFunction> routing;
  /// Links (router × port index) of the route src → dst, computed on first use: routing is a
  /// pure function, so the cache changes no result (and makes the model not thread-safe).
  mutable std::vector<std::vector<int>> paths;

  const std::vector<int>& path(int src, int dst) const {
    auto& p = paths[static_cast<std::size_t>(src * topo.num_nodes() + dst)];
    if (!p.empty()) return p;
    const int ports = topo.max_ports();
    int router = topo.node_router(src), in_port = topo.node_port(src);
    for (int guard = 0; guard < 4 * topo.num_routers() + 4; ++guard) {
      const int port = noc::first_port(routing->route(topo, router, in_port, dst));
      p.push_back(router * ports + port);
      const noc::PortPeer& peer = topo.out(router, port);
      if (peer.kind != noc::PortPeer::Kind::Router) break;
      router = peer.id;
      in_port = peer.port;
    }
    return p;
  }
};

LinkloadModel::LinkloadModel(HwDesc hw) : hw_(std::move(hw)), impl_(std::make_unique<Impl>()) {
  impl_->topo = noc::Topology::build(hw_.topology);
  impl_->routing = noc::make_routing(hw_.routing);
  impl_->paths.resize(static_cast<std::size_t>(impl_->topo.num_nodes()) * impl_->topo.num_nodes());
}

LinkloadModel::~LinkloadModel() = default;

LinkLoad LinkloadModel::route(const std::vector<Transfer>& transfers) const {
  const noc::Topology& t = impl_->topo;
  const int ports = t.max_ports();
  // Router output ports, then one injection channel per node.
  std::vector<double> load(static_cast<std::size_t>(t.num_routers() * ports + t.num_nodes()), 0.0);
  LinkLoad out;
  for (const Transfer& x : transfers) {
    const double b = static_cast<double>(x.bytes);
    load[static_cast<std::size_t>(t.num_routers() * ports + x.src)] += b;
    const std::vector<int>& links = impl_->path(x.src, x.dst);
    for (int link : links) load[static_cast<std::size_t>(link)] += b;
    // Router-to-router links (Manhattan distance on a mesh); the crossbar's one switch counts
    // as one hop, as in the paper model's h_avg.
    const int hops = std::max(1, static_cast<int>(links.size()) - 1);
    out.max_hops = std::max(out.max_hops, hops);
    out.max_routers = std::max(out.max_routers, static_cast<int>(links.size()));
    out.byte_hops += b * hops;
  }
  for (double l : load) out.max_link_bytes = std::max(out.max_link_bytes, l);
  return out;
}

double LinkloadModel::transfer_cycles(const LinkLoad& l) const {
  if (l.max_link_bytes <= 0) return 0;
  return std::ceil(l.max_link_bytes / hw_.link_bytes_per_cycle) +
         static_cast<double>(l.max_routers) * (hw_.router_pipeline_cycles + hw_.link_latency_cycles);
}

Cost LinkloadModel::reduction_cost(const Layer& l, const Choice& c) const {
  Cost out;
  const int f = c.factor(PartDim::Inpp);
  if (f <= 1) return out;
  const PlacedLayer placed{&l, c, place(c, hw_.grid())};
  const auto red = reduction_transfers(placed);
  const LinkLoad load = route(red);
  const double block_elems = static_cast<double>(l.out[0]) * l.out[1] * l.out[2] * l.out[3] * f / c.nodes();
  // Adds happen in the reduce-scatter half only: (f - 1) rounds of block / f elements.
  out.cycles = transfer_cycles(load) + block_elems * (f - 1) / f / hw_.adds_per_cycle;
  out.bytes = static_cast<double>(total_bytes(red));
  out.energy_pj = load.byte_hops * hw_.hop_pj_per_byte;
  return out;
}

Cost LinkloadModel::layer_cost(const Layer& l, const Choice& c) const {
  Cost out = reduction_cost(l, c);
  out.cycles += static_cast<double>(pe_work(l, c, hw_).cycles);
  out.energy_pj += static_cast<double>(l.macs) * hw_.mac_pj;
  return out;
}

Cost LinkloadModel::edge_cost(const Workload& w, const LayerEdge& e, const Choice& ci,
                              const Choice& cj) const {
  const PeGrid grid = hw_.grid();
  const PlacedLayer prod{&w.layers[static_cast<std::size_t>(e.src)], ci, place(ci, grid)};
  const PlacedLayer cons{&w.layers[static_cast<std::size_t>(e.dst)], cj, place(cj, grid)};
  const auto transfers = edge_transfers(w, e, prod, cons, grid);
  const LinkLoad load = route(transfers);
  Cost out;
  out.bytes = static_cast<double>(total_bytes(transfers));
  out.cycles = transfer_cycles(load);
  out.energy_pj = load.byte_hops * hw_.hop_pj_per_byte;
  return out;
}

}  // namespace nocflow::optimizer
