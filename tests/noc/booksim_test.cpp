// SPDX-License-Identifier: MIT
// A short version of scripts/compare_booksim.sh: the booksim preset against BookSim2's
// published figures (../shared/reference/booksim2.md), 8x8 mesh, uniform traffic.
#include <gtest/gtest.h>

#include "tests/noc/noc_test_util.h"

namespace nocflow::noc {
namespace {

struct Point {
  int flits;
  double rate;
  double booksim_latency;
};

class BookSimCurve : public ::testing::TestWithParam<Point> {};

TEST_P(BookSimCurve, PacketLatencyWithinFivePercent) {
  const Point p = GetParam();
  Network net(testing::booksim_spec(8, 8));
  TrafficOptions o;
  o.rate = p.rate;
  o.packet_flits = p.flits;
  const TrafficResult r = testing::run_plain(net, o);
  ASSERT_TRUE(r.stable);
  EXPECT_NEAR(r.avg_packet_latency, p.booksim_latency, 0.05 * p.booksim_latency);
  EXPECT_NEAR(r.accepted, p.rate, 0.02 * p.rate);
}

INSTANTIATE_TEST_SUITE_P(Reference, BookSimCurve,
                         ::testing::Values(Point{1, 0.10, 33.83}, Point{1, 0.35, 41.20},
                                           Point{8, 0.10, 44.55}, Point{8, 0.30, 65.97}));

TEST(BookSimSaturation, StableBelowAndUnstableAboveTheReferenceKnee) {
  // BookSim2: last stable 0.406 / first unstable 0.409 (L = 1); 0.366 / 0.369 (L = 8).
  for (auto [flits, below, above] : {std::tuple{1, 0.395, 0.42}, std::tuple{8, 0.355, 0.38}}) {
    for (auto [rate, stable] : {std::pair{below, true}, std::pair{above, false}}) {
      Network net(testing::booksim_spec(8, 8));
      TrafficOptions o;
      o.rate = rate;
      o.packet_flits = flits;
      EXPECT_EQ(testing::run_plain(net, o).stable, stable) << "L=" << flits << " rate " << rate;
    }
  }
}

}  // namespace
}  // namespace nocflow::noc
