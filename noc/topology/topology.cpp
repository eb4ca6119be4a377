// SPDX-License-Identifier: MIT
#include "noc/topology/topology.h"

#include <cstdlib>

#include "noc/base/error.h"
#include "noc/base/names.h"

namespace nocflow::noc {

Topology Topology::build(const TopologySpec& spec) {
  Topology t;
  if (spec.kind == "mesh") {
    if (spec.rows < 1 || spec.cols < 1)
      throw InputError("topology: a mesh needs at least 1 row and 1 column");
    t.mesh_ = true;
    t.rows_ = spec.rows;
    t.cols_ = spec.cols;
    t.num_nodes_ = spec.rows * spec.cols;
    t.max_ports_ = 5;
    const int n = t.num_nodes_;
    for (int r = 0; r < n; ++r) {
      t.xs_.push_back(r % t.cols_);
      t.ys_.push_back(r / t.cols_);
    }
    t.out_.assign(n, std::vector<PortPeer>(5));
    t.in_.assign(n, std::vector<PortPeer>(5));
    for (int r = 0; r < n; ++r) {
      const int x = t.x(r), y = t.y(r);
      auto link = [&](MeshPort p, bool exists, int nb, MeshPort back) {
        if (!exists) return;
        t.out_[r][int(p)] = {PortPeer::Kind::Router, nb, int(back)};
        t.in_[r][int(p)] = {PortPeer::Kind::Router, nb, int(back)};
      };
      link(MeshPort::East, x + 1 < t.cols_, r + 1, MeshPort::West);
      link(MeshPort::West, x > 0, r - 1, MeshPort::East);
      link(MeshPort::South, y + 1 < t.rows_, r + t.cols_, MeshPort::North);
      link(MeshPort::North, y > 0, r - t.cols_, MeshPort::South);
      t.out_[r][int(MeshPort::Local)] = {PortPeer::Kind::Node, r, 0};
      t.in_[r][int(MeshPort::Local)] = {PortPeer::Kind::Node, r, 0};
      t.node_router_.push_back(r);
      t.node_port_.push_back(int(MeshPort::Local));
    }
  } else if (spec.kind == "crossbar") {
    if (spec.ports < 2) throw InputError("topology: a crossbar needs at least 2 ports");
    t.mesh_ = false;
    t.rows_ = 1;
    t.cols_ = spec.ports;
    t.num_nodes_ = spec.ports;
    t.max_ports_ = spec.ports;
    t.xs_.assign(1, 0);
    t.ys_.assign(1, 0);
    t.out_.assign(1, std::vector<PortPeer>(spec.ports));
    t.in_.assign(1, std::vector<PortPeer>(spec.ports));
    for (int i = 0; i < spec.ports; ++i) {
      t.out_[0][i] = {PortPeer::Kind::Node, i, 0};
      t.in_[0][i] = {PortPeer::Kind::Node, i, 0};
      t.node_router_.push_back(0);
      t.node_port_.push_back(i);
    }
  } else {
    throw InputError("topology.kind: " + unknown_name_message("topology", spec.kind,
                                                              {"mesh", "crossbar"}));
  }
  return t;
}

int Topology::routers_on_path(int src_node, int dst_node) const {
  if (!mesh_) return 1;
  const int a = node_router_[src_node], b = node_router_[dst_node];
  return std::abs(x(a) - x(b)) + std::abs(y(a) - y(b)) + 1;
}

std::string Topology::router_name(int router) const {
  if (!mesh_) return "xbar";
  return "r(" + std::to_string(x(router)) + "," + std::to_string(y(router)) + ")";
}

std::string Topology::port_name(int router, int port) const {
  if (!mesh_) return "p" + std::to_string(port);
  static const char* names[] = {"E", "W", "S", "N", "L"};
  return names[port];
}

}  // namespace nocflow::noc
