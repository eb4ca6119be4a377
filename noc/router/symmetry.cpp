// SPDX-License-Identifier: MIT
#include "noc/router/symmetry.h"

namespace nocflow::noc {
namespace {

/// A mesh symmetry as: optionally swap x and y, then optionally mirror each axis. Rotations are
/// clockwise as drawn with y pointing south (row 0 on top).
Symmetry mesh_symmetry(const Topology& t, bool swap, bool mirror_x, bool mirror_y) {
  static const char* const kNames[2][2][2] = {
      {{"identity", "mirror y"}, {"mirror x", "rotate 180"}},
      {{"transpose", "rotate 270"}, {"rotate 90", "anti-transpose"}}};
  Symmetry s;
  s.name = kNames[swap][mirror_x][mirror_y];
  const int cols = t.cols(), rows = t.rows();
  auto image = [&](int x, int y) {
    if (swap) std::swap(x, y);
    if (mirror_x) x = cols - 1 - x;
    if (mirror_y) y = rows - 1 - y;
    return y * cols + x;
  };
  // A direction (dx, dy) maps by the linear part: swap, then negate mirrored axes.
  auto port_image = [&](int p) {
    if (p == int(MeshPort::Local)) return p;
    int dx = p == int(MeshPort::East) ? 1 : p == int(MeshPort::West) ? -1 : 0;
    int dy = p == int(MeshPort::South) ? 1 : p == int(MeshPort::North) ? -1 : 0;
    if (swap) std::swap(dx, dy);
    if (mirror_x) dx = -dx;
    if (mirror_y) dy = -dy;
    return dx > 0 ? int(MeshPort::East) : dx < 0 ? int(MeshPort::West) : dy > 0 ? int(MeshPort::South) : int(MeshPort::North);
  };
  for (int r = 0; r < t.num_routers(); ++r) {
    s.router.push_back(image(t.x(r), t.y(r)));
    std::vector<int> ports;
    for (int p = 0; p < t.num_ports(r); ++p) ports.push_back(port_image(p));
    s.port.push_back(std::move(ports));
  }
  for (int n = 0; n < t.num_nodes(); ++n) s.node.push_back(s.router[static_cast<std::size_t>(t.node_router(n))]);
  return s;
}

}  // namespace

std::vector<Symmetry> candidate_symmetries(const Topology& t) {
  std::vector<Symmetry> out;
  if (t.is_mesh()) {
    for (bool swap : {false, true}) {
      if (swap && t.rows() != t.cols()) break;
      for (bool mx : {false, true})
        for (bool my : {false, true}) out.push_back(mesh_symmetry(t, swap, mx, my));
    }
    return out;
  }
  const int n = t.num_nodes();
  for (bool reverse : {false, true}) {
    Symmetry s;
    s.name = reverse ? "reverse ports" : "identity";
    for (int i = 0; i < n; ++i) s.node.push_back(reverse ? n - 1 - i : i);
    s.router.assign(1, 0);
    s.port.push_back(s.node);  // node i attaches to port i
    out.push_back(std::move(s));
  }
  return out;
}

bool commutes(const Topology& t, const RoutingFunction& routing, const Symmetry& s) {
  auto image_mask = [&](int r, PortMask m) {
    PortMask out = 0;
    for (int p = 0; p < t.num_ports(r); ++p)
      if (m >> p & 1) out |= PortMask{1} << s.port[static_cast<std::size_t>(r)][static_cast<std::size_t>(p)];
    return out;
  };
  for (int r = 0; r < t.num_routers(); ++r) {
    const int ri = s.router[static_cast<std::size_t>(r)];
    for (int p = 0; p < t.num_ports(r); ++p) {
      const int pi = s.port[static_cast<std::size_t>(r)][static_cast<std::size_t>(p)];
      const PortPeer& peer = t.out(r, p);
      const PortPeer& peer_image = t.out(ri, pi);
      if (peer.kind != peer_image.kind) return false;
      if (peer.kind == PortPeer::Kind::Router && s.router[static_cast<std::size_t>(peer.id)] != peer_image.id) return false;
      if (peer.kind == PortPeer::Kind::Node && s.node[static_cast<std::size_t>(peer.id)] != peer_image.id) return false;
    }
    for (int in = 0; in < t.num_ports(r); ++in) {
      if (t.in(r, in).kind == PortPeer::Kind::None) continue;
      const int in_image = s.port[static_cast<std::size_t>(r)][static_cast<std::size_t>(in)];
      for (int d = 0; d < t.num_nodes(); ++d)
        if (routing.route(t, ri, in_image, s.node[static_cast<std::size_t>(d)]) != image_mask(r, routing.route(t, r, in, d)))
          return false;
    }
  }
  return true;
}

std::vector<Symmetry> routing_symmetries(const Topology& t, const RoutingFunction& routing) {
  std::vector<Symmetry> out;
  for (Symmetry& s : candidate_symmetries(t))
    if (commutes(t, routing, s)) out.push_back(std::move(s));
  return out;
}

}  // namespace nocflow::noc
