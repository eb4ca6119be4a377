// SPDX-License-Identifier: MIT
#include "optimizer/cost/round_robin_fluid.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <deque>
#include <limits>

namespace nocflow::optimizer {
namespace {

constexpr int kPorts = 5;  // an output's inputs: local, then arrived by an x+, x-, y+ or y- link
enum Kind { kXPlus, kXMinus, kYPlus, kYMinus, kEject };

/// One output a message takes, and the input port it arrives at it by.
struct Hop {
  int level;  ///< the output's place in the order of xy's channel dependencies
  int output;
  int port;
};

/// Max-min shares of one flit per cycle among the ports' demands; each port's share over its
/// demand (at most 1) into `scale`.
void share_output(const std::array<double, kPorts>& demand, double* scale) {
  std::array<bool, kPorts> open{};
  int left = 0;
  for (int p = 0; p < kPorts; ++p) left += open[p] = demand[p] > 0;
  double cap = 1;
  while (left > 0) {
    const double fair = cap / left;
    bool small = false;
    for (int p = 0; p < kPorts; ++p)
      if (open[p] && demand[p] <= fair) {
        scale[p] = 1;
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
}

}  // namespace

double round_robin_fluid_cycles(const std::vector<FluidMessage>& messages, int rows, int cols,
                                int channels) {
  const auto output_of = [&](int kind, int x, int y) { return (kind * rows + y) * cols + x; };
  const auto level_of = [&](int kind, int x, int y) {
    const int by_kind[] = {x, cols - 1 - x, cols + y, cols + rows - 1 - y, cols + rows};
    return by_kind[kind];
  };
  // Each message's outputs in route order (their levels rise along it), flat.
  std::vector<Hop> hops;
  std::vector<std::size_t> first_hop;
  std::vector<int> source;
  std::vector<double> left;  // flits still to deliver
  for (const FluidMessage& m : messages) {
    if (m.src == m.dst) continue;
    first_hop.push_back(hops.size());
    source.push_back(m.src);
    left.push_back(static_cast<double>(std::max<std::int64_t>(1, m.flits)));
    int x = m.src % cols, y = m.src / cols, port = 0;
    const int dx = m.dst % cols, dy = m.dst / cols;
    auto take = [&](int kind) {
      hops.push_back({level_of(kind, x, y), output_of(kind, x, y), port});
      port = 1 + kind;
    };
    for (; x != dx; x += dx > x ? 1 : -1) take(dx > x ? kXPlus : kXMinus);
    for (; y != dy; y += dy > y ? 1 : -1) take(dy > y ? kYPlus : kYMinus);
    take(kEject);
  }
  const std::size_t n = source.size();
  first_hop.push_back(hops.size());
  if (n == 0) return 0;

  // The window: each source's first `channels` messages, then the next as one ends.
  const int pes = rows * cols;
  std::vector<std::deque<std::size_t>> waiting(static_cast<std::size_t>(pes));
  for (std::size_t i = 0; i < n; ++i) waiting[static_cast<std::size_t>(source[i])].push_back(i);
  std::vector<std::size_t> active;
  std::vector<int> in_flight(static_cast<std::size_t>(pes), 0);
  auto start_next = [&](int pe) {  // whether one started (the last of `active`)
    auto& queue = waiting[static_cast<std::size_t>(pe)];
    if (queue.empty()) return false;
    active.push_back(queue.front());
    queue.pop_front();
    ++in_flight[static_cast<std::size_t>(pe)];
    return true;
  };
  for (int pe = 0; pe < pes; ++pe)
    for (int c = 0; c < channels; ++c) start_next(pe);

  // Each output's active hops (message, input port), the outputs in level order: the rates
  // are taken down the outputs in that order, each message scaled at each of its outputs.
  const std::size_t outputs = static_cast<std::size_t>(kPorts * pes);
  std::vector<std::vector<std::pair<std::size_t, int>>> crossing(outputs);
  std::vector<std::size_t> slot(hops.size());  // a hop's place in crossing[its output]
  std::vector<int> order;                      // outputs any message takes, by level
  {
    std::vector<int> level(outputs, -1);
    for (const Hop& h : hops) level[static_cast<std::size_t>(h.output)] = h.level;
    for (std::size_t o = 0; o < outputs; ++o)
      if (level[o] >= 0) order.push_back(static_cast<int>(o));
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
      return level[static_cast<std::size_t>(a)] < level[static_cast<std::size_t>(b)];
    });
  }
  auto enter = [&](std::size_t i) {
    for (std::size_t h = first_hop[i]; h < first_hop[i + 1]; ++h) {
      auto& c = crossing[static_cast<std::size_t>(hops[h].output)];
      slot[h] = c.size();
      c.push_back({h, hops[h].port});
    }
  };
  auto leave = [&](std::size_t i) {
    for (std::size_t h = first_hop[i]; h < first_hop[i + 1]; ++h) {
      auto& c = crossing[static_cast<std::size_t>(hops[h].output)];
      slot[c.back().first] = slot[h];
      c[slot[h]] = c.back();
      c.pop_back();
    }
  };
  std::vector<std::size_t> owner(hops.size());  // a hop's message
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t h = first_hop[i]; h < first_hop[i + 1]; ++h) owner[h] = i;
  for (std::size_t i : active) enter(i);

  std::vector<double> rate(n, 0);
  double t = 0;
  while (!active.empty()) {
    for (std::size_t i : active) rate[i] = 1.0 / in_flight[static_cast<std::size_t>(source[i])];
    for (int o : order) {
      const auto& c = crossing[static_cast<std::size_t>(o)];
      if (c.empty()) continue;
      std::array<double, kPorts> demand{}, scale{};
      for (const auto& [h, port] : c) demand[static_cast<std::size_t>(port)] += rate[owner[h]];
      share_output(demand, scale.data());
      for (const auto& [h, port] : c) rate[owner[h]] *= scale[static_cast<std::size_t>(port)];
    }
    double dt = std::numeric_limits<double>::infinity();
    for (std::size_t i : active) dt = std::min(dt, left[i] / rate[i]);
    t += dt;
    std::vector<std::size_t> still;
    still.reserve(active.size());
    std::vector<int> freed;
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
    active = std::move(still);
    for (int pe : freed)
      if (start_next(pe)) enter(active.back());
  }
  return t;
}

}  // namespace nocflow::optimizer
