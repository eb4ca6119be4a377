// SPDX-License-Identifier: MIT
#pragma once
// Topologies as plain data: routers, their ports, what each output port leads to, and where
// each node (PE) attaches. Used by the NoC models and, for routing bytes onto links, by the
// optimizer's linkload cost model.
//
// Mesh port numbering (BookSim's, so that arbitration priorities match): 0 = +x (east),
// 1 = -x (west), 2 = +y (south, next row), 3 = -y (north), 4 = local. Router r sits at
// x = r % cols, y = r / cols and node r attaches to its local port.
// Crossbar: one router with N ports; node i attaches to port i.
#include <string>
#include <vector>

#include "noc/spec.h"

namespace nocflow::noc {

enum class MeshPort : int { East = 0, West = 1, South = 2, North = 3, Local = 4 };

/// Where an output port leads (or where an input port comes from).
struct PortPeer {
  enum class Kind : std::uint8_t { None, Router, Node };
  Kind kind = Kind::None;
  int id = -1;    ///< router or node
  int port = -1;  ///< the peer router's port (input port for an output, and vice versa)
};

class Topology {
 public:
  /// Throws InputError for an unknown kind or impossible size.
  static Topology build(const TopologySpec& spec);

  bool is_mesh() const { return mesh_; }
  int rows() const { return rows_; }
  int cols() const { return cols_; }
  int num_nodes() const { return num_nodes_; }
  int num_routers() const { return static_cast<int>(out_.size()); }
  int num_ports(int router) const { return static_cast<int>(out_[router].size()); }
  int max_ports() const { return max_ports_; }

  const PortPeer& out(int router, int port) const { return out_[router][port]; }
  const PortPeer& in(int router, int port) const { return in_[router][port]; }
  int node_router(int node) const { return node_router_[node]; }
  int node_port(int node) const { return node_port_[node]; }

  int x(int router) const { return xs_[router]; }
  int y(int router) const { return ys_[router]; }

  /// Routers a minimal route from src to dst traverses (BookSim's hop count: distance + 1).
  int routers_on_path(int src_node, int dst_node) const;

  std::string router_name(int router) const;          ///< "r(3,1)" or "xbar"
  std::string port_name(int router, int port) const;  ///< "E", "W", "S", "N", "L" or "p7"

 private:
  bool mesh_ = true;
  int rows_ = 1, cols_ = 1, num_nodes_ = 0, max_ports_ = 0;
  std::vector<std::vector<PortPeer>> out_, in_;
  std::vector<int> node_router_, node_port_;
  std::vector<int> xs_, ys_;  ///< router coordinates (routing asks for them per head flit)
};

}  // namespace nocflow::noc
