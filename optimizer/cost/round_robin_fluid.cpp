// SPDX-License-Identifier: MIT
#include "optimizer/cost/round_robin_fluid.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <deque>
#include <limits>
#include <stdexcept>
#include <string>

namespace nocflow::optimizer {
namespace {

/// An output of a router: a link leaving it in one direction, or the ejection to its PE. A
/// message arrives at an output by the local input (port 0) or by the link of kind k (port
/// 1 + k).
enum class Kind { XPlus, XMinus, YPlus, YMinus, Eject };
constexpr int kKinds = 5;
constexpr int kPorts = 5;
using PortShares = std::array<double, kPorts>;

/// One output a message takes, and the input port it arrives at it by.
struct Hop {
  int level;  ///< the output's place in the order of xy's channel dependencies
  int output;
  int port;
};

/// An active message at an output.
struct Crossing {
  std::size_t message;
  int port;
  std::size_t hop;
};

/// Max-min shares of one flit per cycle among the ports' demands: each port's share over its
/// demand (at most 1; 1 where it demands nothing).
PortShares share_output(const PortShares& demand) {
  PortShares scale;
  scale.fill(1);
  std::array<bool, kPorts> open{};
  int left = 0;
  for (int p = 0; p < kPorts; ++p) left += open[p] = demand[p] > 0;
  double cap = 1;
  while (left > 0) {
    const double fair = cap / left;
    bool small = false;  // some port takes less than a fair share: the rest share what is left
    for (int p = 0; p < kPorts; ++p)
      if (open[p] && demand[p] <= fair) {
        cap -= demand[p];
        open[p] = false;
        --left;
        small = true;
      }
    if (small) continue;
    for (int p = 0; p < kPorts; ++p)
      if (open[p]) scale[p] = fair / demand[p];
    break;
  }
  return scale;
}

}  // namespace

double round_robin_fluid_cycles(const std::vector<FluidMessage>& messages, int rows, int cols,
                                int channels) {
  if (rows < 1 || cols < 1 || channels < 1)
    throw std::invalid_argument("round_robin_fluid_cycles: a " + std::to_string(rows) + "x" +
                                std::to_string(cols) + " mesh, " + std::to_string(channels) +
                                " channels");
  const int pes = rows * cols;
  const auto output_of = [&](Kind kind, int x, int y) {
    return (static_cast<int>(kind) * rows + y) * cols + x;
  };
  const auto level_of = [&](Kind kind, int x, int y) {
    const int by_kind[kKinds] = {x, cols - 1 - x, cols + y, cols + rows - 1 - y, cols + rows};
    return by_kind[static_cast<int>(kind)];
  };
  // Each message's outputs in route order (their levels rise along it), flat.
  std::vector<Hop> hops;
  std::vector<std::size_t> first_hop;
  std::vector<int> source;
  std::vector<double> left;  // flits still to deliver
  for (const FluidMessage& m : messages) {
    if (m.src < 0 || m.src >= pes || m.dst < 0 || m.dst >= pes)
      throw std::invalid_argument("round_robin_fluid_cycles: a message from PE " +
                                  std::to_string(m.src) + " to " + std::to_string(m.dst) + " on " +
                                  std::to_string(pes) + " PEs");
    if (m.src == m.dst) continue;
    first_hop.push_back(hops.size());
    source.push_back(m.src);
    left.push_back(static_cast<double>(std::max<std::int64_t>(1, m.flits)));
    int x = m.src % cols, y = m.src / cols, port = 0;
    const int dx = m.dst % cols, dy = m.dst / cols;
    auto take = [&](Kind kind) {
      hops.push_back({level_of(kind, x, y), output_of(kind, x, y), port});
      port = 1 + static_cast<int>(kind);
    };
    for (; x != dx; x += dx > x ? 1 : -1) take(dx > x ? Kind::XPlus : Kind::XMinus);
    for (; y != dy; y += dy > y ? 1 : -1) take(dy > y ? Kind::YPlus : Kind::YMinus);
    take(Kind::Eject);
  }
  const std::size_t n = source.size();
  first_hop.push_back(hops.size());
  if (n == 0) return 0;

  // The outputs any message takes, in level order: each event's rates are taken down them.
  const auto outputs = static_cast<std::size_t>(kKinds * pes);
  std::vector<int> order;
  {
    std::vector<int> level(outputs, -1);
    for (const Hop& h : hops) level[static_cast<std::size_t>(h.output)] = h.level;
    for (std::size_t o = 0; o < outputs; ++o)
      if (level[o] >= 0) order.push_back(static_cast<int>(o));
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
      return level[static_cast<std::size_t>(a)] < level[static_cast<std::size_t>(b)];
    });
  }
  // Each output's active messages; a hop's place in its output's list (removed by swapping
  // the last into it).
  std::vector<std::vector<Crossing>> crossing(outputs);
  std::vector<std::size_t> slot(hops.size());
  auto enter = [&](std::size_t i) {
    for (std::size_t h = first_hop[i]; h < first_hop[i + 1]; ++h) {
      auto& c = crossing[static_cast<std::size_t>(hops[h].output)];
      slot[h] = c.size();
      c.push_back({i, hops[h].port, h});
    }
  };
  auto leave = [&](std::size_t i) {
    for (std::size_t h = first_hop[i]; h < first_hop[i + 1]; ++h) {
      auto& c = crossing[static_cast<std::size_t>(hops[h].output)];
      slot[c.back().hop] = slot[h];
      c[slot[h]] = c.back();
      c.pop_back();
    }
  };

  // The window: each source's first `channels` messages, then the next as one ends.
  std::vector<std::deque<std::size_t>> waiting(static_cast<std::size_t>(pes));
  for (std::size_t i = 0; i < n; ++i) waiting[static_cast<std::size_t>(source[i])].push_back(i);
  std::vector<std::size_t> active;
  std::vector<int> in_flight(static_cast<std::size_t>(pes), 0);
  auto start_next = [&](int pe) {
    auto& queue = waiting[static_cast<std::size_t>(pe)];
    if (queue.empty()) return;
    const std::size_t i = queue.front();
    queue.pop_front();
    active.push_back(i);
    ++in_flight[static_cast<std::size_t>(pe)];
    enter(i);
  };
  for (int pe = 0; pe < pes; ++pe)
    for (int c = 0; c < channels; ++c) start_next(pe);

  std::vector<double> rate(n, 0);
  std::vector<std::size_t> still;
  std::vector<int> freed;
  double t = 0;
  while (!active.empty()) {
    for (std::size_t i : active) rate[i] = 1.0 / in_flight[static_cast<std::size_t>(source[i])];
    for (int o : order) {
      const auto& c = crossing[static_cast<std::size_t>(o)];
      if (c.empty()) continue;
      PortShares demand{};
      for (const Crossing& x : c) demand[static_cast<std::size_t>(x.port)] += rate[x.message];
      const PortShares scale = share_output(demand);
      for (const Crossing& x : c) rate[x.message] *= scale[static_cast<std::size_t>(x.port)];
    }
    // To the next message's end; those within a millionth of theirs end with it.
    double dt = std::numeric_limits<double>::infinity();
    for (std::size_t i : active) dt = std::min(dt, left[i] / rate[i]);
    t += dt;
    still.clear();
    freed.clear();
    for (std::size_t i : active) {
      const double before = left[i];
      left[i] -= rate[i] * dt;
      if (left[i] <= 1e-6 * std::max(1.0, before)) {
        --in_flight[static_cast<std::size_t>(source[i])];
        freed.push_back(source[i]);
        leave(i);
      } else {
        still.push_back(i);
      }
    }
    active.swap(still);
    for (int pe : freed) start_next(pe);
  }
  return t;
}

}  // namespace nocflow::optimizer
