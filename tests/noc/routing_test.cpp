// SPDX-License-Identifier: MIT
// Routing functions and topologies.
#include <gtest/gtest.h>

#include "noc/base/error.h"
#include "noc/router/routing.h"
#include "noc/topology/topology.h"

namespace nocflow::noc {
namespace {

/// Follow a deterministic routing function (first candidate) from src to dst; returns the
/// routers visited.
std::vector<int> walk(const Topology& t, const RoutingFunction& f, int src, int dst) {
  std::vector<int> path;
  int r = t.node_router(src), in_port = t.node_port(src);
  for (int guard = 0; guard < 1000; ++guard) {
    path.push_back(r);
    const int out = first_port(f.route(t, r, in_port, dst));
    const PortPeer& peer = t.out(r, out);
    EXPECT_NE(peer.kind, PortPeer::Kind::None) << "routed to an unconnected port";
    if (peer.kind == PortPeer::Kind::Node) {
      EXPECT_EQ(peer.id, dst);
      return path;
    }
    r = peer.id;
    in_port = peer.port;
  }
  ADD_FAILURE() << "no arrival";
  return path;
}

TEST(Topology, MeshWiring) {
  const Topology t = Topology::build({"mesh", 3, 4, 0});
  EXPECT_EQ(t.num_nodes(), 12);
  // r(1,1) = 5: east neighbour 6 enters through its west port.
  EXPECT_EQ(t.out(5, int(MeshPort::East)).id, 6);
  EXPECT_EQ(t.out(5, int(MeshPort::East)).port, int(MeshPort::West));
  EXPECT_EQ(t.out(5, int(MeshPort::South)).id, 9);
  EXPECT_EQ(t.out(0, int(MeshPort::West)).kind, PortPeer::Kind::None);
  EXPECT_EQ(t.routers_on_path(0, 11), 3 + 2 + 1);
  EXPECT_THROW(Topology::build({"torus", 2, 2, 0}), InputError);
}

TEST(Routing, XyGoesAlongXFirstAndYxAlongYFirst) {
  const Topology t = Topology::build({"mesh", 4, 4, 0});
  auto xy = make_routing("xy"), yx = make_routing("yx");
  // From (0,0) to (3,2): xy visits (1,0),(2,0),(3,0) first; yx visits (0,1),(0,2) first.
  EXPECT_EQ(walk(t, *xy, 0, 11), (std::vector<int>{0, 1, 2, 3, 7, 11}));
  EXPECT_EQ(walk(t, *yx, 0, 11), (std::vector<int>{0, 4, 8, 9, 10, 11}));
}

TEST(Routing, EveryPairArrivesMinimally) {
  const Topology t = Topology::build({"mesh", 5, 3, 0});
  for (const std::string& name : routing_names()) {
    auto f = make_routing(name);
    for (int s = 0; s < t.num_nodes(); ++s)
      for (int d = 0; d < t.num_nodes(); ++d)
        EXPECT_EQ(static_cast<int>(walk(t, *f, s, d).size()), t.routers_on_path(s, d)) << name;
  }
}

TEST(Routing, WestFirstIsAdaptiveOnlyWhenNotGoingWest) {
  const Topology t = Topology::build({"mesh", 4, 4, 0});
  auto wf = make_routing("west_first");
  // From r(2,1) = 6 to r(0,3) = 12: must go west first, one choice.
  EXPECT_EQ(wf->route(t, 6, 4, 12), PortMask{1} << int(MeshPort::West));
  // From r(1,1) = 5 to r(3,3) = 15: east or south.
  EXPECT_EQ(wf->route(t, 5, 4, 15),
            (PortMask{1} << int(MeshPort::East)) | (PortMask{1} << int(MeshPort::South)));
}

TEST(Routing, CrossbarEjectsDirectly) {
  const Topology t = Topology::build({"crossbar", 0, 0, 8});
  auto xy = make_routing("xy");
  for (int d = 0; d < 8; ++d) EXPECT_EQ(walk(t, *xy, 3, d).size(), 1u);
}

TEST(Routing, UnknownNameSuggests) {
  try {
    make_routing("xyy");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("did you mean 'xy'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace nocflow::noc
