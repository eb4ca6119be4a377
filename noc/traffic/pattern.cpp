// SPDX-License-Identifier: MIT
#include "noc/traffic/pattern.h"

#include <functional>

#include "noc/base/error.h"
#include "noc/base/names.h"

namespace nocflow::noc {
namespace {

int log2_exact(int n) {
  int b = 0;
  while ((1 << b) < n) ++b;
  return (1 << b) == n ? b : -1;
}

/// Uniform over [0, n); the modulo bias is below n / 2^64.
int uniform_below(int n, Rng& rng) { return static_cast<int>(rng() % static_cast<std::uint64_t>(n)); }

class Uniform final : public TrafficPattern {
 public:
  Uniform(int n, bool exclude_self) : n_(n), exclude_self_(exclude_self) {}
  int dest(int src, Rng& rng) const override {
    if (!exclude_self_) return uniform_below(n_, rng);
    const int d = uniform_below(n_ - 1, rng);
    return d >= src ? d + 1 : d;
  }

 private:
  int n_;
  bool exclude_self_;
};

/// Any pattern that is a fixed permutation of the nodes.
class Permutation final : public TrafficPattern {
 public:
  explicit Permutation(std::vector<int> map) : map_(std::move(map)) {}
  int dest(int src, Rng&) const override { return map_[src]; }

 private:
  std::vector<int> map_;
};

class Hotspot final : public TrafficPattern {
 public:
  Hotspot(int n, int node, double fraction) : uniform_(n, false), node_(node), fraction_(fraction) {}
  int dest(int src, Rng& rng) const override {
    const double u = std::generate_canonical<double, 53>(rng);
    return u < fraction_ ? node_ : uniform_.dest(src, rng);
  }

 private:
  Uniform uniform_;
  int node_;
  double fraction_;
};

using Builder = std::function<std::unique_ptr<TrafficPattern>(const Topology&, const PatternOptions&)>;

std::unique_ptr<TrafficPattern> bit_pattern(const Topology& t, const char* name,
                                            const std::function<int(int, int)>& f) {
  const int n = t.num_nodes(), bits = log2_exact(n);
  if (bits < 1)
    throw InputError(std::string("--pattern ") + name + ": needs a power-of-two node count of at least 2, not " +
                     std::to_string(n));
  std::vector<int> map(n);
  for (int s = 0; s < n; ++s) map[s] = f(s, bits) & (n - 1);
  return std::make_unique<Permutation>(std::move(map));
}

/// Per-dimension offset patterns on a mesh (tornado, neighbor); a crossbar is one dimension.
std::unique_ptr<TrafficPattern> offset_pattern(const Topology& t, const std::function<int(int)>& offset) {
  const int n = t.num_nodes();
  std::vector<int> map(n);
  if (t.is_mesh()) {
    const int kx = t.cols(), ky = t.rows();
    for (int s = 0; s < n; ++s) {
      const int x = (t.x(s) + offset(kx)) % kx, y = (t.y(s) + offset(ky)) % ky;
      map[s] = y * kx + x;
    }
  } else {
    for (int s = 0; s < n; ++s) map[s] = (s + offset(n)) % n;
  }
  return std::make_unique<Permutation>(std::move(map));
}

const std::vector<std::pair<std::string, Builder>>& registry() {
  static const std::vector<std::pair<std::string, Builder>> entries = {
      {"uniform",
       [](const Topology& t, const PatternOptions& o) -> std::unique_ptr<TrafficPattern> {
         if (o.exclude_self && t.num_nodes() < 2)
           throw InputError("--exclude-self: a single node has no other node to send to");
         return std::make_unique<Uniform>(t.num_nodes(), o.exclude_self);
       }},
      {"transpose",
       [](const Topology& t, const PatternOptions&) -> std::unique_ptr<TrafficPattern> {
         if (t.is_mesh()) {
           if (t.rows() != t.cols())
             throw InputError("--pattern transpose: needs a square mesh, not " +
                              std::to_string(t.rows()) + "x" + std::to_string(t.cols()));
           std::vector<int> map(t.num_nodes());
           for (int s = 0; s < t.num_nodes(); ++s) map[s] = t.x(s) * t.cols() + t.y(s);
           return std::make_unique<Permutation>(std::move(map));
         }
         return bit_pattern(t, "transpose", [](int s, int bits) {
           const int h = bits / 2;
           return (s >> h) | (s << (bits - h));
         });
       }},
      {"bitcomp",
       [](const Topology& t, const PatternOptions&) {
         return bit_pattern(t, "bitcomp", [](int s, int) { return ~s; });
       }},
      {"bitrev",
       [](const Topology& t, const PatternOptions&) {
         return bit_pattern(t, "bitrev", [](int s, int bits) {
           int d = 0;
           for (int b = 0; b < bits; ++b)
             if (s & (1 << b)) d |= 1 << (bits - 1 - b);
           return d;
         });
       }},
      {"shuffle",
       [](const Topology& t, const PatternOptions&) {
         return bit_pattern(t, "shuffle", [](int s, int bits) { return (s << 1) | (s >> (bits - 1)); });
       }},
      {"tornado",
       [](const Topology& t, const PatternOptions&) {
         return offset_pattern(t, [](int k) { return (k + 1) / 2 - 1; });
       }},
      {"neighbor", [](const Topology& t,
                      const PatternOptions&) { return offset_pattern(t, [](int) { return 1; }); }},
      {"hotspot",
       [](const Topology& t, const PatternOptions& o) -> std::unique_ptr<TrafficPattern> {
         const int node = hotspot_node(t, o);
         if (node >= t.num_nodes())
           throw InputError("--hotspot-node " + std::to_string(node) + ": no such node (" +
                            std::to_string(t.num_nodes()) + " nodes)");
         if (o.hotspot_fraction < 0 || o.hotspot_fraction > 1)
           throw InputError("--hotspot-fraction: must be in [0, 1]");
         return std::make_unique<Hotspot>(t.num_nodes(), node, o.hotspot_fraction);
       }},
  };
  return entries;
}

}  // namespace

int hotspot_node(const Topology& t, const PatternOptions& o) {
  if (o.hotspot_node >= 0) return o.hotspot_node;
  return t.is_mesh() ? (t.rows() / 2) * t.cols() + t.cols() / 2 : 0;
}

std::vector<std::string> pattern_names() {
  std::vector<std::string> names;
  for (const auto& e : registry()) names.push_back(e.first);
  return names;
}

std::unique_ptr<TrafficPattern> make_pattern(const std::string& name, const Topology& topo,
                                             const PatternOptions& options) {
  for (const auto& [n, build] : registry())
    if (n == name) return build(topo, options);
  throw InputError("--pattern: " + unknown_name_message("traffic pattern", name, pattern_names()));
}

}  // namespace nocflow::noc
