// SPDX-License-Identifier: MIT
// The round-robin fluid run (optimizer/cost/round_robin_fluid.h): flows that do not meet take
// their own flits; an output shared by its input ports, not by its flows; the NI's window; the
// same figures as a plain run that recomputes every output at every event.
#include "optimizer/cost/round_robin_fluid.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <random>
#include <stdexcept>
#include <vector>

namespace nocflow::optimizer {
namespace {

TEST(RoundRobinFluid, AMessageAloneTakesItsFlitsWhateverItsRoute) {
  EXPECT_DOUBLE_EQ(round_robin_fluid_cycles({{0, 15, 100}}, 4, 4, 8), 100);
  EXPECT_DOUBLE_EQ(round_robin_fluid_cycles({{5, 6, 7}}, 4, 4, 8), 7);
  // To itself a message leaves nothing to the network.
  EXPECT_DOUBLE_EQ(round_robin_fluid_cycles({{3, 3, 50}}, 4, 4, 8), 0);
  // Disjoint routes do not slow each other.
  EXPECT_DOUBLE_EQ(round_robin_fluid_cycles({{0, 1, 40}, {2, 3, 60}}, 1, 4, 8), 60);
}

TEST(RoundRobinFluid, AnInjectionOrEjectionChannelCarriesOneFlitPerCycle) {
  // One source, four destinations: its flit per cycle is split, in flight at once or not.
  const std::vector<FluidMessage> out{{5, 0, 30}, {5, 3, 30}, {5, 12, 30}, {5, 15, 30}};
  EXPECT_DOUBLE_EQ(round_robin_fluid_cycles(out, 4, 4, 8), 120);
  EXPECT_DOUBLE_EQ(round_robin_fluid_cycles(out, 4, 4, 1), 120);
  // Three sources into one PE, from three sides.
  EXPECT_NEAR(round_robin_fluid_cycles({{4, 5, 50}, {1, 5, 50}, {7, 5, 50}}, 4, 4, 8), 150, 1e-9);
}

TEST(RoundRobinFluid, AnOutputIsSharedByItsInputPortsNotItsFlows) {
  // 1 x 3 line: PE 0 sends 40 flits to PE 2, PE 1 sends 40 to PE 2 and 40 to PE 0. Router 1's
  // east output takes PE 0's flow (west port) and PE 1's (local port, half of PE 1's flit per
  // cycle): half each. PE 1's westward message runs at 1/2 alongside. All three end at 80.
  EXPECT_NEAR(round_robin_fluid_cycles({{0, 2, 40}, {1, 2, 40}, {1, 0, 40}}, 1, 3, 8), 80, 1e-9);
  // Two flows arrive by one port, one by another: the port of two gets half, not two thirds.
  // 1 x 4 line, PEs 0 and 1 send 60 flits each to PE 3 (by router 2's west port, a quarter of
  // its east output each) and PE 2 sends 60 to PE 3 (its local port: half), then, one message
  // at a time, 60 to PE 1. PE 2's first message ends at 120, its second at 180; PEs 0 and 1
  // have sent 30 each by 120 and share the output for the rest: 180. With a third each per
  // flow, PE 2's first message would end at 180 and its second at 240.
  const std::vector<FluidMessage> lot{{0, 3, 60}, {1, 3, 60}, {2, 3, 60}, {2, 1, 60}};
  EXPECT_NEAR(round_robin_fluid_cycles(lot, 1, 4, 1), 180, 1e-9);
}

TEST(RoundRobinFluid, TwoDimensionalRoutesTurnFromRowToColumn) {
  // All-to-all in ring order, message sizes varied, on a 4x4 and a 3x5 mesh: each message's
  // x hops, its turn onto a column (arriving by an x port) and its y hops; the figures are
  // scripts/linkload_offline.py's round_robin_fluid, an independent implementation.
  auto ring = [](int pes) {
    std::vector<FluidMessage> m;
    for (int s = 0; s < pes; ++s)
      for (int k = 1; k < pes; ++k) m.push_back({s, (s + k) % pes, 8 + (s * k) % 13});
    return m;
  };
  EXPECT_NEAR(round_robin_fluid_cycles(ring(16), 4, 4, 8), 277.50833067717593, 1e-6);
  EXPECT_NEAR(round_robin_fluid_cycles(ring(16), 4, 4, 2), 348.00729354842383, 1e-6);
  EXPECT_NEAR(round_robin_fluid_cycles(ring(15), 3, 5, 4), 297.80619387589206, 1e-6);
}

TEST(RoundRobinFluid, APeOffTheMeshOrNoChannelIsRefused) {
  EXPECT_THROW(round_robin_fluid_cycles({{0, 16, 1}}, 4, 4, 8), std::invalid_argument);
  EXPECT_THROW(round_robin_fluid_cycles({{-1, 3, 1}}, 4, 4, 8), std::invalid_argument);
  EXPECT_THROW(round_robin_fluid_cycles({{0, 3, 1}}, 4, 4, 0), std::invalid_argument);
}

TEST(RoundRobinFluid, FarFlowsFallBehindOnALine) {
  // 1 x 16 line, every PE sends 512 flits to every other, in ring order (PE i to i+1, i+2, ...,
  // as lowering sends an all-to-all): the busiest link carries 32,768 flits, yet round-robin
  // arbitration leaves it idle at the end while far sources catch up. The figures are those
  // of scripts/linkload_offline.py's round_robin_fluid, an independent implementation
  // (optimizer/README.md, "Router contention": simulated 50,411, 56,291 and 52,211 cycles).
  std::vector<FluidMessage> ring, ascending;
  for (int s = 0; s < 16; ++s)
    for (int k = 1; k < 16; ++k) ring.push_back({s, (s + k) % 16, 512});
  for (int s = 0; s < 16; ++s)
    for (int d = 0; d < 16; ++d)
      if (d != s) ascending.push_back({s, d, 512});
  EXPECT_NEAR(round_robin_fluid_cycles(ring, 1, 16, 8), 47830.5, 0.1);
  EXPECT_NEAR(round_robin_fluid_cycles(ascending, 1, 16, 8), 53880.1, 0.1);
  EXPECT_NEAR(round_robin_fluid_cycles(ring, 1, 16, 1), 53005.5, 0.1);
  EXPECT_GT(round_robin_fluid_cycles(ring, 1, 16, 8), 32768);
}

// The same arbitration run plainly: at every event every output is shared again, level by
// level, from every active message's source split. round_robin_fluid_cycles recomputes only
// the outputs whose inputs changed; its sums may run in another order, hence 1e-9.
double plain_fluid(const std::vector<FluidMessage>& messages, int rows, int cols, int channels) {
  struct Hop {
    int level, output, port;
  };
  std::vector<std::vector<Hop>> routes;
  std::vector<int> source;
  std::vector<double> left;
  for (const FluidMessage& m : messages) {
    if (m.src == m.dst) continue;
    std::vector<Hop>& route = routes.emplace_back();
    int x = m.src % cols, y = m.src / cols, port = 0;
    auto take = [&](int kind) {  // x+, x-, y+, y-, ejection
      const std::array<int, 5> level{x, cols - 1 - x, cols + y, cols + rows - 1 - y, cols + rows};
      route.push_back({level[kind], (kind * rows + y) * cols + x, port});
      port = 1 + kind;
    };
    for (; x != m.dst % cols; x += m.dst % cols > x ? 1 : -1) take(m.dst % cols > x ? 0 : 1);
    for (; y != m.dst / cols; y += m.dst / cols > y ? 1 : -1) take(m.dst / cols > y ? 2 : 3);
    take(4);
    source.push_back(m.src);
    left.push_back(static_cast<double>(std::max<std::int64_t>(1, m.flits)));
  }
  std::map<int, std::deque<std::size_t>> waiting;  // by source, in the order given
  for (std::size_t i = 0; i < routes.size(); ++i) waiting[source[i]].push_back(i);
  std::vector<std::size_t> active;
  auto start_next = [&](int pe) {
    if (waiting[pe].empty()) return;
    active.push_back(waiting[pe].front());
    waiting[pe].pop_front();
  };
  for (auto& [pe, queue] : waiting)
    for (int c = 0; c < channels; ++c) start_next(pe);
  double t = 0;
  while (!active.empty()) {
    std::map<int, int> flying;
    for (std::size_t i : active) ++flying[source[i]];
    std::vector<double> rate(routes.size(), 0);
    std::map<std::pair<int, int>, std::vector<std::pair<std::size_t, int>>> at;  // level, output
    for (std::size_t i : active) {
      rate[i] = 1.0 / flying[source[i]];
      for (const Hop& h : routes[i]) at[{h.level, h.output}].push_back({i, h.port});
    }
    for (const auto& [output, crossing] : at) {  // by level: a rate only falls downstream
      std::array<double, 5> demand{}, scale{1, 1, 1, 1, 1};
      for (const auto& [i, port] : crossing) demand[port] += rate[i];
      double cap = 1;
      std::array<bool, 5> open{};
      for (int p = 0; p < 5; ++p) open[p] = demand[p] > 0;
      for (bool small = true; small;) {  // max-min water-filling over the ports
        const auto ports = std::count(open.begin(), open.end(), true);
        if (ports == 0) break;
        small = false;
        for (int p = 0; p < 5; ++p)
          if (open[p] && demand[p] <= cap / ports) cap -= demand[p], open[p] = false, small = true;
        if (!small)
          for (int p = 0; p < 5; ++p)
            if (open[p]) scale[p] = cap / ports / demand[p];
      }
      for (const auto& [i, port] : crossing) rate[i] *= scale[port];
    }
    double dt = 1e300;
    for (std::size_t i : active) dt = std::min(dt, left[i] / rate[i]);
    t += dt;
    std::vector<std::size_t> still, ended;
    for (std::size_t i : active) {
      const double before = left[i];
      left[i] -= rate[i] * dt;
      (left[i] <= 1e-6 * std::max(1.0, before) ? ended : still).push_back(i);
    }
    active = still;
    for (std::size_t i : ended) start_next(source[i]);
  }
  return t;
}

TEST(RoundRobinFluid, GivesThePlainRunsFiguresOnRandomSends) {
  std::mt19937 random(76);
  for (int trial = 0; trial < 300; ++trial) {
    const int rows = 1 + static_cast<int>(random() % 6), cols = 1 + static_cast<int>(random() % 6);
    const int channels = 1 + static_cast<int>(random() % 9), pes = rows * cols;
    std::vector<FluidMessage> sends(random() % 60);
    for (FluidMessage& m : sends)  // some to themselves, tied and mixed lengths
      m = {static_cast<int>(random() % pes), static_cast<int>(random() % pes),
           static_cast<std::int64_t>(random() % 3 == 0 ? 32 : 1 + random() % 100)};
    const double expected = plain_fluid(sends, rows, cols, channels);
    EXPECT_NEAR(round_robin_fluid_cycles(sends, rows, cols, channels), expected, 1e-9 * expected)
        << "trial " << trial << ": " << rows << "x" << cols << ", " << channels << " channels";
  }
}

}  // namespace
}  // namespace nocflow::optimizer
