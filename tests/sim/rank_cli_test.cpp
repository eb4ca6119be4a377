// SPDX-License-Identifier: MIT
// `nocflow validate --rank` end to end on a small network: files, rows, τ as recomputed from
// rank.csv; --rank without --network is an input error; --calibration calibrates the models;
// a plan ranked in barrier replay replays so under `simulate --plan`.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <nlohmann/json.hpp>
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
  // Options of the other job are refused, not ignored; so are out-of-range values.
  const std::pair<std::string, std::string> cases[] = {
      {"--rank", "--network"},
      {"--rank --network zoo:vgg5 --mode fast", "--mode: unknown mode 'fast'"},
      {"--rank --network zoo:vgg5 --meshes 4", "--meshes excludes --rank"},
      {"--k 3", "--k requires --rank"},
      {"--placements 2", "--placements requires --rank"},
      {"--rank --network zoo:vgg5 --placements 0", "--placements: must be at least 1"},
      {"--rank --network zoo:nope", "unknown zoo network 'nope'"},
      {"--cost-models linkload", "--cost-models requires --rank"},
      {"--rank --network zoo:vgg5 --cost-models exact", "unknown cost model 'exact'"},
      {"--rank --network zoo:vgg5 --cost-models linkload,linkload", "--cost-models: linkload is given twice"},
  };
  for (const auto& [args, message] : cases) {
    const CliRun r = run_nocflow("validate " + kHw + " " + args + " --out " + (dir / "o").string());
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.output;
    EXPECT_NE(r.output.find(message), std::string::npos) << args << "\n" << r.output;
    EXPECT_EQ(r.output.rfind("nocflow: error: ", 0), 0u) << args << ": refused before any banner\n" << r.output;
  }
  EXPECT_FALSE(fs::exists(dir / "o"));
  // An output folder that cannot be made fails before any replay (they take minutes on resnet50).
  std::ofstream(dir / "a_file") << "";
  const CliRun file = run_nocflow("validate " + kHw + " --rank --network zoo:vgg5 --k 2 --out " +
                                  (dir / "a_file").string());
  EXPECT_EQ(file.exit_code, 2) << file.output;
  EXPECT_NE(file.output.find("a_file: cannot create output folder: it is a file, not a folder"), std::string::npos)
      << file.output;
  EXPECT_EQ(file.output.find("[1/"), std::string::npos) << file.output;
}

TEST(RankCli, Vgg5ThreeBestPlansPerModel) {
  const fs::path dir = fresh_dir("rank_vgg5");
  const CliRun r = run_nocflow("validate " + kHw + " --rank --network zoo:vgg5 --k 3 --out " + (dir / "o").string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("right / wrong / tied"), std::string::npos) << r.output;
  const auto plans = read_csv_rows(dir / "o" / "rank.csv");
  const auto summary = read_csv_rows(dir / "o" / "rank_summary.csv");
  ASSERT_EQ(summary.size(), 2u);
  std::map<std::string, std::string> simulated_of_plan;  // plan_id → simulated cycles
  for (const auto& s : summary) {
    for (const std::string set : {"kbest", "strategy"}) {
      std::vector<double> predicted, simulated;
      for (const auto& p : plans) {
        if (p.at("model") != s.at("model") || p.at("set") != set) continue;
        EXPECT_EQ(std::stoi(p.at("k")),
                  static_cast<int>(predicted.size()) + 1);  // 1-based, as the label
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

  // Each k-best plan was also replayed on the 3 other images of its placement; the summary's
  // simulator-against-itself τ and the τ against the mean recompute from rank_placements.csv.
  std::map<std::string, std::vector<double>> on_image;  // plan_id → cycles per image
  std::vector<std::string> image_names;
  for (const auto& row : read_csv_rows(dir / "o" / "rank_placements.csv")) {
    on_image[row.at("plan_id")].push_back(std::stod(row.at("simulated_cycles")));
    if (on_image.size() == 1) image_names.push_back(row.at("placement"));
  }
  EXPECT_EQ(image_names, (std::vector<std::string>{"identity", "mirror y", "mirror x", "rotate 180"}));
  for (const auto& s : summary) {
    EXPECT_EQ(s.at("placements"), "4");
    std::vector<double> predicted, mean;
    std::vector<std::vector<double>> by_image(4);
    for (const auto& p : plans) {
      if (p.at("model") != s.at("model") || p.at("set") != "kbest") continue;
      const auto& cycles = on_image.at(p.at("plan_id"));
      ASSERT_EQ(cycles.size(), 4u);
      EXPECT_EQ(cycles[0], std::stod(p.at("simulated_cycles")));
      EXPECT_EQ(p.at("placements"), "4");
      predicted.push_back(std::stod(p.at("predicted_cycles")));
      mean.push_back((cycles[0] + cycles[1] + cycles[2] + cycles[3]) / 4);
      EXPECT_NEAR(std::stod(p.at("simulated_mean_cycles")), mean.back(), 1e-9);
      for (std::size_t i = 0; i < 4; ++i) by_image[i].push_back(cycles[i]);
    }
    double sum = 0;
    int pairs = 0;
    for (std::size_t a = 0; a < 4; ++a)
      for (std::size_t b = a + 1; b < 4; ++b) {
        const double t = tau_b(by_image[a], by_image[b]);
        if (!std::isnan(t)) sum += t, ++pairs;
      }
    if (pairs) {
      EXPECT_NEAR(std::stod(s.at("self_kendall_tau")), sum / pairs, 1e-12) << s.at("model");
    } else {
      EXPECT_EQ(s.at("self_kendall_tau"), "nan") << s.at("model");  // every pair of images all tied
    }
    const double mean_tau = tau_b(predicted, mean);
    if (!std::isnan(mean_tau)) {
      EXPECT_NEAR(std::stod(s.at("mean_kendall_tau")), mean_tau, 1e-12) << s.at("model");
    } else {
      EXPECT_EQ(s.at("mean_kendall_tau"), "nan") << s.at("model");
    }
    // The pairs that every image orders the same way, and the prediction's order of them.
    int all = 0, resolved = 0, right = 0, wrong = 0;
    for (std::size_t a = 0; a < predicted.size(); ++a)
      for (std::size_t b = a + 1; b < predicted.size(); ++b) {
        ++all;
        int cheaper = 0, dearer = 0;  // images on which plan a is simulated cheaper / dearer than b
        for (const auto& image : by_image)
          cheaper += image[a]<image[b], dearer += image[a]> image[b];
        if (cheaper != 4 && dearer != 4) continue;
        ++resolved;
        const bool a_first = cheaper == 4;
        right += a_first ? predicted[a] < predicted[b] : predicted[a] > predicted[b];
        wrong += a_first ? predicted[a] > predicted[b] : predicted[a] < predicted[b];
      }
    EXPECT_EQ(s.at("pairs"), std::to_string(all)) << s.at("model");
    EXPECT_EQ(s.at("resolved_pairs"), std::to_string(resolved)) << s.at("model");
    EXPECT_EQ(s.at("resolved_concordant"), std::to_string(right)) << s.at("model");
    EXPECT_EQ(s.at("resolved_discordant"), std::to_string(wrong)) << s.at("model");
    if (resolved > 0) {
      EXPECT_NEAR(std::stod(s.at("resolved_kendall_tau")),
                  static_cast<double>(right - wrong) / resolved, 1e-12)
          << s.at("model");
    } else {
      EXPECT_EQ(s.at("resolved_kendall_tau"), "nan") << s.at("model");
    }
  }
  // A plan's rows agree, whatever set they are in (the model's cheapest strategy plan is its
  // first k-best plan).
  for (const auto& p : plans)
    if (on_image.count(p.at("plan_id"))) {
      EXPECT_EQ(p.at("placements"), "4") << p.at("model") << " " << p.at("label");
    }
  EXPECT_NE(r.output.find("the simulator's own resolution"), std::string::npos) << r.output;
}

TEST(RankCli, CostModelsRanksOnlyTheModelsNamed) {
  // paper's plans are the slow replays (they move the most data): ranking linkload alone skips them.
  const fs::path dir = fresh_dir("rank_one_model");
  const CliRun r = run_nocflow("validate " + kHw + " --rank --network zoo:vgg5 --k 2 --placements 1 " +
                               "--cost-models linkload --out " + (dir / "o").string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("the 2 best plans of linkload,"), std::string::npos) << r.output;
  const auto summary = read_csv_rows(dir / "o" / "rank_summary.csv");
  ASSERT_EQ(summary.size(), 1u);
  EXPECT_EQ(summary[0].at("model"), "linkload");
  const auto plans = read_csv_rows(dir / "o" / "rank.csv");
  ASSERT_FALSE(plans.empty());
  std::set<std::string> ids;
  for (const auto& p : plans) {
    EXPECT_EQ(p.at("model"), "linkload");
    ids.insert(p.at("plan_id"));
  }
  // Only linkload's plans were replayed and written, numbered from 0.
  EXPECT_TRUE(fs::exists(dir / "o" / "plans" / ("plan_" + std::to_string(ids.size() - 1) + ".yaml")));
  EXPECT_FALSE(fs::exists(dir / "o" / "plans" / ("plan_" + std::to_string(ids.size()) + ".yaml")));
  // Regret is against the best plan replayed, here linkload's own.
  double best = 1e300, picked = 0;
  for (const auto& p : plans) {
    best = std::min(best, std::stod(p.at("simulated_cycles")));
    if (p.at("set") == "kbest" && p.at("k") == "1") picked = std::stod(p.at("simulated_cycles"));
  }
  EXPECT_NEAR(std::stod(summary[0].at("regret_pct")), 100 * (picked - best) / best, 1e-9);
  // A crossbar has two equivalent placements (the port reversal): the note says that the 4 it
  // does not reach are the default's, not an option given.
  const CliRun crossbar = run_nocflow("validate " + kHw + " --set topology.kind=crossbar --rank --network zoo:vgg5 "
                                      "--k 1 --cost-models linkload --out " + (dir / "x").string());
  ASSERT_EQ(crossbar.exit_code, 0) << crossbar.output;
  EXPECT_NE(crossbar.output.find("only 2 equivalent placements (identity included): each k-best plan replays on "
                                 "those, not on 4 (--placements, its default)"),
            std::string::npos)
      << crossbar.output;
}

TEST(RankCli, APlanRankedInBarrierReplayReplaysSoUnderSimulate) {
  const fs::path dir = fresh_dir("rank_barrier");
  const CliRun r = run_nocflow("validate " + kHw + " --rank --network zoo:vgg5 --k 1 --placements 1 " +
                               "--mode barrier --out " + (dir / "o").string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::string ranked_cycles;
  for (const auto& row : read_csv_rows(dir / "o" / "rank.csv"))
    if (row.at("plan_id") == "0") ranked_cycles = row.at("simulated_cycles");
  ASSERT_FALSE(ranked_cycles.empty());
  const std::string plan = (dir / "o" / "plans" / "plan_0.yaml").string();
  const std::string sim = "simulate " + kHw + " --network zoo:vgg5 --quiet --plan " + plan;
  // Without --mode: barrier, as ranked, and the same cycles as rank.csv.
  const CliRun as_ranked = run_nocflow(sim + " --out " + (dir / "as_ranked").string());
  ASSERT_EQ(as_ranked.exit_code, 0) << as_ranked.output;
  EXPECT_NE(as_ranked.output.find("barrier replay, as the plan's replay_mode says"), std::string::npos)
      << as_ranked.output;
  const auto summary = nlohmann::json::parse(read_file(dir / "as_ranked" / "summary.json"));
  EXPECT_EQ(summary.at("mode"), "barrier");
  EXPECT_EQ(std::to_string(summary.at("total_cycles").get<long long>()), ranked_cycles);
  // --mode overrides it, with a note; each replay's plan.yaml records a barrier
  // replay (dataflow, the default, goes unsaid).
  const CliRun dataflow = run_nocflow(sim + " --mode dataflow --out " + (dir / "dataflow").string());
  ASSERT_EQ(dataflow.exit_code, 0) << dataflow.output;
  EXPECT_NE(dataflow.output.find("measured in barrier replay, this is dataflow"), std::string::npos)
      << dataflow.output;
  EXPECT_EQ(nlohmann::json::parse(read_file(dir / "dataflow" / "summary.json")).at("mode"), "dataflow");
  EXPECT_NE(read_file(dir / "as_ranked" / "plan.yaml").find("replay_mode: barrier"), std::string::npos);
  EXPECT_EQ(read_file(dir / "dataflow" / "plan.yaml").find("replay_mode"), std::string::npos);
  // A mode nocflow does not know is refused with the plan's file and line.
  std::string text = read_file(plan);
  const std::string recorded = "replay_mode: barrier";
  text.replace(text.find(recorded), recorded.size(), "replay_mode: fast");
  std::ofstream(dir / "bad.yaml") << text;
  const CliRun bad = run_nocflow("simulate " + kHw + " --network zoo:vgg5 --quiet --plan " +
                                 (dir / "bad.yaml").string() + " --out " + (dir / "bad").string());
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_NE(bad.output.find("replay_mode: expected dataflow or barrier, got 'fast'"), std::string::npos)
      << bad.output;
  EXPECT_NE(bad.output.find((dir / "bad.yaml").string() + ":"), std::string::npos) << bad.output;
}

TEST(RankCli, CalibrationFileCalibratesTheModels) {
  const fs::path dir = fresh_dir("rank_calibrated");
  std::ofstream(dir / "cal.yaml") << "paper: {bnoc_bytes_per_cycle: 64, latency_cycles: 10}\n"
                                     "linkload: {router_contention: {\"mesh 4x4\": 0.5}}\n";
  auto paper_best = [&](const std::string& extra, const std::string& out) {
    const CliRun r = run_nocflow("validate " + kHw + " --rank --network zoo:vgg5 --k 1 " + extra + " --out " +
                                 (dir / out).string());
    EXPECT_EQ(r.exit_code, 0) << r.output;
    for (const auto& p : read_csv_rows(dir / out / "rank.csv"))
      if (p.at("model") == "paper" && p.at("set") == "kbest") return std::stod(p.at("predicted_cycles"));
    ADD_FAILURE() << "no paper k-best row in " << out;
    return 0.0;
  };
  const double plain = paper_best("", "plain");
  const double calibrated = paper_best("--calibration " + (dir / "cal.yaml").string(), "calibrated");
  for (const auto& row : read_csv_rows(dir / "calibrated" / "rank_summary.csv"))
    EXPECT_EQ(row.at("calibration"), (dir / "cal.yaml").string());
  for (const auto& row : read_csv_rows(dir / "plain" / "rank_summary.csv")) EXPECT_EQ(row.at("calibration"), "");
  EXPECT_GT(plain, 0);
  EXPECT_NE(calibrated, plain);  // B_NoC doubled and 10 cycles per redistribution
  std::ofstream(dir / "other.yaml") << "paper: {bnoc_bytes_per_cycle: 64, latency_cycles: 10}\n"
                                       "linkload: {router_contention: {\"mesh 8x8\": 0.5}}\n";
  const CliRun other = run_nocflow("validate " + kHw + " --rank --network zoo:vgg5 --k 1 --calibration " +
                                   (dir / "other.yaml").string() + " --out " + (dir / "other").string());
  EXPECT_EQ(other.exit_code, 2) << other.output;
  EXPECT_NE(other.output.find("no entry for 'mesh 4x4'"), std::string::npos) << other.output;
  EXPECT_EQ(other.output.rfind("nocflow: error: ", 0), 0u) << "refused before the banner\n" << other.output;
  // Fitted on other hardware: said under --quiet too (quiet drops progress, not warnings).
  std::ofstream(dir / "vcs.yaml") << "paper: {bnoc_bytes_per_cycle: 64, latency_cycles: 10}\n"
                                     "linkload: {router_contention: {\"mesh 4x4\": 0.5}}\n"
                                     "fitted_for: {hardware: {router.vcs: 2}}\n";
  const CliRun quiet = run_nocflow("validate " + kHw + " --rank --network zoo:vgg5 --k 1 --quiet --calibration " +
                                   (dir / "vcs.yaml").string() + " --out " + (dir / "quiet").string());
  EXPECT_EQ(quiet.exit_code, 0) << quiet.output;
  EXPECT_NE(quiet.output.find("note: " + (dir / "vcs.yaml").string() + " was fitted on other hardware ("),
            std::string::npos)
      << quiet.output;
  EXPECT_NE(quiet.output.find("router.vcs 2 -> 4"), std::string::npos) << quiet.output;
  // The microbenchmarks fit their own calibration: a file there is a mistake, not ignored.
  const CliRun micro = run_nocflow("validate " + kHw + " --calibration " + (dir / "cal.yaml").string() +
                                   " --out " + (dir / "micro").string());
  EXPECT_EQ(micro.exit_code, 2) << micro.output;
  EXPECT_NE(micro.output.find("--calibration: only with --rank"), std::string::npos) << micro.output;
  const CliRun both = run_nocflow("validate " + kHw + " --rank --network zoo:vgg5 --calibrate --out " +
                                  (dir / "both").string());
  EXPECT_EQ(both.exit_code, 2) << both.output;
  EXPECT_NE(both.output.find("--calibrate: fits the microbenchmarks, not with --rank"), std::string::npos) << both.output;
}

}  // namespace
}  // namespace nocflow::testing
