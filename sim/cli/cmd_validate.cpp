// SPDX-License-Identifier: MIT
// `nocflow validate`: the analytic cost models against cycle-level microbenchmarks of every
// redistribution type, over mesh sizes and tensor sizes (issue 7; first part).
#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <map>
#include <regex>
#include <sstream>

#include "noc/base/error.h"
#include "noc/base/format.h"
#include "noc/base/names.h"
#include "noc/router/routing.h"
#include "optimizer/cost/cost_model.h"
#include "sim/cli/command.h"
#include "sim/config/hw_loader.h"
#include "sim/lower/priced_inputs.h"
#include "sim/lower/workload_setup.h"
#include "sim/output/output_file.h"
#include "sim/run/child_process.h"
#include "sim/validate/microbench.h"
#include "sim/validate/microbench_report.h"
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
  std::vector<std::string> models = {"paper", "linkload"};  // --rank: the cost models ranked
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
                                        "rank_placements.csv", "plans",
                                        // scripts/plot_validation.py's figures of the earlier run
                                        "validation_error_vs_size.png", "validation_paper_error_vs_size.png",
                                        "validation_error_vs_mesh.png", "validation_fitted_error_vs_mesh.png",
                                        "validation_decomposition.png"};
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

/// A --meshes item: "K" for a K x K mesh or "RxC", each side 1 .. 64 and at least two PEs
/// (spaces around a number allowed, as in "2, 4").
std::pair<int, int> mesh_shape(const std::string& text) {
  const std::size_t x = text.find_first_of("xX");
  auto side = [&](std::string part) {
    part.erase(0, part.find_first_not_of(' '));
    part.erase(part.find_last_not_of(' ') + 1);
    int k = 0;
    const auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), k);
    if (ec != std::errc{} || end != part.data() + part.size() || !is_decimal_integer(part))
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
  for (std::size_t i = 0; i < a.models.size(); ++i)
    if (std::find(a.models.begin(), a.models.begin() + static_cast<std::ptrdiff_t>(i), a.models[i]) !=
        a.models.begin() + static_cast<std::ptrdiff_t>(i))
      throw InputError("--cost-models: " + a.models[i] + " is given twice");
  o.models = a.models;
  // Refused before the banner: a network, or a calibration, that does not load or apply.
  const optimizer::Graph graph = prepare_network(o.network, o.batch, spec, o.passes, o.train);
  optimizer::HwDesc calibrated = hw_desc_of(spec);  // rank_plans calibrates its own
  const std::vector<std::string> notes =
      a.calibration.empty() ? std::vector<std::string>{} : apply_calibration(a.calibration, spec, calibrated, true);
  std::cout << "nocflow validate --rank: " << a.net.network << ", the " << a.k << " best plans of "
            << (a.models.size() == 1 ? a.models[0] : "each cost model")
            << (a.calibration.empty() ? "" : " (calibrated by " + a.calibration + ")") << ", " << a.mode
            << " replay, on " << one_line_summary(spec) << std::endl;
  for (const std::string& note : graph.notes()) std::cout << "  note: " << note << "\n";
  for (const std::string& note : hw_notes(spec)) std::cout << "  note: " << note << "\n";
  for (const std::string& note : notes) std::cout << "  note: " << note << "\n";  // --quiet too
  // The folder before the replays (minutes for resnet50): one that cannot be made fails now.
  clear_earlier_run(a.out, a.calibration);
  prepare_output_dir(a.out, spec, {a.calibration, a.net.network});
  std::ostream discard(nullptr);  // --quiet: progress goes nowhere
  const RankReport report = rank_plans(spec, graph, o, a.quiet ? discard : std::cout);
  const std::string written = write_rank_files(a.out, report);
  print_rank_table(std::cout, report);
  std::cout << "nocflow: wrote " << a.out << "/" << written << ", config.resolved.yaml\n";
  return 0;
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
  for (const HwSpec& m : machines)  // a size that is no tensor's is refused before any case runs
    for (const std::int64_t bytes : sizes) tensor_shape(bytes, m.topology.num_nodes());
  if (a.calibrate) {  // checked before anything runs: the fit needs two cases paper prices
    // paper prices NONE, halos and OUTP-peer all-gathers (its NONE or LOCAL) at no volume, and
    // is not scored where it prices the edge within another type's row.
    const std::vector<std::string> free = {"NONE", "HALO", "HALO_2D", "GROUP_GATHER"};
    const auto priced = std::count_if(types.begin(), types.end(), [&](const std::string& t) {
      return paper_scores(t) && std::find(free.begin(), free.end(), t) == free.end();
    });
    const auto cases = static_cast<std::size_t>(priced) * sizes.size() * machines.size();
    if (cases < 2)
      throw InputError(
          "--calibrate: fits the paper model on at least two cases it gives a volume "
          "(not NONE, HALO, HALO_2D or GROUP_GATHER, which it calls free, nor "
          "AFTER_REDUCE, which it prices within ALL_REDUCE); these "
          "--types, --sizes and machines give " +
          std::to_string(cases));
  }
  clear_earlier_run(a.out);
  prepare_output_dir(a.out, base);

  ValidationReport report(a.out);
  const std::size_t total = machines.size() * types.size() * sizes.size();
  std::string topologies;
  for (const HwSpec& m : machines) {
    topologies += (topologies.empty() ? "" : ", ") +
                  (m.topology.kind == "crossbar"
                       ? "crossbar " + std::to_string(m.topology.ports)
                       : std::to_string(m.topology.rows) + "x" + std::to_string(m.topology.cols));
    // router.alloc_iterations 0 is by topology: say where a machine runs other than the file's.
    if (const int iterations = noc::alloc_iterations_for(m.router, m.topology);
        iterations != noc::alloc_iterations_for(base.router, base.topology))
      topologies += " (" + std::to_string(iterations) + " iSLIP iterations)";
  }
  auto count = [](std::size_t n, const char* what) {
    return std::to_string(n) + " " + what + (n == 1 ? "" : "s");
  };
  std::cout << "nocflow validate: " << count(total, "case") << " (" << count(types.size(), "type")
            << " x " << count(sizes.size(), "size") << " x " << count(machines.size(), "machine")
            << ") on " << topologies << "; each machine is "
            << a.hw.file << " with its topology replaced: " << components_summary(base)
            << std::endl;
  for (const std::string& note : hw_notes(base)) std::cout << "  note: " << note << "\n";
  const int count_width = static_cast<int>(std::to_string(total).size());
  std::size_t done = 0, written_rows = 0, dumped = 0;
  std::vector<std::string> finished;  // machines whose rows are in validation.csv
  // What an interrupt (Ctrl-C, a batch system's kill) leaves: rows are written a machine at a
  // time, once its router contention is fitted.
  auto interrupt_note = [&] {
    set_interrupt_note("nocflow validate: interrupted after " + std::to_string(done) + " of " +
                       std::to_string(total) + " cases; " + a.out + "/validation.csv holds " +
                       (finished.empty() ? "no case (a machine's rows are written when all its cases have run)"
                                         : "the " + count(written_rows, "case") + " of " + join(finished)) +
                       ", and summary.csv is not written\n");
  };
  const InterruptNoteScope note_scope;
  interrupt_note();
  std::map<std::string, double> slowdowns;  // by topology; 0 without a router-bound case
  for (const HwSpec& hw : machines) {
    std::vector<BenchCase> cases;
    for (const std::string& type : types)
      for (std::int64_t size : sizes) cases.push_back({"", type, size});
    const auto progress = [&](const BenchResult& r) {
      ++done;
      interrupt_note();
      if (a.quiet) return;
      std::cout << "  [" << std::right << std::setw(count_width) << done << "/" << total << "] "
                << std::left << std::setw(12) << r.bench.topology << std::setw(kTypeWidth)
                << r.bench.type << std::right << std::setw(9) << r.bench.tensor_bytes << " B: ";
      if (r.run)
        // paper prices AFTER_REDUCE within ALL_REDUCE: no figure of its own (it printed 0)
        std::cout << "simulated " << std::setw(8) << r.simulated_cycles << ", paper "
                  << std::setw(10) << (r.scores("paper") ? fixed(r.paper_cycles, 1) : "n/a")
                  << ", linkload " << std::setw(10) << fixed(r.linkload_cycles, 1) << " cycles"
                  << std::endl;
      else
        std::cout << "no choice pair of this type, skipped" << std::endl;
    };
    std::vector<BenchResult> machine;  // the cases run, in case order
    for (BenchResult& r : run_benches(hw, cases, a.jobs, progress)) {
      if (r.run)
        machine.push_back(std::move(r));
      else
        report.add(r);  // counted as skipped
    }
    // The router slowdown is known once the machine's cases have run.
    const double s = fit_router_slowdown(machine);
    if (!machine.empty()) slowdowns[machine.front().bench.topology] = s;
    for (const BenchResult& r : machine) {
      report.add(r);
      if (a.dump_messages && !r.sends.empty()) {
        write_messages(a.out, hw, r);
        ++dumped;
      }
    }
    report.flush();
    written_rows += machine.size();
    finished.push_back(hw.topology.name());  // as validation.csv names it
    interrupt_note();
  }
  set_interrupt_note("");
  report.finish(std::cout, types);
  std::cout << "\n  router contention s (linkload_fitted), fitted per machine on its router-bound "
               "case with the\n"
               "  busiest router-to-router link, of those whose busiest router link carries at "
               "least its\n  route's latency in flits (slowdown_fitted_here in validation.csv; "
               "0: no such case, so no\n  slowdown, though calibrated linkload still overlaps "
               "latency by the midpoint route):\n ";
  if (slowdowns.empty()) std::cout << " none";
  for (const auto& [topology, s] : slowdowns) std::cout << "  " << topology << " " << fixed(s, 3);
  std::cout << "\n";
  std::string written = "validation.csv, summary.csv, config.resolved.yaml";
  if (a.dump_messages)
    written += dumped > 0 ? ", messages/ (" + count(dumped, "case") + ")"
                          : " (no message files: ALL_REDUCE, cases run as rings and cases moving "
                            "nothing are not written)";
  if (a.calibrate) {
    write_calibration(a.out, a.hw.file, base, types, report.results(), slowdowns, std::cout);
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
  cmd->add_option("--types", a->types,
                  "redistribution types: " + join(bench_types()) + " (default: all)")
      ->delimiter(',');
  cmd->add_flag("--calibrate", a->calibrate,
                "fit the paper model's B_NoC and a fixed latency; write them and the router slowdowns to "
                "calibration.yaml (not with --rank, which reads one: --calibration)");
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
  cmd->add_option("--cost-models", a->models,
                  "--rank: the cost models whose plans to rank (paper's replay slowest: its plans "
                  "move the most data)")
      ->capture_default_str()
      ->delimiter(',')
      ->check(one_of("cost model", optimizer::cost_model_names()));
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
       {"--network", "--batch", "--passes", "--train", "--k", "--mode", "--placements", "--cost-models"})
    cmd->get_option(ranked)->needs(rank);
  cmd->callback([a, &action] { action = [a] { return run(*a); }; });
}

}  // namespace nocflow::sim::cli
