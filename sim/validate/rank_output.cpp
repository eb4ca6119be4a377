// SPDX-License-Identifier: MIT
// `validate --rank`'s files and table (rank.h: write_rank_files, print_rank_table).
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iomanip>
#include <ostream>

#include "noc/base/format.h"
#include "sim/output/output_file.h"
#include "sim/validate/rank.h"

namespace nocflow::sim {
namespace {

namespace opt = nocflow::optimizer;

/// τ for a table: "n/a" when undefined.
std::string tau_text(double tau) { return std::isnan(tau) ? std::string("n/a") : fixed(tau, 3); }

}  // namespace

std::string write_rank_files(const std::string& dir, const RankReport& report) {
  namespace fs = std::filesystem;
  OutputFile csv(fs::path(dir) / "rank.csv");
  csv << "model,set,label,k,predicted_cycles,simulated_cycles,predicted_rank,simulated_rank,relative_error,plan_id,"
         "predicted_compute_cycles,predicted_redistribution_cycles,simulated_compute_cycles,"
         "simulated_communication_cycles,placements,simulated_mean_cycles\n";
  for (const RankedPlan& r : report.plans)
    csv << r.model << "," << r.set << "," << r.label << "," << r.k + 1 << ","
        << shortest(r.predicted_cycles) << "," << r.simulated_cycles << "," << r.predicted_rank << ","
        << r.simulated_rank << "," << shortest(r.relative_error()) << "," << r.plan_id << ","
        << shortest(r.predicted_compute_cycles) << "," << shortest(r.predicted_redistribution_cycles)
        << "," << r.simulated_compute_cycles << "," << r.simulated_communication_cycles << ","
        << std::max<std::size_t>(1, r.placement_cycles.size()) << ","
        << shortest(r.simulated_mean_cycles()) << "\n";
  csv.close();
  OutputFile sum(fs::path(dir) / "rank_summary.csv");
  sum << "model,plans,kendall_tau,regret_pct,best_plan_error_pct,predicted_spread_pct,"
         "simulated_spread_pct,error_range_pct,strategy_plans,strategy_kendall_tau,"
         "strategy_predicted_spread_pct,mode,calibration,placements,self_kendall_tau,"
         "placement_spread_pct,mean_kendall_tau,pairs,resolved_pairs,resolved_concordant,"
         "resolved_discordant,resolved_kendall_tau\n";
  for (const ModelRanking& m : report.models)
    sum << m.model << "," << m.plans << "," << shortest(m.kendall_tau) << "," << shortest(m.regret_pct)
        << "," << shortest(m.best_plan_error_pct) << "," << shortest(m.predicted_spread_pct) << ","
        << shortest(m.simulated_spread_pct) << "," << shortest(m.error_range_pct) << ","
        << m.strategy_plans << "," << shortest(m.strategy_kendall_tau) << ","
        << shortest(m.strategy_predicted_spread_pct) << "," << report.mode << ","
        << csv_field(report.calibration) << "," << report.placements.size() << ","
        << shortest(m.self_kendall_tau) << "," << shortest(m.placement_spread_pct) << ","
        << shortest(m.mean_kendall_tau) << "," << m.resolved.pairs << "," << m.resolved.resolved << ","
        << m.resolved.concordant << "," << m.resolved.discordant << ","
        << shortest(m.resolved.tau()) << "\n";
  sum.close();
  OutputFile images(fs::path(dir) / "rank_placements.csv");
  images << "plan_id,placement,simulated_cycles\n";
  std::vector<bool> done(report.distinct.size(), false);
  for (const RankedPlan& r : report.plans) {
    if (r.placement_cycles.empty() || done[static_cast<std::size_t>(r.plan_id)]) continue;
    done[static_cast<std::size_t>(r.plan_id)] = true;
    for (std::size_t i = 0; i < r.placement_cycles.size(); ++i)
      images << r.plan_id << "," << csv_field(report.placements[i]) << "," << r.placement_cycles[i] << "\n";
  }
  images.close();
  const fs::path plans = fs::path(dir) / "plans";
  create_folder(plans);
  for (std::size_t id = 0; id < report.distinct.size(); ++id)
    write_file(plans / ("plan_" + std::to_string(id) + ".yaml"),
               opt::plan_yaml(report.distinct[id]));
  return "rank.csv, rank_summary.csv, rank_placements.csv, plans/plan_ID.yaml (" + std::to_string(report.distinct.size()) + " plans)";
}

void print_rank_table(std::ostream& out, const RankReport& report) {
  out << "\n  " << report.network << ", " << report.mode << " replay: " << report.replays << " distinct plans"
      << (report.image_replays ? " (and " + std::to_string(report.image_replays) + " replays on other placements)" : "")
      << " simulated in " << fixed(report.simulate_seconds, 1) << " s\n  " << std::setw(10) << "" << std::right
      << std::setw(78) << "------------------------- its k best plans -------------------------"
      << std::setw(40) << "------ its strategy plans ------" << "\n  " << std::left << std::setw(10) << "model"
      << std::right
      << std::setw(6) << "k" << std::setw(10) << "tau-b" << std::setw(12) << "regret" << std::setw(14)
      << "best error" << std::setw(18) << "predicted spread" << std::setw(18) << "simulated spread" << std::setw(12)
      << "strategies" << std::setw(10) << "tau-b" << std::setw(18) << "predicted spread" << std::setw(12)
      << "optimize" << "\n";
  for (const ModelRanking& m : report.models)
    out << "  " << std::left << std::setw(10) << m.model << std::right << std::setw(6) << m.plans << std::setw(10)
        << tau_text(m.kendall_tau) << std::setw(11)
        << fixed(m.regret_pct, 2) << "%" << std::setw(13) << fixed(m.best_plan_error_pct, 1) << "%" << std::setw(17)
        << fixed(m.predicted_spread_pct, 2) << "%" << std::setw(17) << fixed(m.simulated_spread_pct, 2) << "%"
        << std::setw(12) << m.strategy_plans << std::setw(10)
        << tau_text(m.strategy_kendall_tau)
        << std::setw(17) << fixed(m.strategy_predicted_spread_pct, 1) << "%" << std::setw(10)
        << fixed(m.optimize_seconds, 1) << " s\n";
  out << "  (regret: (simulated cycles of the model's predicted-best plan - the best of every plan replayed)"
         " / the latter;"
         "\n   best error: (predicted − simulated) / simulated cycles of that plan; spread: (max − min) / min cycles"
         " over the model's plans;\n   k: its k best plans; strategies: its best plan under each partition strategy)\n";
  if (report.placements.size() > 1) {
    out << "\n  the simulator's own resolution: each model's k best also replayed on " << report.placements.size() - 1
        << " equivalent placement" << (report.placements.size() > 2 ? "s" : "") << " (";
    for (std::size_t i = 1; i < report.placements.size(); ++i) out << (i > 1 ? ", " : "") << report.placements[i];
    out << "; " << report.image_replays << " more replays)\n  " << std::left << std::setw(10)
        << "model" << std::right << std::setw(22) << "sim vs sim tau-b" << std::setw(20)
        << "placement spread" << std::setw(26) << "tau-b vs placement mean" << std::setw(16)
        << "resolved pairs" << std::setw(22) << "right / wrong / tied" << std::setw(16)
        << "tau over them" << "\n";
    for (const ModelRanking& m : report.models) {
      const ResolvedPairs& r = m.resolved;
      out << "  " << std::left << std::setw(10) << m.model << std::right << std::setw(22)
          << tau_text(m.self_kendall_tau) << std::setw(19) << fixed(m.placement_spread_pct, 2)
          << "%" << std::setw(26) << tau_text(m.mean_kendall_tau) << std::setw(16)
          << (std::to_string(r.resolved) + " of " + std::to_string(r.pairs)) << std::setw(22)
          << (std::to_string(r.concordant) + " / " + std::to_string(r.discordant) + " / " +
              std::to_string(r.resolved - r.concordant - r.discordant))
          << std::setw(16) << tau_text(r.tau()) << "\n";
    }
    out << "  (sim vs sim: tau-b between the simulator's orders of the same plans on two "
           "equivalent placements, mean over pairs;\n"
           "   placement spread: (max − min) / min simulated cycles of one plan over the "
           "placements, mean over plans;\n"
           "   resolved pairs: pairs of plans that every placement orders the same way; "
           "right / wrong / tied: the model's order of them;\n"
           "   tau over them: (right - wrong) / resolved pairs)\n";
  }
  for (const ModelRanking& m : report.models)
    // As printed (2 decimals): a difference below the printed precision is no finding.
    if (m.plans > 1 && std::round(100 * m.error_range_pct) > std::round(100 * m.predicted_spread_pct))
      out << "  note: " << m.model << " predicts its " << m.plans << " plans within "
          << (m.predicted_spread_pct > 0 && m.predicted_spread_pct < 0.005
                  ? std::string("0.01")  // not "0.00": they differ
                  : fixed(m.predicted_spread_pct, 2))
          << "% of each other, but its error varies by " << fixed(m.error_range_pct, 2)
          << "% across them: their order is below the model's resolution, and tau-b mostly measures that error\n";
  for (const ModelRanking& m : report.models)
    if (m.plans > 1 && !std::isnan(m.self_kendall_tau) && m.self_kendall_tau < 0.8)
      out << "  note: on equivalent placements the simulator orders " << m.model << "'s " << m.plans
          << " best plans with tau-b " << fixed(m.self_kendall_tau, 2)
          << " against itself: tau-b over these plans measures its tie-breaks as much as the model\n";
}

}  // namespace nocflow::sim
