// SPDX-License-Identifier: MIT
// `nocflow validate`: the analytic cost models against cycle-level microbenchmarks of every
// redistribution type, over mesh sizes and tensor sizes (issue 7; first part).
#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <regex>
#include <sstream>
#include <tuple>

#include "noc/base/error.h"
#include "noc/base/format.h"
#include "noc/base/names.h"
#include "noc/router/routing.h"
#include "optimizer/cost/paper_calibration.h"
#include "sim/cli/command.h"
#include "sim/config/hw_loader.h"
#include "sim/lower/priced_inputs.h"
#include "sim/lower/workload_setup.h"
#include "sim/output/output_file.h"
#include "sim/validate/microbench.h"
#include "sim/validate/rank.h"

namespace nocflow::sim::cli {
namespace {

namespace fs = std::filesystem;

struct ValidateArgs {
  HwOptions hw;
  std::vector<std::string> meshes = {"2", "4", "8", "16"};  ///< K (K x K) or RxC
  int crossbar = 16;
  std::vector<std::string> sizes = {"1KiB", "4KiB", "16KiB", "64KiB", "256KiB", "1MiB", "4MiB"};
  std::vector<std::string> types;
  bool calibrate = false;
  bool dump_messages = false;
  bool quiet = false;  // no line per case or replay
  std::string out;
  // --rank: plan ranking (sim/validate/rank.h) instead of the microbenchmarks.
  bool rank = false;
  std::string calibration;  // --rank: calibration.yaml for the cost models
  NetworkOptions net;
  int k = 10;
  std::string mode = "dataflow";
  int jobs = 1;
  int placements = 4;
};

/// Removes what an earlier validate run wrote into `out` (the microbenchmarks' files and the
/// ranking's; each run rewrites its own, so none is left from before: an earlier calibration,
/// other cases' messages, other plan ids) when the folder holds such a run (config.resolved.yaml
/// beside validation.csv or rank.csv). Another folder is left alone (its plans/ or messages/
/// are not validate's to remove), and so is `input`, a file this run reads (--calibration in the
/// folder of the run that fitted it).
void clear_earlier_run(const std::string& out, const std::string& input = "") {
  static const char* const written[] = {"validation.csv",  "summary.csv",      "calibration.yaml",
                                        "messages",        "rank.csv",         "rank_summary.csv",
                                        "rank_placements.csv", "plans"};
  const fs::path dir(out);
  std::error_code ignored;
  if (!fs::exists(dir / "config.resolved.yaml") ||
      !(fs::exists(dir / "validation.csv") || fs::exists(dir / "rank.csv")))
    return;
  std::vector<std::string> stale;
  for (const char* name : written)
    if (input.empty() || !fs::equivalent(dir / name, input, ignored)) stale.push_back(name);
  remove_stale_outputs(out, stale);
}

/// OUT/messages/<topology>_<type>_<bytes>.txt, the case's sends as a `traffic --messages` file,
/// and OUT/messages/<topology>.yaml, the machine it ran on.
void write_messages(const std::string& out, const HwSpec& hw, const BenchResult& r) {
  std::string topology = r.bench.topology;
  std::replace(topology.begin(), topology.end(), ' ', '_');
  const fs::path dir = fs::path(out) / "messages";
  create_folder(dir);
  write_file(dir / (topology + ".yaml"), resolved_yaml(hw));
  const std::string name =
      topology + "_" + r.bench.type + "_" + std::to_string(r.bench.tensor_bytes) + ".txt";
  OutputFile f(dir / name);
  f << "# " << r.bench.topology << " " << r.bench.type << " " << r.bench.tensor_bytes
    << " B: " << r.producer << " -> " << r.consumer << ", simulated " << r.simulated_cycles
    << " cycles\n"
    << "# replay: nocflow traffic --hw " << (dir / (topology + ".yaml")).string() << " --messages "
    << (dir / name).string() << " --out DIR\n# src dst bytes\n";
  for (const noc::BatchMessage& m : r.sends) f << m.src << " " << m.dst << " " << m.bytes << "\n";
  f.close();
}

/// Tensor sizes up to 64 MiB: beyond, the benchmark layers' weights (C^2 for C channels) pass
/// what any SRAM could hold.
constexpr std::int64_t kMaxBenchBytes = std::int64_t{64} << 20;

/// A tensor size as the config writes byte counts ("4KiB", "1 MiB", "512"), or with a unit of
/// bytes ("512B", "512 B").
std::int64_t parse_size(const std::string& s) {
  std::string text = s;
  if (text.size() > 1 && text.back() == 'B' && text[text.size() - 2] != 'i') {
    text.pop_back();
    while (!text.empty() && text.back() == ' ') text.pop_back();
  }
  const std::optional<std::int64_t> v = parse_integer(text, true);
  if (v && *v >= 64 && *v <= kMaxBenchBytes) return *v;
  // A count of a unit that is too large for 64 bits reads as none, but is a size all the same.
  static const std::regex count(R"(-?[0-9]+ *(KiB|MiB|GiB)?)");
  if (v || std::regex_match(text, count))
    throw InputError("--sizes: " + s + " is outside 64 B .. 64 MiB");
  throw InputError("--sizes: cannot read '" + s + "' (write e.g. 1KiB, 4MiB, 512B or 512)");
}

/// A case is near saturation when its busiest link carried at least this many flits per cycle
/// over the redistribution's span (1 is a link's capacity).
constexpr double kNearSaturation = 0.8;

/// A --meshes item: "K" for a K x K mesh or "RxC", each side 1 .. 64 and at least two PEs
/// (spaces around a number allowed, as in "2, 4").
std::pair<int, int> mesh_shape(const std::string& text) {
  const std::size_t x = text.find_first_of("xX");
  auto side = [&](std::string part) {
    part.erase(0, part.find_first_not_of(' '));
    part.erase(part.find_last_not_of(' ') + 1);
    int k = 0;
    const auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), k);
    if (ec != std::errc{} || end != part.data() + part.size() || part.empty())
      throw InputError("--meshes: '" + text + "' is not K (a K x K mesh) or RxC, e.g. 8 or 4x8");
    if (k < 1 || k > 64)
      throw InputError("--meshes: side " + part + " of '" + text + "' is outside 1 .. 64");
    return k;
  };
  const std::pair<int, int> shape =
      x == std::string::npos ? std::pair{side(text), side(text)} : std::pair{side(text.substr(0, x)), side(text.substr(x + 1))};
  if (shape.first * shape.second < 2)
    throw InputError("--meshes: '" + text + "' has one PE; a redistribution needs at least two");
  return shape;
}

int run_rank(const ValidateArgs& a) {
  if (a.net.network.empty())
    throw InputError("--rank needs --network (the network whose plans to rank)");
  if (a.calibrate)
    throw InputError("--calibrate: fits the microbenchmarks, not with --rank (to rank calibrated models: --calibration FILE)");
  const HwSpec spec = a.hw.load();
  RankOptions o;
  o.network = a.net.network;
  o.batch = a.net.batch;
  o.passes = a.net.passes;
  o.train = a.net.train;
  o.k = a.k;
  o.mode = a.mode == "barrier" ? ExecMode::Barrier : ExecMode::Dataflow;
  o.jobs = a.jobs;
  o.calibration = a.calibration;
  o.placements = a.placements;
  // Refused before the banner: a network, or a calibration, that does not load or apply.
  const optimizer::Graph graph = prepare_network(o.network, o.batch, spec, o.passes, o.train);
  optimizer::HwDesc calibrated = hw_desc_of(spec);  // rank_plans calibrates its own
  const std::vector<std::string> notes =
      a.calibration.empty() ? std::vector<std::string>{} : apply_calibration(a.calibration, spec, calibrated, true);
  std::cout << "nocflow validate --rank: " << a.net.network << ", the " << a.k << " best plans of each cost model"
            << (a.calibration.empty() ? "" : " (calibrated by " + a.calibration + ")") << ", " << a.mode
            << " replay, on " << one_line_summary(spec) << std::endl;
  for (const std::string& note : notes) std::cout << "  note: " << note << "\n";  // --quiet too
  std::ostream discard(nullptr);  // --quiet: progress goes nowhere
  const RankReport report = rank_plans(spec, graph, o, a.quiet ? discard : std::cout);
  clear_earlier_run(a.out, a.calibration);
  prepare_output_dir(a.out, spec);
  const std::string written = write_rank_files(a.out, report);
  print_rank_table(std::cout, report);
  std::cout << "nocflow: wrote " << a.out << "/" << written << ", config.resolved.yaml\n";
  return 0;
}

/// DIR/summary.csv and the tables of each model's error per type: all cases and below
/// saturation, where the simulated time goes, and what bounds the edge.
void write_summary(const std::string& out, const std::vector<std::string>& types,
                   std::map<std::pair<std::string, std::string>, ErrorStats>& summary,
                   std::map<std::tuple<std::string, std::string, bool>, ErrorStats>& by_bound,
                   const DecompositionSummary& decomposition) {
  OutputFile sum(fs::path(out) / "summary.csv");
  sum << "type,model,cases_below_saturation,mape,max_error,cases_near_saturation,mape_all,max_error_all,"
         "cases_moving_nothing,cases_skipped," << DecompositionSummary::csv_header()
      << ",cases_endpoint_bound,mape_endpoint_bound,max_error_endpoint_bound,cases_router_bound,"
         "mape_router_bound,max_error_router_bound\n";
  std::cout << std::fixed << "\n  each model's error against the simulated cycles: below saturation (busiest link < "
            << std::setprecision(1) << kNearSaturation << " flits/cycle), and over all cases\n  "
            << std::string(kTypeWidth + 16, ' ') << std::setw(29) << "--- below saturation ---"
            << std::setw(29) << "------ all cases ------" << "\n  " << std::left
            << std::setw(kTypeWidth) << "type" << std::setw(16) << "model" << std::right
            << std::setw(7) << "cases" << std::setw(10) << "MAPE" << std::setw(12) << "max error"
            << std::setw(7) << "cases" << std::setw(10) << "MAPE" << std::setw(12) << "max error"
            << "\n";
  for (const auto& type : types)
    for (const std::string& model : bench_models()) {
      const ErrorStats& e = summary[{type, model}];
      const int all = e.count + e.near;
      const double mape_all = all ? e.sum_all / all : 0;
      sum << type << "," << model << "," << e.count << "," << error_csv(e.count, e.mape()) << ","
          << error_csv(e.count, e.max) << "," << e.near << "," << error_csv(all, mape_all) << ","
          << error_csv(all, e.max_all) << "," << e.still << "," << e.skipped << ","
          << decomposition.csv_columns(type, model);
      for (bool router : {false, true}) {
        const ErrorStats& b = by_bound[{type, model, router}];
        sum << "," << b.count << "," << error_csv(b.count, b.mape()) << ","
            << error_csv(b.count, b.max);
      }
      sum << "\n";
      std::cout << "  " << std::left << std::setw(kTypeWidth) << type << std::setw(16) << model
                << std::right << std::setw(7) << e.count << std::setw(10)
                << error_percent(e.count, e.mape()) << std::setw(12) << error_percent(e.count, e.max)
                << std::setw(7) << all << std::setw(10) << error_percent(all, mape_all)
                << std::setw(12) << error_percent(all, e.max_all);
      if (e.still) std::cout << "  (+" << e.still << " moving nothing, predicted and simulated 0)";
      if (e.skipped) std::cout << "  (" << e.skipped << " skipped: no such choice pair)";
      std::cout << "\n";
    }
  sum.close();
  decomposition.print(std::cout, types);
  std::cout << "\n  linkload below saturation, by what bounds the edge: a router-to-router link carried more\n"
               "  flits than any PE's injection or ejection channel (router), or not (endpoint)\n  "
            << std::left << std::setw(kTypeWidth) << "type" << std::setw(16) << "model" << std::right << std::setw(10)
            << "endpoint" << std::setw(10) << "MAPE" << std::setw(12) << "max error" << std::setw(10) << "router"
            << std::setw(10) << "MAPE" << std::setw(12) << "max error" << "\n";
  for (const auto& type : types)
    for (const char* model : {"linkload", "linkload_fitted"}) {
      std::cout << "  " << std::left << std::setw(kTypeWidth) << (model == std::string("linkload") ? type : "")
                << std::setw(16) << model << std::right;
      for (bool router : {false, true}) {
        const ErrorStats& b = by_bound[{type, model, router}];
        std::cout << std::setw(10) << b.count << std::setw(10) << error_percent(b.count, b.mape())
                  << std::setw(12) << error_percent(b.count, b.max);
      }
      std::cout << "\n";
    }
}

/// --calibrate: fits paper's B_NoC and latency to the cases `results`, writes DIR/calibration.yaml
/// (with each machine's router contention `slowdowns`) and prints paper's error before and after.
void write_calibration(const ValidateArgs& a, const HwSpec& base, const std::vector<std::string>& types,
                       const std::vector<BenchResult>& results,
                       const std::map<std::string, double>& slowdowns) {
  // paper predicted V * h_avg / B0 with B0 one link's bytes per cycle and no latency.
  const double b0 = base.link.width_bytes;
  std::vector<optimizer::CalibrationPoint> points;
  for (const auto& r : results) points.push_back({r.paper_cycles * b0, static_cast<double>(r.simulated_cycles)});
  const optimizer::PaperCalibration c = optimizer::fit_paper_calibration(points);
  std::map<std::string, std::pair<ErrorStats, ErrorStats>> before_after;
  ErrorStats all_before, all_after;
  for (const auto& r : results) {
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
  std::ostringstream about;
  about << std::setprecision(4) << "fitted on " << all_before.count
        << " microbenchmarks that move data (of " << results.size() << "), on " << join(machines)
        << " with the routers and links of " << a.hw.file << "; paper MAPE "
        << fixed(mape(all_before), 1) << "% before, " << fixed(mape(all_after), 1)
        << "% after (what paper calls free, halos included, stays 0 cycles)";
  write_file(fs::path(a.out) / "calibration.yaml",
             optimizer::paper_calibration_yaml(c, about.str()) +
                 optimizer::linkload_calibration_yaml(slowdowns) +
                 calibration_scope_yaml(machines, base));
  std::cout << "\n  paper model calibrated: B_NoC " << std::setprecision(2) << c.bnoc_bytes_per_cycle
            << " bytes/cycle (was " << b0 << "), latency " << c.latency_cycles << " cycles (was 0)\n  "
            << std::left << std::setw(kTypeWidth) << "type" << std::right << std::setw(14) << "MAPE before"
            << std::setw(14) << "MAPE after" << "\n";
  for (const auto& type : types) {
    const auto& [before, after] = before_after[type];
    std::cout << "  " << std::left << std::setw(kTypeWidth) << type << std::right << std::setw(14)
              << error_percent(before.count, before.mape()) << std::setw(14)
              << error_percent(after.count, after.mape())
              << (before.still ? "  (" + std::to_string(before.still) + " moving nothing)" : "")
              << "\n";
  }
  std::cout << "  " << std::left << std::setw(kTypeWidth) << "all" << std::right << std::setw(14)
            << error_percent(all_before.count, all_before.mape()) << std::setw(14)
            << error_percent(all_after.count, all_after.mape()) << "\n";
}

int run(const ValidateArgs& a) {
  if (a.rank) return run_rank(a);
  if (!a.calibration.empty())
    throw InputError("--calibration: only with --rank (the microbenchmarks fit their own: --calibrate)");
  for (const std::string& o : a.hw.overrides)
    if (o.rfind("topology.", 0) == 0)
      throw InputError("--set " + o + ": the microbenchmarks run on the machines --meshes and "
                       "--crossbar name, each the config with its topology replaced");
  const HwSpec base = a.hw.load();
  std::vector<std::string> types = a.types.empty() ? bench_types() : a.types;
  for (const auto& t : types)
    if (std::find(bench_types().begin(), bench_types().end(), t) == bench_types().end())
      throw InputError("--types: " + unknown_name_message("type", t, bench_types()));
  std::vector<std::int64_t> sizes;
  for (const auto& s : a.sizes) sizes.push_back(parse_size(s));
  // A value given twice would run its cases twice and count them twice in the summary.
  auto once = [](const char* option, auto values) {
    std::sort(values.begin(), values.end());
    if (const auto twice = std::adjacent_find(values.begin(), values.end());
        twice != values.end()) {
      std::ostringstream text;
      text << *twice;
      throw InputError(std::string(option) + ": " + text.str() + " given twice");
    }
  };
  once("--types", types);
  once("--sizes", sizes);
  std::vector<HwSpec> machines;
  std::vector<std::pair<int, int>> meshes;
  for (const std::string& text : a.meshes) {
    const auto [rows, cols] = meshes.emplace_back(mesh_shape(text));
    HwSpec m = base;
    m.topology = {"mesh", rows, cols, 0};
    machines.push_back(m);
  }
  std::vector<std::string> shapes;
  for (const auto& [rows, cols] : meshes)
    shapes.push_back(std::to_string(rows) + "x" + std::to_string(cols));
  once("--meshes", shapes);
  if (a.crossbar < 0 || a.crossbar == 1 || a.crossbar > 64)
    throw InputError("--crossbar: ports must be 0 (none) or 2 .. 64");
  if (a.crossbar > 0) {
    HwSpec x = base;
    x.topology = {"crossbar", 0, 0, a.crossbar};
    if (const std::string why = noc::routing_mismatch(x.router.routing, "crossbar"); !why.empty())
      throw InputError("--crossbar: router.routing " + why +
                       "; add --crossbar 0 to run the meshes only");
    machines.push_back(x);
  }
  if (a.calibrate) {  // checked before anything runs: the fit needs two cases paper prices
    // paper prices NONE, halos and OUTP-peer all-gathers (its NONE or LOCAL) at no volume.
    const std::vector<std::string> free = {"NONE", "HALO", "HALO_2D", "GROUP_GATHER"};
    const auto priced = std::count_if(types.begin(), types.end(), [&](const std::string& t) {
      return std::find(free.begin(), free.end(), t) == free.end();
    });
    const auto cases = static_cast<std::size_t>(priced) * sizes.size() * machines.size();
    if (cases < 2)
      throw InputError("--calibrate: fits the paper model on at least two cases it gives a volume "
                       "(not NONE, HALO, HALO_2D or GROUP_GATHER, which it calls free); these "
                       "--types, --sizes and machines give " + std::to_string(cases));
  }
  clear_earlier_run(a.out);
  prepare_output_dir(a.out, base);

  OutputFile csv(fs::path(a.out) / "validation.csv");
  csv << "topology,type,tensor_bytes,producer,consumer,bytes_moved,paper_cycles,linkload_cycles,"
         "simulated_cycles,paper_error,linkload_error,busiest_link_flits_per_cycle,"
      << decomposition_csv_header()
      << ",busiest_link_kind,busiest_router_link_flits,busiest_endpoint_flits,messages,linkload_"
         "fitted_cycles,"
         "linkload_fitted_error,router_slowdown,slowdown_fitted_here,busiest_endpoint_busy_share,"
         "busiest_router_link_vc_starved_cycles\n";
  std::map<std::pair<std::string, std::string>, ErrorStats> summary;  // (type, model)
  std::map<std::tuple<std::string, std::string, bool>, ErrorStats> by_bound;  // (type, model, router-bound)
  DecompositionSummary decomposition;  // below saturation
  std::vector<BenchResult> results;  // for calibration
  const std::size_t total = machines.size() * types.size() * sizes.size();
  std::string topologies;
  for (const HwSpec& m : machines)
    topologies += (topologies.empty() ? "" : ", ") +
                  (m.topology.kind == "crossbar"
                       ? "crossbar " + std::to_string(m.topology.ports)
                       : std::to_string(m.topology.rows) + "x" + std::to_string(m.topology.cols));
  auto count = [](std::size_t n, const char* what) {
    return std::to_string(n) + " " + what + (n == 1 ? "" : "s");
  };
  std::cout << "nocflow validate: " << count(total, "case") << " (" << count(types.size(), "type")
            << " x " << count(sizes.size(), "size") << ") on " << topologies << "; each machine is "
            << a.hw.file << " with its topology replaced: " << components_summary(base)
            << std::endl;
  const int count_width = static_cast<int>(std::to_string(total).size());
  std::size_t done = 0;
  std::map<std::string, double> slowdowns;  // by topology; 0 without a router-bound case
  for (const HwSpec& hw : machines) {
    std::vector<BenchCase> cases;
    for (const std::string& type : types)
      for (std::int64_t size : sizes) cases.push_back({"", type, size});
    const auto progress = [&](const BenchResult& r) {
      ++done;
      if (a.quiet) return;
      std::cout << "  [" << std::right << std::setw(count_width) << done << "/" << total << "] "
                << std::left << std::setw(12) << r.bench.topology << std::setw(kTypeWidth)
                << r.bench.type << std::right << std::setw(9) << r.bench.tensor_bytes << " B: ";
      if (r.run)
        std::cout << "simulated " << std::setw(8) << r.simulated_cycles << ", paper "
                  << std::setw(10) << fixed(r.paper_cycles, 0) << ", linkload " << std::setw(8)
                  << fixed(r.linkload_cycles, 0) << " cycles" << std::endl;
      else
        std::cout << "no choice pair of this type, skipped" << std::endl;
    };
    std::vector<BenchResult> machine;  // the cases run, in case order
    for (BenchResult& r : run_benches(hw, cases, a.jobs, progress)) {
      if (r.run)
        machine.push_back(std::move(r));
      else
        for (const std::string& model : bench_models()) ++summary[{r.bench.type, model}].skipped;
    }
    // The router slowdown is known once the machine's cases have run.
    const double s = fit_router_slowdown(machine);
    if (!machine.empty()) slowdowns[machine.front().bench.topology] = s;
    for (const BenchResult& r : machine) {
      const std::string& type = r.bench.type;
      const double fitted = r.linkload_fitted_cycles();
      auto rel = [&](double p) {
        return r.simulated_cycles > 0 ? (p - r.simulated_cycles) / r.simulated_cycles : 0.0;
      };
      csv << r.bench.topology << "," << type << "," << r.bench.tensor_bytes << ",\"" << r.producer
          << "\",\"" << r.consumer << "\"," << r.bytes_moved << "," << r.paper_cycles << ","
          << r.linkload_cycles << "," << r.simulated_cycles << "," << rel(r.paper_cycles) << ","
          << rel(r.linkload_cycles) << "," << r.max_link_utilisation << ","
          << decomposition_csv_columns(r) << "," << (r.router_bound() ? "router" : "endpoint")
          << "," << r.busiest_router_link_flits << "," << r.busiest_endpoint_flits << ","
          << r.messages << "," << fitted << "," << rel(fitted) << "," << r.router_slowdown << ","
          << (r.slowdown_fitted_here ? 1 : 0) << "," << r.busiest_endpoint_busy_share << ","
          << r.busiest_router_link_vc_starved << "\n";
      if (a.dump_messages && !r.sends.empty()) write_messages(a.out, hw, r);
      results.push_back(r);
      const bool near = r.max_link_utilisation >= kNearSaturation;
      if (!near) decomposition.add(r);
      const auto sim = static_cast<double>(r.simulated_cycles);
      for (const std::string& model : bench_models())
        if (r.scores(model)) {
          summary[{type, model}].add(r.predicted(model), sim, near);
          by_bound[{type, model, r.router_bound()}].add(r.predicted(model), sim, near);
        }
    }
  }
  csv.close();

  write_summary(a.out, types, summary, by_bound, decomposition);
  std::cout << "\n  router contention s (linkload_fitted), fitted per machine on its router-bound "
               "case with the\n"
               "  busiest router-to-router link (slowdown_fitted_here in validation.csv; 0: no "
               "such case):\n ";
  if (slowdowns.empty()) std::cout << " none";
  for (const auto& [topology, s] : slowdowns) std::cout << "  " << topology << " " << fixed(s, 3);
  std::cout << "\n";
  std::string written = "validation.csv, summary.csv, config.resolved.yaml";
  if (a.dump_messages) written += ", messages/";
  if (a.calibrate) {
    write_calibration(a, base, types, results, slowdowns);
    written += ", calibration.yaml";
  }
  std::cout << "nocflow: wrote " << a.out << "/" << written << "\n";
  return 0;
}

}  // namespace

void add_validate_command(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand("validate", "analytic cost models against cycle-level microbenchmarks");
  auto a = std::make_shared<ValidateArgs>();
  a->hw.add_to(*cmd);
  cmd->add_option("--meshes", a->meshes, "meshes to test: K for K x K, or RxC (rows x columns)")
      ->capture_default_str()
      ->delimiter(',');
  cmd->add_option("--crossbar", a->crossbar, "crossbar ports to test (0: none)")->capture_default_str();
  cmd->add_option("--sizes", a->sizes,
                  "tensor sizes, 64 B .. 64 MiB, e.g. 1KiB,64KiB,4MiB (a bare number: bytes)")
      ->capture_default_str()
      ->delimiter(',');
  cmd->add_option("--types", a->types, "redistribution types (default: all)")->delimiter(',');
  cmd->add_flag("--calibrate", a->calibrate,
                "fit the paper model's B_NoC and a fixed latency; write them and the router slowdowns to calibration.yaml");
  cmd->add_flag("--rank", a->rank,
                "instead: replay the k best plans of each cost model, rank correlation and regret (needs --network)");
  a->net.add_to(*cmd);
  cmd->get_option("--network")->required(false);  // only --rank reads a network
  cmd->add_flag("--dump-messages", a->dump_messages,
                "write each case's sends to OUT/messages/ (nocflow traffic --messages replays "
                "them; not cases run as ring rounds: ALL_REDUCE, and any case whose transfers "
                "all run in rings under lowering.all_gather ring or auto)")
      ->excludes("--rank");
  // Each plan is a replay of the whole network (minutes for resnet50): 1,000 would take days.
  cmd->add_option("--k", a->k, "--rank: plans per cost model")
      ->capture_default_str()
      ->check(in_range(1, 1000));
  cmd->add_option("--jobs", a->jobs,
                  "simulations run at once, one process each (microbenchmarks: two per case, "
                  "as is and contention-free; --rank: plan replays)")
      ->capture_default_str()
      ->check(in_range(1, 256));
  cmd->add_option("--placements", a->placements,
                  "--rank: replay each k-best plan on this many equivalent placements (mirror "
                  "images the routing "
                  "commutes with, identity included; 1: the plans as placed): the simulator's own "
                  "resolution")
      ->capture_default_str()
      ->check(at_least(1));
  cmd->add_option("--calibration", a->calibration,
                  "--rank: calibration.yaml (validate --calibrate) for the cost models, as optimize --calibration")
      ->type_name("FILE");
  cmd->add_option(
         "--mode", a->mode,
         "--rank: replay mode, dataflow (as deployed: regret is real) | barrier (phases isolated, "
         "as the models add them)")
      ->check(one_of("mode", {"dataflow", "barrier"}))
      ->capture_default_str();
  cmd->add_flag("--quiet", a->quiet, "no progress line per case (per replay with --rank)");
  cmd->add_option("--out", a->out, "output folder")->required()->type_name("DIR");
  // The two jobs read disjoint options: one given to the other job is a mistake, not ignored.
  CLI::Option* rank = cmd->get_option("--rank");
  for (const char* micro : {"--meshes", "--crossbar", "--sizes", "--types"}) rank->excludes(cmd->get_option(micro));
  for (const char* ranked :
       {"--network", "--batch", "--passes", "--train", "--k", "--mode", "--placements"})
    cmd->get_option(ranked)->needs(rank);
  cmd->callback([a, &action] { action = [a] { return run(*a); }; });
}

}  // namespace nocflow::sim::cli
