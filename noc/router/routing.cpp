// SPDX-License-Identifier: MIT
#include "noc/router/routing.h"

#include <functional>

#include "noc/base/error.h"
#include "noc/base/names.h"

namespace nocflow::noc {
namespace {

constexpr PortMask bit(MeshPort p) { return PortMask{1} << int(p); }

/// At the destination router every topology ejects through the node's port.
bool at_destination(const Topology& t, int router, int dest, PortMask& out) {
  if (t.node_router(dest) != router) return false;
  out = PortMask{1} << t.node_port(dest);
  return true;
}

class DimensionOrder final : public RoutingFunction {
 public:
  explicit DimensionOrder(bool x_first) : x_first_(x_first) {}
  PortMask route(const Topology& t, int router, int, int dest) const override {
    PortMask out = 0;
    if (at_destination(t, router, dest, out)) return out;
    const int d = t.node_router(dest);
    const int dx = t.x(d) - t.x(router), dy = t.y(d) - t.y(router);
    const bool move_x = x_first_ ? dx != 0 : dy == 0;
    if (move_x) return dx > 0 ? bit(MeshPort::East) : bit(MeshPort::West);
    return dy > 0 ? bit(MeshPort::South) : bit(MeshPort::North);
  }

 private:
  bool x_first_;
};

/// West-first (Glass & Ni): all westward hops first, deterministically; then any minimal
/// productive direction among east, north and south. Deadlock-free without extra VCs.
class WestFirst final : public RoutingFunction {
 public:
  PortMask route(const Topology& t, int router, int, int dest) const override {
    PortMask out = 0;
    if (at_destination(t, router, dest, out)) return out;
    const int d = t.node_router(dest);
    const int dx = t.x(d) - t.x(router), dy = t.y(d) - t.y(router);
    if (dx < 0) return bit(MeshPort::West);
    if (dx > 0) out |= bit(MeshPort::East);
    if (dy > 0) out |= bit(MeshPort::South);
    if (dy < 0) out |= bit(MeshPort::North);
    return out;
  }
};

struct Entry {
  const char* name;
  std::function<std::unique_ptr<RoutingFunction>()> make;
};

const std::vector<Entry>& registry() {
  static const std::vector<Entry> entries = {
      {"xy", [] { return std::make_unique<DimensionOrder>(true); }},
      {"yx", [] { return std::make_unique<DimensionOrder>(false); }},
      {"west_first", [] { return std::make_unique<WestFirst>(); }},
  };
  return entries;
}

}  // namespace

std::vector<std::string> routing_names() {
  std::vector<std::string> names;
  for (const auto& e : registry()) names.push_back(e.name);
  return names;
}

std::string routing_mismatch(const std::string& routing, const std::string& kind) {
  if (routing == "west_first" && kind != "mesh")
    return "west_first needs a mesh (a crossbar has one route between any two ports: use xy)";
  return "";
}

std::unique_ptr<RoutingFunction> make_routing(const std::string& name) {
  for (const auto& e : registry())
    if (name == e.name) return e.make();
  throw InputError("router.routing: " + unknown_name_message("routing", name, routing_names()));
}

}  // namespace nocflow::noc
