// SPDX-License-Identifier: MIT
#include "sim/validate/rank.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <limits>
#include <map>
#include <sstream>

#include "optimizer/plan/partition_setup.h"
#include "optimizer/plan/plan.h"
#include "optimizer/solver/kbest.h"
#include "sim/lower/workload_setup.h"
#include "sim/run/replay.h"

namespace nocflow::sim {
namespace {

namespace opt = nocflow::optimizer;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

/// Shortest text that reads back as the same double: rank.csv keeps exact ties, so that τ
/// recomputed from the file equals the reported one.
std::string exact(double v) {
  if (std::isnan(v)) return "nan";
  std::array<char, 32> buf{};
  const auto r = std::to_chars(buf.data(), buf.data() + buf.size(), v);
  return std::string(buf.data(), r.ptr);
}

std::string fixed(double v, int precision) {
  std::ostringstream o;
  o << std::fixed << std::setprecision(precision) << v;
  return o.str();
}

/// 1 + the number of strictly smaller values: the cheapest is 1, ties share the smaller rank.
std::vector<int> ranks(const std::vector<double>& v) {
  std::vector<int> r;
  for (double x : v) r.push_back(1 + static_cast<int>(std::count_if(v.begin(), v.end(), [&](double y) { return y < x; })));
  return r;
}

double spread_pct(const std::vector<double>& v) {
  const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  return *lo > 0 ? 100 * (*hi - *lo) / *lo : 0;
}

/// Plans are the same when every layer takes the same choice: placement and lowering follow
/// from the choices, whatever the model predicted.
using PlanKey = std::vector<std::array<int, 5>>;
PlanKey key_of(const opt::Plan& plan) {
  PlanKey k;
  for (const auto& l : plan.layers) k.push_back(l.choice.f);
  return k;
}

}  // namespace

double RankedPlan::relative_error() const {
  return simulated_cycles > 0 ? (predicted_cycles - static_cast<double>(simulated_cycles)) / static_cast<double>(simulated_cycles) : 0;
}

double kendall_tau_b(const std::vector<double>& x, const std::vector<double>& y) {
  const std::size_t n = std::min(x.size(), y.size());
  if (n < 2) return std::numeric_limits<double>::quiet_NaN();
  auto sign = [](double d) { return (d > 0) - (d < 0); };
  long long s = 0, tied_x = 0, tied_y = 0;
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = i + 1; j < n; ++j) {
      const int dx = sign(x[i] - x[j]), dy = sign(y[i] - y[j]);
      s += dx * dy;
      tied_x += dx == 0;
      tied_y += dy == 0;
    }
  const long long pairs = static_cast<long long>(n * (n - 1) / 2);
  const double denominator = std::sqrt(static_cast<double>(pairs - tied_x) * static_cast<double>(pairs - tied_y));
  return denominator > 0 ? static_cast<double>(s) / denominator : std::numeric_limits<double>::quiet_NaN();
}

RankReport rank_plans(const HwSpec& spec, const RankOptions& o, std::ostream& progress) {
  RankReport report;
  report.mode = o.mode == ExecMode::Barrier ? "barrier" : "dataflow";
  const opt::Graph graph = prepare_network(o.network, o.batch, spec, o.passes);
  const opt::Workload workload = opt::build_workload(graph);
  const opt::HwDesc hw = hw_desc_of(spec);
  report.network = o.network;

  // 1. The k best plans of every model.
  std::vector<opt::Plan> plans;                  // distinct, by plan_id
  std::vector<std::string> first_seen;           // "paper plan 3" per plan_id
  std::map<PlanKey, int> ids;
  for (const std::string& name : o.models) {
    const auto t0 = Clock::now();
    const auto model = opt::make_cost_model(name, hw);
    // SRAM limit on, as `simulate` solves: lowering rejects a plan that does not fit.
    const opt::PartitionSetup setup = opt::setup_partition(graph, hw, *model, {false, true, true});
    const auto t1 = Clock::now();
    const auto best = opt::k_best(setup.problem, o.k);
    ModelRanking m;
    m.model = name;
    m.plans = static_cast<int>(best.size());
    for (std::size_t i = 0; i < best.size(); ++i) {
      opt::Plan plan = opt::make_plan(setup, best[i].choice, hw, *model, "dp k-best");
      RankedPlan r;
      r.model = name;
      r.k = static_cast<int>(i);
      r.predicted_cycles = plan.total_cycles();
      r.predicted_compute_cycles = plan.compute_cycles;
      r.predicted_redistribution_cycles = plan.redistribution_cycles;
      const auto [it, added] = ids.emplace(key_of(plan), static_cast<int>(plans.size()));
      r.plan_id = it->second;
      if (added) {
        plans.push_back(std::move(plan));
        first_seen.push_back(name + " plan " + std::to_string(i + 1));
      }
      report.plans.push_back(r);
    }
    m.optimize_seconds = seconds_since(t0);
    progress << "  " << name << ": " << setup.choices_after << " choices (" << setup.choices_before
             << " before pruning), set-up " << fixed(std::chrono::duration<double>(t1 - t0).count(), 1)
             << " s, " << best.size() << " best plans in " << fixed(seconds_since(t1), 1) << " s, predicted "
             << fixed(best.empty() ? 0 : best.front().cost, 0) << " .. " << fixed(best.empty() ? 0 : best.back().cost, 0)
             << " cycles" << std::endl;
    report.models.push_back(m);
  }

  // 2. Replay every distinct plan once, in a child process each.
  const auto t_sim = Clock::now();
  std::vector<ReplayOutcome> outcome(plans.size());
  std::vector<bool> done(plans.size(), false);
  for (RankedPlan& r : report.plans) {
    const auto id = static_cast<std::size_t>(r.plan_id);
    const std::string label = r.model + " plan " + std::to_string(r.k + 1);
    if (!done[id]) {
      outcome[id] = replay_in_child(spec, workload, plans[id], o.mode);
      done[id] = true;
      progress << "  [" << id + 1 << "/" << plans.size() << "] " << label << ": simulated "
               << outcome[id].total_cycles << " cycles, predicted " << fixed(r.predicted_cycles, 0) << " cycles ("
               << fixed(outcome[id].wall_seconds, 1) << " s simulation)" << std::endl;
    } else {
      progress << "        " << label << ": same plan as " << first_seen[id] << ", simulated "
               << outcome[id].total_cycles << " cycles, predicted " << fixed(r.predicted_cycles, 0) << " cycles"
               << std::endl;
    }
    r.simulated_cycles = outcome[id].total_cycles;
    r.simulated_compute_cycles = outcome[id].compute_cycles;
    r.simulated_communication_cycles = outcome[id].communication_cycles;
  }
  report.replays = static_cast<int>(plans.size());
  report.distinct = std::move(plans);
  report.simulate_seconds = seconds_since(t_sim);

  // 3. Per model: ranks, τ, regret, error of the predicted-best plan.
  std::int64_t best_simulated = std::numeric_limits<std::int64_t>::max();
  for (const auto& out : outcome) best_simulated = std::min(best_simulated, out.total_cycles);
  for (ModelRanking& m : report.models) {
    std::vector<RankedPlan*> mine;
    for (RankedPlan& r : report.plans)
      if (r.model == m.model) mine.push_back(&r);
    if (mine.empty()) continue;
    std::vector<double> predicted, simulated;
    for (const RankedPlan* r : mine) {
      predicted.push_back(r->predicted_cycles);
      simulated.push_back(static_cast<double>(r->simulated_cycles));
    }
    const auto pr = ranks(predicted), sr = ranks(simulated);
    for (std::size_t i = 0; i < mine.size(); ++i) mine[i]->predicted_rank = pr[i], mine[i]->simulated_rank = sr[i];
    m.kendall_tau = kendall_tau_b(predicted, simulated);
    // The plan the model would pick: its cheapest prediction (ties: the first found).
    const RankedPlan& pick = *mine[static_cast<std::size_t>(std::min_element(predicted.begin(), predicted.end()) - predicted.begin())];
    m.regret_pct = 100.0 * static_cast<double>(pick.simulated_cycles - best_simulated) / static_cast<double>(best_simulated);
    m.best_plan_error_pct = 100 * pick.relative_error();
    m.predicted_spread_pct = spread_pct(predicted);
    m.simulated_spread_pct = spread_pct(simulated);
    const auto [lo, hi] = std::minmax_element(mine.begin(), mine.end(), [](const RankedPlan* a, const RankedPlan* b) {
      return a->relative_error() < b->relative_error();
    });
    m.error_range_pct = 100 * ((*hi)->relative_error() - (*lo)->relative_error());
  }
  return report;
}

std::string write_rank_files(const std::string& dir, const RankReport& report) {
  namespace fs = std::filesystem;
  std::ofstream csv(fs::path(dir) / "rank.csv");
  csv << "model,k,predicted_cycles,simulated_cycles,predicted_rank,simulated_rank,relative_error,plan_id,"
         "predicted_compute_cycles,predicted_redistribution_cycles,simulated_compute_cycles,"
         "simulated_communication_cycles\n";
  for (const RankedPlan& r : report.plans)
    csv << r.model << "," << r.k << "," << exact(r.predicted_cycles) << "," << r.simulated_cycles << ","
        << r.predicted_rank << "," << r.simulated_rank << "," << exact(r.relative_error()) << "," << r.plan_id << ","
        << exact(r.predicted_compute_cycles) << "," << exact(r.predicted_redistribution_cycles) << ","
        << r.simulated_compute_cycles << "," << r.simulated_communication_cycles << "\n";
  std::ofstream sum(fs::path(dir) / "rank_summary.csv");
  sum << "model,plans,kendall_tau,regret_pct,best_plan_error_pct,predicted_spread_pct,simulated_spread_pct,"
         "error_range_pct,mode\n";
  for (const ModelRanking& m : report.models)
    sum << m.model << "," << m.plans << "," << exact(m.kendall_tau) << "," << exact(m.regret_pct) << ","
        << exact(m.best_plan_error_pct) << "," << exact(m.predicted_spread_pct) << ","
        << exact(m.simulated_spread_pct) << "," << exact(m.error_range_pct) << "," << report.mode << "\n";
  fs::create_directories(fs::path(dir) / "plans");
  for (std::size_t id = 0; id < report.distinct.size(); ++id)
    std::ofstream(fs::path(dir) / "plans" / ("plan_" + std::to_string(id) + ".yaml")) << opt::plan_yaml(report.distinct[id]);
  return "rank.csv, rank_summary.csv, plans/plan_ID.yaml (" + std::to_string(report.distinct.size()) + " plans)";
}

void print_rank_table(std::ostream& out, const RankReport& report) {
  out << "\n  " << report.network << ", " << report.mode << " replay: " << report.replays << " distinct plans simulated in "
      << fixed(report.simulate_seconds, 1) << " s\n  " << std::left << std::setw(10) << "model" << std::right
      << std::setw(6) << "plans" << std::setw(10) << "tau-b" << std::setw(12) << "regret" << std::setw(14)
      << "best error" << std::setw(18) << "predicted spread" << std::setw(18) << "simulated spread" << std::setw(12)
      << "optimize" << "\n";
  for (const ModelRanking& m : report.models)
    out << "  " << std::left << std::setw(10) << m.model << std::right << std::setw(6) << m.plans << std::setw(10)
        << (std::isnan(m.kendall_tau) ? std::string("n/a") : fixed(m.kendall_tau, 3)) << std::setw(11)
        << fixed(m.regret_pct, 2) << "%" << std::setw(13) << fixed(m.best_plan_error_pct, 1) << "%" << std::setw(17)
        << fixed(m.predicted_spread_pct, 2) << "%" << std::setw(17) << fixed(m.simulated_spread_pct, 2) << "%"
        << std::setw(10) << fixed(m.optimize_seconds, 1) << " s\n";
  out << "  (regret: simulated cycles of the model's predicted-best plan over the best simulated plan of any model;"
         "\n   best error: (predicted − simulated) / simulated cycles of that plan; spread: (max − min) / min cycles"
         " over the model's plans)\n";
  for (const ModelRanking& m : report.models)
    if (m.plans > 1 && m.error_range_pct > m.predicted_spread_pct)
      out << "  note: " << m.model << " predicts its " << m.plans << " plans within " << fixed(m.predicted_spread_pct, 2)
          << "% of each other, but its error varies by " << fixed(m.error_range_pct, 2)
          << "% across them: their order is below the model's resolution, and tau-b mostly measures that error\n";
}

}  // namespace nocflow::sim
