// SPDX-License-Identifier: MIT
#include "optimizer/cost/round_robin_fluid.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <deque>
#include <limits>
#include <numeric>
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

/// An active message at an output: its hop there, the port it arrives by, the message.
struct Crossing {
  std::size_t hop;
  int port, message;
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
  // Each message's outputs in route order (their levels rise along it), then its end (output
  // -1), flat.
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
    hops.push_back({-1, -1, -1});
  }
  const std::size_t n = source.size();
  first_hop.push_back(hops.size());
  if (n == 0) return 0;

  // Each output's active messages, flat, with room for every hop that takes the output; a
  // hop's place in its output's list (removed by swapping the last into it).
  const auto outputs = static_cast<std::size_t>(kKinds * pes);
  std::vector<int> level(outputs, -1);
  std::vector<std::size_t> room(outputs + 1, 0);
  for (const Hop& h : hops)
    if (h.output >= 0) {
      level[static_cast<std::size_t>(h.output)] = h.level;
      ++room[static_cast<std::size_t>(h.output) + 1];
    }
  std::partial_sum(room.begin(), room.end(), room.begin());
  std::vector<Crossing> crossing(room.back());
  std::vector<std::size_t> crossings(outputs, 0);
  std::vector<std::size_t> slot(hops.size());
  // The outputs whose shares may have changed since the last event, by level. A message's rate
  // falls output by output down its route, so an output whose messages, and the rates they
  // arrive at it by, are as at the last event gives the same shares (to the bit); only the
  // rates it changes go on downstream. Most events end one message: a few dozen outputs of
  // hundreds change.
  std::vector<std::vector<int>> dirty(static_cast<std::size_t>(cols + rows + 1));
  std::vector<char> is_dirty(outputs, 0);
  auto touch = [&](int o) {
    if (is_dirty[static_cast<std::size_t>(o)]) return;
    is_dirty[static_cast<std::size_t>(o)] = 1;
    dirty[static_cast<std::size_t>(level[static_cast<std::size_t>(o)])].push_back(o);
  };
  auto enter = [&](std::size_t i) {
    for (std::size_t h = first_hop[i]; h + 1 < first_hop[i + 1]; ++h) {
      const auto o = static_cast<std::size_t>(hops[h].output);
      slot[h] = room[o] + crossings[o]++;
      crossing[slot[h]] = {h, hops[h].port, static_cast<int>(i)};
      touch(hops[h].output);
    }
  };
  auto leave = [&](std::size_t i) {
    for (std::size_t h = first_hop[i]; h + 1 < first_hop[i + 1]; ++h) {
      const auto o = static_cast<std::size_t>(hops[h].output);
      const Crossing last = crossing[room[o] + --crossings[o]];
      slot[last.hop] = slot[h];
      crossing[slot[h]] = last;
      touch(hops[h].output);
    }
  };

  // The window: each source's first `channels` messages, then the next as one ends.
  std::vector<std::deque<std::size_t>> waiting(static_cast<std::size_t>(pes));
  for (std::size_t i = 0; i < n; ++i) waiting[static_cast<std::size_t>(source[i])].push_back(i);
  std::vector<std::size_t> active;
  std::vector<std::vector<std::size_t>> in_flight(static_cast<std::size_t>(pes));  // by source
  auto start_next = [&](int pe) {
    auto& queue = waiting[static_cast<std::size_t>(pe)];
    if (queue.empty()) return;
    const std::size_t i = queue.front();
    queue.pop_front();
    active.push_back(i);
    in_flight[static_cast<std::size_t>(pe)].push_back(i);
    enter(i);
  };
  std::vector<int> freed;  // the sources whose messages in flight changed, and so their split
  for (int pe = 0; pe < pes; ++pe) {
    for (int c = 0; c < channels; ++c) start_next(pe);
    freed.push_back(pe);
  }

  // Per hop, the rate its message arrives at its output by; at a message's end, its rate, kept
  // by message too (with its inverse) for the scans of every active message below.
  std::vector<double> rate(hops.size(), 0);
  std::vector<double> end_rate(n, 0);
  std::vector<double> inverse(n, std::numeric_limits<double>::infinity());
  double t = 0;
  while (!active.empty()) {
    for (int pe : freed) {  // a source's split changes only as its messages end and start
      const auto& flying = in_flight[static_cast<std::size_t>(pe)];
      const double r = 1.0 / static_cast<double>(flying.size());
      for (std::size_t i : flying) {
        if (rate[first_hop[i]] == r) continue;
        rate[first_hop[i]] = r;
        touch(hops[first_hop[i]].output);
      }
    }
    for (auto& outs : dirty) {  // a level's outputs touch only higher levels'
      for (const int out : outs) {
        const auto o = static_cast<std::size_t>(out);
        is_dirty[o] = 0;
        const Crossing* c = &crossing[room[o]];
        const Crossing* c_end = c + crossings[o];
        // Each port's sum in the crossings' order, in registers (indexed by port, the sums
        // stay in memory and chain stores to loads); adding 0 leaves a sum as it is.
        PortShares demand{};
        for (const Crossing* x = c; x != c_end; ++x) {
          const double r = rate[x->hop];
          for (int p = 0; p < kPorts; ++p) demand[p] += x->port == p ? r : 0.0;
        }
        const PortShares scale = share_output(demand);
        for (const Crossing* x = c; x != c_end; ++x) {
          const double r = rate[x->hop] * scale[static_cast<std::size_t>(x->port)];
          if (rate[x->hop + 1] == r) continue;
          rate[x->hop + 1] = r;
          if (hops[x->hop + 1].output >= 0) {
            touch(hops[x->hop + 1].output);
          } else {
            end_rate[static_cast<std::size_t>(x->message)] = r;
            inverse[static_cast<std::size_t>(x->message)] = 1 / r;
          }
        }
      }
      outs.clear();
    }
    // To the next message's end; those within a millionth of theirs end with it. The divisions
    // were the slow part: a message whose end, guessed with its rate's inverse (a few ulps
    // off), is well after a guess already divided cannot end first, and is not divided.
    double dt = std::numeric_limits<double>::infinity(), first = dt, cutoff = dt;
    for (std::size_t i : active) {
      const double guess = left[i] * inverse[i];
      if (guess > cutoff) continue;
      if (guess < first) {
        first = guess;
        cutoff = guess * (1 + 1e-12);
      }
      dt = std::min(dt, left[i] / end_rate[i]);
    }
    t += dt;
    freed.clear();
    std::size_t kept = 0;
    for (std::size_t i : active) {
      const double before = left[i];
      left[i] -= end_rate[i] * dt;
      if (left[i] <= 1e-6 * std::max(1.0, before)) {
        auto& flying = in_flight[static_cast<std::size_t>(source[i])];
        *std::find(flying.begin(), flying.end(), i) = flying.back();
        flying.pop_back();
        freed.push_back(source[i]);
        leave(i);
      } else {
        active[kept++] = i;
      }
    }
    active.resize(kept);
    for (int pe : freed) start_next(pe);
  }
  return t;
}

}  // namespace nocflow::optimizer
