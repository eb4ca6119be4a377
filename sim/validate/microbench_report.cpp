// SPDX-License-Identifier: MIT
// `nocflow validate`'s files and tables of the microbenchmarks (microbench_report.h).
#include "sim/validate/microbench_report.h"

#include <algorithm>
#include <filesystem>
#include <iomanip>
#include <sstream>

#include "noc/base/format.h"
#include "noc/base/names.h"
#include "optimizer/cost/paper_calibration.h"
#include "sim/config/hw_loader.h"
#include "sim/lower/priced_inputs.h"

namespace nocflow::sim {

namespace fs = std::filesystem;

ValidationReport::ValidationReport(const std::string& dir)
    : dir_(dir), csv_(fs::path(dir) / "validation.csv") {
  csv_ << "topology,type,tensor_bytes,producer,consumer,bytes_moved,paper_cycles,linkload_cycles,"
          "simulated_cycles,paper_error,linkload_error,busiest_link_flits_per_cycle,"
       << decomposition_csv_header()
       << ",busiest_link_kind,busiest_router_link_flits,busiest_endpoint_flits,messages,"
          "linkload_fitted_cycles,linkload_fitted_error,router_slowdown,slowdown_fitted_here,"
          "busiest_endpoint_busy_share,busiest_router_link_vc_starved_cycles,round_robin_cycles,"
          "round_robin_error\n";
  csv_.flush();
}

void ValidationReport::add(const BenchResult& r) {
  const std::string& type = r.bench.type;
  if (!r.run) {
    for (const std::string& model : bench_models()) ++by_type_[{type, model}].skipped;
    return;
  }
  const double fitted = r.linkload_fitted_cycles();
  // Every double as the shortest text that reads back exact (6 digits wrote 1572875 as
  // 1.57288e+06).
  auto rel = [&](double p) {
    return shortest(r.simulated_cycles > 0 ? (p - r.simulated_cycles) / r.simulated_cycles : 0.0);
  };
  rows_ << r.bench.topology << "," << type << "," << r.bench.tensor_bytes << ",\"" << r.producer
        << "\",\"" << r.consumer << "\"," << r.bytes_moved << ",";
  const bool paper = r.scores("paper");  // else empty cells: paper prices no such edge apart
  if (paper) rows_ << shortest(r.paper_cycles);
  rows_ << "," << shortest(r.linkload_cycles) << "," << r.simulated_cycles << ",";
  if (paper) rows_ << rel(r.paper_cycles);
  rows_ << "," << rel(r.linkload_cycles) << "," << shortest(r.max_link_utilisation) << ","
        << decomposition_csv_columns(r) << "," << (r.router_bound() ? "router" : "endpoint") << ","
        << r.busiest_router_link_flits << "," << r.busiest_endpoint_flits << "," << r.messages
        << "," << shortest(fitted) << "," << rel(fitted) << "," << shortest(r.router_slowdown)
        << "," << (r.slowdown_fitted_here ? 1 : 0) << "," << shortest(r.busiest_endpoint_busy_share)
        << "," << r.busiest_router_link_vc_starved << ",";
  if (r.round_robin_cycles >= 0)
    rows_ << shortest(r.round_robin_cycles) << "," << rel(r.round_robin_cycles);
  else
    rows_ << ",";
  rows_ << "\n";
  results_.push_back(r);
  const bool near = r.max_link_utilisation >= kNearSaturation;
  if (!near) decomposition_.add(r);
  const auto sim = static_cast<double>(r.simulated_cycles);
  for (const std::string& model : bench_models())
    if (r.scores(model)) {
      by_type_[{type, model}].add(r.predicted(model), sim, near,
                                  static_cast<int>(results_.size()) - 1);
      by_bound_[{type, model, r.router_bound()}].add(r.predicted(model), sim, near);
    }
}

namespace {
/// "mesh 16x16, 4 MiB, OUTP=16,OFMP_H=16 -> OUTP=16,OFMP_H=16": a case's machine, size and choices.
std::string case_label(const BenchResult& r) {
  return r.bench.topology + ", " + binary_size(r.bench.tensor_bytes) + ", " + r.producer +
         " -> " + r.consumer;
}
}  // namespace

void ValidationReport::print_target(std::ostream& out, const std::vector<std::string>& types) {
  out << "\n  linkload against the target below saturation (MAPE <= " << fixed(100 * kTargetMape, 0)
      << "%, max error <= " << fixed(100 * kTargetMax, 0) << "%), and each type's worst case\n  "
      << std::left << std::setw(kTypeWidth) << "type" << std::setw(16) << "model" << std::setw(8)
      << "target" << "worst case (signed error)" << std::right << "\n";
  int met = 0, scored = 0;
  for (const auto& type : types)
    for (const char* model : {"linkload", "linkload_fitted"}) {
      const ErrorStats& e = by_type_[{type, model}];
      if (!e.count) continue;
      ++scored;
      met += e.meets_target();
      out << "  " << std::left << std::setw(kTypeWidth) << type << std::setw(16) << model
          << std::setw(8) << (e.meets_target() ? "met" : "missed") << std::right
          << case_label(results_[static_cast<std::size_t>(e.worst)]) << ": "
          << signed_percent(e.worst_error) << "\n";
    }
  out << "  " << met << " of " << scored << " met\n";
}

void ValidationReport::finish(std::ostream& out, const std::vector<std::string>& types) {
  flush();
  csv_.close();
  OutputFile sum(fs::path(dir_) / "summary.csv");
  sum << "type,model,cases_below_saturation,mape,max_error,cases_near_saturation,mape_all,max_error_all,"
         "cases_moving_nothing,cases_skipped," << DecompositionSummary::csv_header()
      << ",cases_endpoint_bound,mape_endpoint_bound,max_error_endpoint_bound,cases_router_bound,"
         "mape_router_bound,max_error_router_bound,meets_target,worst_case,worst_case_error\n";
  out << std::fixed << "\n  each model's error against the simulated cycles: below saturation (busiest link < "
      << std::setprecision(1) << kNearSaturation << " flits/cycle), and over all cases\n  "
      << std::string(kTypeWidth + 16, ' ') << std::setw(29) << "--- below saturation ---"
      << std::setw(29) << "------ all cases ------" << "\n  " << std::left
      << std::setw(kTypeWidth) << "type" << std::setw(16) << "model" << std::right
      << std::setw(7) << "cases" << std::setw(10) << "MAPE" << std::setw(12) << "max error"
      << std::setw(7) << "cases" << std::setw(10) << "MAPE" << std::setw(12) << "max error"
      << "\n";
  for (const auto& type : types)
    for (const std::string& model : bench_models()) {
      const ErrorStats& e = by_type_[{type, model}];
      const int all = e.count + e.near;
      const double mape_all = all ? e.sum_all / all : 0;
      sum << type << "," << model << "," << e.count << "," << error_csv(e.count, e.mape()) << ","
          << error_csv(e.count, e.max) << "," << e.near << "," << error_csv(all, mape_all) << ","
          << error_csv(all, e.max_all) << "," << e.still << "," << e.skipped << ","
          << decomposition_.csv_columns(type, model);
      for (bool router : {false, true}) {
        const ErrorStats& b = by_bound_[{type, model, router}];
        sum << "," << b.count << "," << error_csv(b.count, b.mape()) << ","
            << error_csv(b.count, b.max);
      }
      sum << "," << (e.count ? e.meets_target() ? "1" : "0" : "") << ","
          << (e.count ? csv_field(case_label(results_[static_cast<std::size_t>(e.worst)])) : "")
          << "," << (e.count ? shortest(e.worst_error) : "") << "\n";
      out << "  " << std::left << std::setw(kTypeWidth) << type << std::setw(16) << model
          << std::right << std::setw(7) << e.count << std::setw(10)
          << error_percent(e.count, e.mape()) << std::setw(12) << error_percent(e.count, e.max)
          << std::setw(7) << all << std::setw(10) << error_percent(all, mape_all)
          << std::setw(12) << error_percent(all, e.max_all);
      if (e.still) out << "  (+" << e.still << " moving nothing, predicted and simulated 0)";
      if (e.skipped) out << "  (" << e.skipped << " skipped: no such choice pair)";
      out << "\n";
    }
  sum.close();
  print_target(out, types);
  decomposition_.print(out, types);
  out << "\n  linkload below saturation, by what bounds the edge: a router-to-router link carried more\n"
         "  flits than any PE's injection or ejection channel (router), or not (endpoint)\n  "
      << std::left << std::setw(kTypeWidth) << "type" << std::setw(16) << "model" << std::right << std::setw(10)
      << "endpoint" << std::setw(10) << "MAPE" << std::setw(12) << "max error" << std::setw(10) << "router"
      << std::setw(10) << "MAPE" << std::setw(12) << "max error" << "\n";
  for (const auto& type : types)
    for (const char* model : {"linkload", "linkload_fitted"}) {
      out << "  " << std::left << std::setw(kTypeWidth) << (model == std::string("linkload") ? type : "")
          << std::setw(16) << model << std::right;
      for (bool router : {false, true}) {
        const ErrorStats& b = by_bound_[{type, model, router}];
        out << std::setw(10) << b.count << std::setw(10) << error_percent(b.count, b.mape())
            << std::setw(12) << error_percent(b.count, b.max);
      }
      out << "\n";
    }
}

void write_calibration(const std::string& dir, const std::string& hw_file, const HwSpec& base,
                       const std::vector<std::string>& types, const std::vector<BenchResult>& results,
                       const std::map<std::string, double>& slowdowns, std::ostream& out) {
  // paper predicted V * h_avg / B0 with B0 one link's bytes per cycle and no latency.
  const double b0 = base.link.width_bytes;
  std::vector<optimizer::CalibrationPoint> points;
  for (const auto& r : results)
    if (r.scores("paper"))
      points.push_back({r.paper_cycles * b0, static_cast<double>(r.simulated_cycles)});
  const optimizer::PaperCalibration c = optimizer::fit_paper_calibration(points);
  std::map<std::string, std::pair<ErrorStats, ErrorStats>> before_after;
  ErrorStats all_before, all_after;
  for (const auto& r : results) {
    if (!r.scores("paper")) continue;
    const double after = r.paper_cycles > 0 ? r.paper_cycles * b0 / c.bnoc_bytes_per_cycle + c.latency_cycles : 0;
    before_after[r.bench.type].first.add(r.paper_cycles, static_cast<double>(r.simulated_cycles), false);
    before_after[r.bench.type].second.add(after, static_cast<double>(r.simulated_cycles), false);
    all_before.add(r.paper_cycles, static_cast<double>(r.simulated_cycles), false);
    all_after.add(after, static_cast<double>(r.simulated_cycles), false);
  }
  auto mape = [](const ErrorStats& e) { return 100 * e.mape(); };
  std::vector<std::string> machines;
  for (const auto& r : results)
    if (std::find(machines.begin(), machines.end(), r.bench.topology) == machines.end())
      machines.push_back(r.bench.topology);
  // The fit's own cases: those paper gives a volume (its NONE and LOCAL-free halos and
  // OUTP-peer gathers stay 0 cycles) that the simulator timed.
  const auto fitted = std::count_if(points.begin(), points.end(),
                                    [](const optimizer::CalibrationPoint& p) { return p.usable(); });
  std::ostringstream about;
  about << std::setprecision(4) << "fitted on the " << fitted << " microbenchmarks paper gives a volume (of "
        << results.size() << "), on " << join(machines)
        << " with the routers and links of " << hw_file << "; paper MAPE "
        << fixed(mape(all_before), 1) << "% before, " << fixed(mape(all_after), 1)
        << "% after over the " << all_before.count
        << " that move data (what paper calls free, halos included, stays 0 cycles)";
  write_file(fs::path(dir) / "calibration.yaml",
             optimizer::paper_calibration_yaml(c, about.str()) +
                 optimizer::linkload_calibration_yaml(slowdowns) +
                 calibration_scope_yaml(machines, base));
  out << "\n  paper model calibrated: B_NoC " << std::setprecision(2) << c.bnoc_bytes_per_cycle
      << " bytes/cycle (was " << b0 << "), latency " << c.latency_cycles << " cycles (was 0)\n  "
      << "every case, below saturation or not:\n  "
      << std::left << std::setw(kTypeWidth) << "type" << std::right << std::setw(14) << "MAPE before"
      << std::setw(14) << "MAPE after" << "\n";
  for (const auto& type : types) {
    const auto& [before, after] = before_after[type];
    out << "  " << std::left << std::setw(kTypeWidth) << type << std::right << std::setw(14)
        << error_percent(before.count, before.mape()) << std::setw(14)
        << error_percent(after.count, after.mape())
        << (before.still ? "  (" + std::to_string(before.still) + " moving nothing)" : "") << "\n";
  }
  out << "  " << std::left << std::setw(kTypeWidth) << "all" << std::right << std::setw(14)
      << error_percent(all_before.count, all_before.mape()) << std::setw(14)
      << error_percent(all_after.count, all_after.mape()) << "\n";
}

void write_messages(const std::string& dir, const HwSpec& hw, const BenchResult& r) {
  std::string topology = r.bench.topology;
  std::replace(topology.begin(), topology.end(), ' ', '_');
  const fs::path folder = fs::path(dir) / "messages";
  create_folder(folder);
  write_file(folder / (topology + ".yaml"), resolved_yaml(hw));
  const std::string name =
      topology + "_" + r.bench.type + "_" + std::to_string(r.bench.tensor_bytes) + ".txt";
  OutputFile f(folder / name);
  f << "# " << r.bench.topology << " " << r.bench.type << " " << r.bench.tensor_bytes
    << " B: " << r.producer << " -> " << r.consumer << ", simulated " << r.simulated_cycles
    << " cycles\n"
    << "# replay: nocflow traffic --hw " << (folder / (topology + ".yaml")).string()
    << " --messages " << (folder / name).string() << " --out DIR\n# machine: " << r.bench.topology
    << "\n# src dst bytes\n";
  for (const noc::BatchMessage& m : r.sends) f << m.src << " " << m.dst << " " << m.bytes << "\n";
  f.close();
}

}  // namespace nocflow::sim
