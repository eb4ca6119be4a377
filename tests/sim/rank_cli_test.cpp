// SPDX-License-Identifier: MIT
// `nocflow validate --rank` end to end on a small network: files, rows, τ as recomputed from
// rank.csv; --rank without --network is an input error.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <sstream>

#include "tests/cli_runner.h"

namespace nocflow::testing {
namespace {

namespace fs = std::filesystem;
const std::string kHw = "--hw " + std::string(NOCFLOW_SOURCE_DIR) + "/configs/hw/mesh4x4.yaml";

/// τ-b counted pair by pair, independently of the library's implementation.
double tau_b(const std::vector<double>& x, const std::vector<double>& y) {
  double concordant = 0, discordant = 0, tied_x = 0, tied_y = 0, pairs = 0;
  for (std::size_t i = 0; i < x.size(); ++i)
    for (std::size_t j = 0; j < i; ++j) {
      ++pairs;
      if (x[i] == x[j]) ++tied_x;
      if (y[i] == y[j]) ++tied_y;
      if (x[i] != x[j] && y[i] != y[j]) ((x[i] < x[j]) == (y[i] < y[j]) ? concordant : discordant) += 1;
    }
  return (concordant - discordant) / std::sqrt((pairs - tied_x) * (pairs - tied_y));
}

TEST(RankCli, RankWithoutNetworkIsAnInputError) {
  const fs::path dir = fresh_dir("rank_bad");
  const CliRun r = run_nocflow("validate " + kHw + " --rank --out " + (dir / "o").string());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--network"), std::string::npos) << r.output;
  const CliRun m = run_nocflow("validate " + kHw + " --rank --network zoo:vgg5 --mode fast --out " + (dir / "o").string());
  EXPECT_EQ(m.exit_code, 2) << m.output;
  EXPECT_FALSE(fs::exists(dir / "o"));
}

TEST(RankCli, Vgg5ThreeBestPlansPerModel) {
  const fs::path dir = fresh_dir("rank_vgg5");
  const CliRun r = run_nocflow("validate " + kHw + " --rank --network zoo:vgg5 --k 3 --out " + (dir / "o").string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto plans = read_csv_rows(dir / "o" / "rank.csv");
  const auto summary = read_csv_rows(dir / "o" / "rank_summary.csv");
  ASSERT_EQ(summary.size(), 2u);
  std::map<std::string, std::string> simulated_of_plan;  // plan_id → simulated cycles
  for (const auto& s : summary) {
    for (const std::string set : {"kbest", "strategy"}) {
      std::vector<double> predicted, simulated;
      for (const auto& p : plans) {
        if (p.at("model") != s.at("model") || p.at("set") != set) continue;
        EXPECT_EQ(std::stoi(p.at("k")), static_cast<int>(predicted.size()));
        predicted.push_back(std::stod(p.at("predicted_cycles")));
        simulated.push_back(std::stod(p.at("simulated_cycles")));
        EXPECT_GT(simulated.back(), 0);
        if (set == "kbest" && predicted.size() > 1) {
          EXPECT_LE(predicted[predicted.size() - 2], predicted.back());  // k ascending
        }
        // A plan found twice was replayed once: the same simulated cycles.
        auto [it, added] = simulated_of_plan.emplace(p.at("plan_id"), p.at("simulated_cycles"));
        EXPECT_EQ(it->second, p.at("simulated_cycles"));
      }
      const std::string tau_column = set == "kbest" ? "kendall_tau" : "strategy_kendall_tau";
      const double tau = std::stod(s.at(tau_column));
      EXPECT_GE(tau, -1);
      EXPECT_LE(tau, 1);
      EXPECT_NEAR(tau, tau_b(predicted, simulated), 1e-12) << s.at("model") << " " << set;
      if (set == "kbest") {
        ASSERT_EQ(predicted.size(), 3u) << s.at("model");
        EXPECT_EQ(std::stoi(s.at("plans")), 3);
      } else {
        // The unconstrained strategy is the model's optimum, so its cheapest strategy plan is
        // its first k-best plan; the strategies give more than one plan.
        EXPECT_GE(predicted.size(), 2u) << s.at("model");
        EXPECT_EQ(std::stoi(s.at("strategy_plans")), static_cast<int>(predicted.size()));
      }
    }
    EXPECT_GE(std::stod(s.at("regret_pct")), 0);
  }
  EXPECT_TRUE(fs::exists(dir / "o" / "config.resolved.yaml"));
  // Every distinct plan is written, ready for `nocflow simulate --plan`.
  for (const auto& [id, cycles] : simulated_of_plan)
    EXPECT_TRUE(fs::exists(dir / "o" / "plans" / ("plan_" + id + ".yaml"))) << id;
  EXPECT_FALSE(fs::exists(dir / "o" / "plans" / ("plan_" + std::to_string(simulated_of_plan.size()) + ".yaml")));
  EXPECT_NE(r.output.find("tau-b"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace nocflow::testing
