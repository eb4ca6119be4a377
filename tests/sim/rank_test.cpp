// SPDX-License-Identifier: MIT
// Plan ranking (sim/validate/rank.h): Kendall τ-b on hand-computed cases, ties included; a
// plan found twice is replayed once.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "sim/config/hw_loader.h"
#include "sim/validate/rank.h"

namespace nocflow::sim {
namespace {

TEST(KendallTau, AgreementReversalAndOneSwap) {
  EXPECT_DOUBLE_EQ(kendall_tau_b({1, 2, 3, 4}, {10, 20, 30, 40}), 1);
  EXPECT_DOUBLE_EQ(kendall_tau_b({1, 2, 3, 4}, {4, 3, 2, 1}), -1);
  // Pairs (1,2) and (1,3) agree, (2,3) swaps: (2 − 1) / 3.
  EXPECT_DOUBLE_EQ(kendall_tau_b({1, 2, 3}, {1, 3, 2}), 1.0 / 3);
}

TEST(KendallTau, TiesCountInNeitherAndShrinkTheDenominator) {
  // x ties one pair, which counts neither way: 5 concordant of 6 pairs, √((6 − 1)(6 − 0)).
  EXPECT_NEAR(kendall_tau_b({1, 2, 2, 3}, {1, 2, 3, 4}), 5 / std::sqrt(30.0), 1e-15);
  // One pair tied in both, one more tied in y only: 4 concordant, √((6 − 1)(6 − 2)).
  EXPECT_NEAR(kendall_tau_b({1, 1, 2, 3}, {1, 1, 2, 2}), 4 / std::sqrt(20.0), 1e-15);
  // 5 concordant, 4 discordant, one pair tied in y: 1 / √(10 · 9).
  EXPECT_NEAR(kendall_tau_b({1, 2, 3, 4, 5}, {3, 3, 1, 2, 5}), 1 / std::sqrt(90.0), 1e-15);
  // Symmetric: swapping the samples swaps the tie counts.
  EXPECT_NEAR(kendall_tau_b({3, 3, 1, 2, 5}, {1, 2, 3, 4, 5}), 1 / std::sqrt(90.0), 1e-15);
}

TEST(KendallTau, UndefinedWithoutPairsOrWithAllTied) {
  EXPECT_TRUE(std::isnan(kendall_tau_b({}, {})));
  EXPECT_TRUE(std::isnan(kendall_tau_b({1}, {2})));
  EXPECT_TRUE(std::isnan(kendall_tau_b({5, 5, 5}, {1, 2, 3})));
}

TEST(RankPlans, APlanFoundTwiceIsReplayedOnce) {
  const HwSpec hw = load_hw_config(std::string(NOCFLOW_SOURCE_DIR) + "/configs/hw/mesh4x4.yaml", {});
  RankOptions o;
  o.network = "zoo:vgg5";
  o.k = 2;
  o.models = {"linkload", "linkload"};  // the second finds exactly the first one's plans
  o.strategies = false;
  std::ostringstream progress;
  const RankReport r = rank_plans(hw, o, progress);
  EXPECT_EQ(r.replays, 2);
  ASSERT_EQ(r.plans.size(), 4u);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(r.plans[2 + i].plan_id, r.plans[i].plan_id);
    EXPECT_EQ(r.plans[2 + i].simulated_cycles, r.plans[i].simulated_cycles);
  }
  EXPECT_NE(progress.str().find("[2/2]"), std::string::npos) << progress.str();
  EXPECT_EQ(progress.str().find("[3/"), std::string::npos) << progress.str();
  ASSERT_EQ(r.models.size(), 2u);
  EXPECT_EQ(r.models[0].regret_pct, r.models[1].regret_pct);
}

}  // namespace
}  // namespace nocflow::sim
