// SPDX-License-Identifier: MIT
// Network symmetries (noc/router/symmetry.h): which rotations and reflections commute with
// each routing function, and that routes between image nodes are the images of routes.
#include <gtest/gtest.h>

#include <algorithm>

#include "noc/router/symmetry.h"

namespace nocflow::noc {
namespace {

std::vector<std::string> names(const std::vector<Symmetry>& v) {
  std::vector<std::string> out;
  for (const Symmetry& s : v) out.push_back(s.name);
  return out;
}

/// Routers a deterministic route visits, by following the routing function.
std::vector<int> route_routers(const Topology& t, const RoutingFunction& f, int src, int dst) {
  std::vector<int> path;
  int r = t.node_router(src), in = t.node_port(src);
  while (static_cast<int>(path.size()) <= t.num_routers()) {
    path.push_back(r);
    const PortPeer& peer = t.out(r, first_port(f.route(t, r, in, dst)));
    if (peer.kind != PortPeer::Kind::Router) break;
    r = peer.id;
    in = peer.port;
  }
  return path;
}

TEST(Symmetry, DimensionOrderKeepsTheMirrorsButNotTheQuarterTurns) {
  const Topology t = Topology::build({"mesh", 4, 4, 0});
  EXPECT_EQ(candidate_symmetries(t).size(), 8u);
  const std::vector<std::string> mirrors = {"identity", "mirror y", "mirror x", "rotate 180"};
  EXPECT_EQ(names(routing_symmetries(t, *make_routing("xy"))), mirrors);
  EXPECT_EQ(names(routing_symmetries(t, *make_routing("yx"))), mirrors);
  // West-first routes all westward hops first: only the north-south mirror keeps that.
  EXPECT_EQ(names(routing_symmetries(t, *make_routing("west_first"))), (std::vector<std::string>{"identity", "mirror y"}));
}

TEST(Symmetry, QuarterTurnIsClockwiseWithRowZeroOnTop) {
  const Topology t = Topology::build({"mesh", 4, 4, 0});
  const auto all = candidate_symmetries(t);
  const auto it = std::find_if(all.begin(), all.end(), [](const Symmetry& s) { return s.name == "rotate 90"; });
  ASSERT_NE(it, all.end());
  EXPECT_EQ(it->node[3], 15);   // top right (3,0) → bottom right (3,3)
  EXPECT_EQ(it->node[15], 12);  // bottom right → bottom left
  EXPECT_EQ(it->port[0][int(MeshPort::East)], int(MeshPort::South));
  // A quarter turn makes x-first routes y-first: not a symmetry of xy.
  EXPECT_FALSE(commutes(t, *make_routing("xy"), *it));
}

TEST(Symmetry, RectangleHasFourCandidatesAndCrossbarReversesItsPorts) {
  const Topology mesh = Topology::build({"mesh", 3, 5, 0});
  EXPECT_EQ(candidate_symmetries(mesh).size(), 4u);  // no quarter turns or transposes
  EXPECT_EQ(names(routing_symmetries(mesh, *make_routing("xy"))),
            (std::vector<std::string>{"identity", "mirror y", "mirror x", "rotate 180"}));
  const Topology xbar = Topology::build({"crossbar", 0, 0, 6});
  const auto s = routing_symmetries(xbar, *make_routing("xy"));
  ASSERT_EQ(names(s), (std::vector<std::string>{"identity", "reverse ports"}));
  EXPECT_EQ(s[1].node, (std::vector<int>{5, 4, 3, 2, 1, 0}));
}

TEST(Symmetry, RoutesBetweenImageNodesAreImagesOfRoutes) {
  const Topology t = Topology::build({"mesh", 3, 5, 0});
  for (const std::string routing : {"xy", "yx", "west_first"}) {
    const auto f = make_routing(routing);
    for (const Symmetry& s : routing_symmetries(t, *f)) {
      std::vector<int> sorted = s.node;
      std::sort(sorted.begin(), sorted.end());
      for (int n = 0; n < t.num_nodes(); ++n) ASSERT_EQ(sorted[static_cast<std::size_t>(n)], n) << s.name << ": not a permutation";
      for (int src = 0; src < t.num_nodes(); ++src)
        for (int dst = 0; dst < t.num_nodes(); ++dst) {
          std::vector<int> image;
          for (int r : route_routers(t, *f, src, dst)) image.push_back(s.router[static_cast<std::size_t>(r)]);
          EXPECT_EQ(route_routers(t, *f, s.node[static_cast<std::size_t>(src)], s.node[static_cast<std::size_t>(dst)]), image)
              << routing << ", " << s.name << ", " << src << " -> " << dst;
        }
    }
  }
}

}  // namespace
}  // namespace nocflow::noc
