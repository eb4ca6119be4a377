// SPDX-License-Identifier: MIT
// Zero-load latency: T0 = (stages + link) * R + 2 + (L - 1) for a packet crossing R routers,
// checked packet by packet and on average against BookSim's formula.
#include <gtest/gtest.h>

#include "tests/noc/noc_test_util.h"

namespace nocflow::noc {
namespace {

using testing::booksim_spec;

/// Records each delivered packet's latency next to its path length.
struct Recorder : DeliveryListener {
  const Topology* topo = nullptr;
  std::vector<std::pair<int, Cycle>> seen;  // (routers on path, latency)
  void delivered(const Packet& p, Cycle now) override {
    EXPECT_EQ(p.routers, topo->routers_on_path(p.src, p.dest));
    seen.push_back({p.routers, now - p.created});
  }
};

Cycle single_packet_latency(const NocSpec& spec, int src, int dst, int flits) {
  Network net(spec);
  Recorder rec;
  rec.topo = &net.topology();
  net.set_listener(&rec);
  net.send(src, {dst, flits, 0});
  net.drain();
  net.verify_drained();
  EXPECT_EQ(rec.seen.size(), 1u);
  return rec.seen.empty() ? -1 : rec.seen[0].second;
}

class ZeroLoad : public ::testing::TestWithParam<int> {};

TEST_P(ZeroLoad, EveryPathMatchesTheFormula) {
  const int k = GetParam();
  const NocSpec spec = booksim_spec(k, k);
  const Topology topo = Topology::build(spec.topology);
  for (int flits : {1, 4, 8}) {
    for (int src : {0, k * k - 1, k / 2}) {
      for (int dst = 0; dst < k * k; dst += (k > 8 ? 7 : 1)) {
        const int r = topo.routers_on_path(src, dst);
        const Cycle expected = 5 * r + 2 + (flits - 1) + (flits > spec.router.buffer_depth ? 1 : 0);
        EXPECT_EQ(single_packet_latency(spec, src, dst, flits), expected)
            << "k=" << k << " " << src << "->" << dst << " L=" << flits;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Meshes, ZeroLoad, ::testing::Values(4, 8, 16));

TEST(ZeroLoadTest, LowLoadAverageMatchesBookSimReference) {
  // BookSim2 at 0.005 flits/node/cycle: 32.98 (L=1), 41.43 (L=8); ours within 0.5 cycles.
  for (auto [flits, reference] : {std::pair{1, 32.98}, std::pair{8, 41.43}}) {
    Network net(booksim_spec(8, 8));
    TrafficOptions o;
    o.rate = 0.005;
    o.packet_flits = flits;
    o.sample_period = 10000;
    const TrafficResult r = testing::run_plain(net, o);
    EXPECT_TRUE(r.stable);
    EXPECT_NEAR(r.avg_packet_latency, reference, 0.5) << "L=" << flits;
    // and the formula with the measured mean hop count
    EXPECT_NEAR(r.avg_packet_latency, 5 * r.avg_hops + 2 + (flits - 1) + (flits > 4), 0.3);
  }
}

TEST(ZeroLoadTest, CrossbarIsOneRouter) {
  // Documented crossbar formula: T0 = 5 + 2 + (L - 1) for every pair, self included.
  const NocSpec spec = testing::crossbar_spec(16);
  for (int flits : {1, 3, 8})
    for (int dst : {0, 5, 15})
      EXPECT_EQ(single_packet_latency(spec, 3, dst, flits), 7 + (flits - 1) + (flits > 4 ? 1 : 0));
}

}  // namespace
}  // namespace nocflow::noc
