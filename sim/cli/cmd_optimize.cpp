// SPDX-License-Identifier: MIT
// `nocflow optimize`: partition every layer across the PEs (issue 5): load the machine and the
// network, enumerate and prune choices, tabulate a cost model, solve, write plan.yaml,
// summary.json and config.resolved.yaml; with --compare run every solver and write a table in
// the seed's Table 3 style.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

#include "noc/base/error.h"
#include "noc/base/format.h"
#include "noc/base/json_text.h"
#include "noc/base/names.h"
#include "optimizer/cost/cost_model.h"
#include "optimizer/cost/paper_calibration.h"
#include "optimizer/plan/pipeline.h"
#include "optimizer/plan/plan.h"
#include "optimizer/solver/ilp_formulation.h"
#include "optimizer/solver/problem.h"
#include "optimizer/solver/solver.h"
#include "optimizer/solver/tree_bound.h"
#include "sim/cli/optimize_command.h"
#include "sim/config/hw_loader.h"
#include "sim/lower/priced_inputs.h"
#include "sim/lower/workload_setup.h"
#include "sim/output/build_id.h"
#include "sim/output/output_file.h"
#include "sim/output/replay_summary.h"

namespace nocflow::sim::cli {

namespace opt = nocflow::optimizer;
namespace fs = std::filesystem;

nlohmann::ordered_json summary_head(const OptimizeArgs& a, const opt::Plan& plan) {
  nlohmann::ordered_json j;
  j["nocflow"] = nocflow_build();  // the version and commit that wrote it
  j["network"] = plan.network;
  j["batch"] = plan.batch;
  j["train"] = train_json(plan.train.value_or(""));
  j["solver"] = plan.solver;
  j["cost_model"] = a.cost_model;
  j["placement"] = a.placement;
  // What else the solve was given: a plan's cycles depend on every one of them.
  j["calibration"] = a.calibration;  // "" for none
  j["bnoc_bytes_per_cycle"] =
      a.bnoc > 0 ? nlohmann::ordered_json(a.bnoc) : nlohmann::ordered_json();
  j["memory_limit"] = a.memory_limit;
  j["exact_nodes"] = a.exact;
  j["pruned"] = !a.no_prune;
  j["time_limit_seconds"] = a.time_limit;
  return j;
}

namespace {

std::string sram_warning(const opt::Workload& w, const opt::Plan& plan, std::int64_t sram_bytes) {
  int over = 0;
  std::size_t worst = 0;
  double worst_bytes = 0;
  for (std::size_t l = 0; l < w.layers.size(); ++l) {
    const double bytes = opt::layer_memory_bytes(w.layers[l], plan.layers[l].choice);
    if (bytes <= static_cast<double>(sram_bytes)) continue;
    ++over;
    if (bytes > worst_bytes) worst = l, worst_bytes = bytes;
  }
  if (over == 0) return "";
  return "warning: " + counted(over, "layer") + " of this plan " + (over == 1 ? "needs" : "need") +
         " more than a PE's " + std::to_string(sram_bytes) +
         " bytes of SRAM (pe.sram_bytes; most: '" + w.layers[worst].name + "', " +
         std::to_string(static_cast<std::int64_t>(worst_bytes)) +
         " bytes per PE), so simulate will refuse it; without --no-memory-limit every layer "
         "stays within SRAM";
}

}  // namespace

std::vector<std::string> plan_notes(const OptimizeArgs& a, const HwSpec& spec,
                                    const opt::Graph& graph, const opt::Workload& w,
                                    const opt::Plan& plan) {
  std::vector<std::string> out;
  auto add = [&out](std::string note) {  // without the console's "note: "
    if (note.rfind("note: ", 0) == 0) note.erase(0, 6);
    if (!note.empty()) out.push_back(std::move(note));
  };
  add(single_pe_note(w, plan, spec));
  add(element_size_note(graph, spec, a.net.network));
  for (const std::string& note : hw_notes(spec)) add(note);
  if (!a.memory_limit) add(sram_warning(w, plan, spec.pe.sram_bytes));
  return out;
}

void print_notes(const std::vector<std::string>& notes) {
  for (const std::string& note : notes)
    std::cout << "  " << (note.rfind("warning: ", 0) == 0 ? "" : "note: ") << note << "\n";
}

namespace {

struct CompareRow {
  std::string method;
  opt::SolveResult result;
  opt::Plan plan;
  std::string failure;  ///< why the solver gave no solution (time limit), "" when it did
};

/// `notes`: every note and warning the console prints (the solver's first).
nlohmann::ordered_json summary_json(const OptimizeArgs& a, const opt::PartitionSetup& s,
                                    const opt::SolveResult& r, const opt::Plan& plan,
                                    const std::vector<std::string>& notes) {
  nlohmann::ordered_json j = summary_head(a, plan);
  j["total_cost_cycles"] = as_written(plan.total_cycles());
  j["compute_cycles"] = as_written(plan.compute_cycles);
  j["redistribution_cycles"] = as_written(plan.redistribution_cycles);
  j["energy_pj"] = as_written(plan.energy_pj);
  j["solve_seconds"] = r.seconds;
  j["tabulate_seconds"] = s.tabulate_seconds;
  j["prune_seconds"] = s.prune_seconds;
  j["pes"] = plan.pes;
  j["topology"] = plan.topology;
  j["layers"] = s.workload.layers.size();
  j["edges"] = s.workload.edges.size();
  j["choices_before_pruning"] = s.choices_before;
  j["choices_after_pruning"] = s.choices_after;
  if (r.ilp) {
    // lp_solve's optimum to 0.001 cycle (38933.75, not 38933.74999999999), still at most the
    // plan's cycles.
    const auto bound = [&](double c) {
      return std::min(std::round(c * 1000) / 1000, plan.total_cycles());
    };
    j["ilp"] = {
        {"formulation", r.ilp->formulation},
        {"choices", r.ilp->choices},
        {"choices_within_bound", r.ilp->choices_within_bound},
        {"bound_assignment_cycles", r.ilp->upper_bound},
        {"variables", r.ilp->variables},
        {"constraints", r.ilp->constraints},
        {"lp_relaxation",
         r.ilp->has_lp_relaxation ? nlohmann::json(bound(r.ilp->lp_relaxation)) : nlohmann::json()},
        {"lower_bound_cycles", bound(r.ilp->lower_bound)},
        {"gap", r.ilp->gap},
        {"optimal", r.ilp->optimal}};
  }
  j["notes"] = notes;
  j["units"] = {{"*_cycles", "clock cycles"}, {"energy_pj", "picojoules"},
                {"*_seconds", "seconds (wall clock)"}};
  if (r.ilp) {
    j["units"]["ilp.lp_relaxation"] = "clock cycles (the LP relaxation's optimum)";
    j["units"]["ilp.gap"] =
        "fraction of the solution's cycles (0.01 = 1 %) above lower_bound_cycles while not proven "
        "optimal; 0 once branch and bound proves it optimal (the bounds then stay below the "
        "optimum: they alone do not prove it)";
  }
  return j;
}

void compare(const OptimizeArgs& a, const opt::PartitionSetup& s, const opt::HwDesc& hw,
             const opt::CostModel& model) {
  std::vector<CompareRow> rows;
  auto run = [&](const std::string& label, const std::string& solver, const std::string& form) {
    opt::SolveOptions so{a.time_limit, form, "", true};
    if (solver == "ilp" && !a.quiet)  // the one that can take long: say so before it starts
      std::cout << "  compare: solving " << label << " (time limit " << shortest(a.time_limit)
                << " s) ..." << std::endl;
    const auto t0 = std::chrono::steady_clock::now();
    try {
      opt::SolveResult r = opt::make_solver(solver)->solve(s.problem, so);
      rows.push_back({label, r, opt::make_plan(s, r.choice, hw, model, solver), ""});
    } catch (const InputError& e) {  // e.g. no solution within the time limit: still a row
      CompareRow row{label, {}, {}, e.what()};
      row.result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      rows.push_back(std::move(row));
    }
  };
  run("greedy", "greedy", "flow");
  run("greedy-layout", "greedy-layout", "flow");
  run("dp", "dp", "flow");
  run("dp-local", "dp-local", "flow");
  run("ilp-flow", "ilp", "flow");
  run("ilp-mccormick", "ilp", "mccormick");
  const opt::Plan& base = rows.front().plan;
  // A plan as cheap as a proven optimum is optimal too, however it was found (greedy on a
  // 1x1 mesh, where every layer has one choice).
  double proven = std::numeric_limits<double>::infinity();
  for (const CompareRow& row : rows)
    if (row.failure.empty() && row.result.optimal)
      proven = std::min(proven, row.plan.total_cycles());
  OutputFile csv(fs::path(a.out) / "compare.csv");
  csv << "method,total_cycles,compute_cycles,redistribution_cycles,energy_pj,"
         "improvement_total_pct,improvement_redistribution_pct,solve_seconds,optimal\n";
  std::cout << "\n  " << std::left << std::setw(16) << "method" << std::right << std::setw(16)
            << "total" << std::setw(16) << "redistribution" << std::setw(10) << "total %"
            << std::setw(10) << "redist %" << std::setw(12) << "solve s" << "\n";
  for (const CompareRow& row : rows) {
    if (!row.failure.empty()) {
      csv << row.method << ",,,,,,," << row.result.seconds << ",0\n";
      std::cout << "  " << std::left << std::setw(16) << row.method << "  no solution after "
                << fixed(row.result.seconds, 1) << " s: " << row.failure << "\n";
      continue;
    }
    const double imp = base.total_cycles() > 0 ? 100 * (1 - row.plan.total_cycles() / base.total_cycles()) : 0;
    const double imp_r = base.redistribution_cycles > 0
                             ? 100 * (1 - row.plan.redistribution_cycles / base.redistribution_cycles) : 0;
    const bool optimal = row.result.optimal || row.plan.total_cycles() <= proven * (1 + 1e-12);
    csv << row.method << "," << std::setprecision(12) << row.plan.total_cycles() << ","
        << row.plan.compute_cycles << "," << row.plan.redistribution_cycles << "," << row.plan.energy_pj
        << "," << imp << "," << imp_r << "," << row.result.seconds << "," << (optimal ? 1 : 0) << "\n";
    std::cout << "  " << std::left << std::setw(16) << row.method << std::right << std::setw(16)
              << fixed(row.plan.total_cycles()) << std::setw(16) << fixed(row.plan.redistribution_cycles)
              << std::setw(10) << fixed(imp) << std::setw(10) << fixed(imp_r) << std::setw(12)
              << fixed(row.result.seconds, 4) << (optimal ? "" : "  (not proven optimal)") << "\n";
  }
  csv.close();
  std::cout << "  (cycles; improvement over greedy; ilp times include the LP relaxation solve)\n"
            << "  (solve s: on cost tables tabulated once for all, in " << fixed(s.tabulate_seconds, 4)
            << " s; run alone, greedy tabulates no edges and greedy-layout\n   only the rows it reads, "
               "within its solve time)\n";
}

/// The files this run writes into --out (config.resolved.yaml aside).
std::vector<std::string> run_outputs(const OptimizeArgs& a) {
  std::vector<std::string> names = {"plan.yaml", "plan.dot", "summary.json"};
  if (a.stages > 0) names.push_back("stages.csv");
  if (a.compare) names.push_back("compare.csv");
  return names;
}

/// --export-lp may not name a file this run reads or writes: it would be overwritten (an input,
/// exit 0) or lost (an output written after the LP).
void check_export_lp(const OptimizeArgs& a) {
  if (a.export_lp.empty()) return;
  const fs::path lp = fs::weakly_canonical(a.export_lp);
  const std::pair<const char*, std::string> inputs[] = {
      {"--hw", a.hw.file},
      {"--network", a.net.network.rfind("zoo:", 0) == 0 ? "" : a.net.network},
      {"--calibration", a.calibration}};
  for (const auto& [option, file] : inputs)
    if (!file.empty() && fs::weakly_canonical(file) == lp)
      throw InputError("--export-lp " + a.export_lp + ": the file " + option +
                       " reads, which it would overwrite: give another file");
  std::vector<std::string> outputs = run_outputs(a);
  outputs.push_back("config.resolved.yaml");
  for (const std::string& name : outputs)
    if (fs::weakly_canonical(fs::path(a.out) / name) == lp)
      throw InputError("--export-lp " + a.export_lp + ": this run writes its " + name +
                       " there, over the LP: give another file");
}

int run(const OptimizeArgs& a) {
  // Validate every name before any work or output.
  const std::unique_ptr<opt::Solver> solver = opt::make_solver(a.solver);
  const auto forms = opt::formulation_names();
  if (std::find(forms.begin(), forms.end(), a.formulation) == forms.end())
    throw InputError("--formulation: " + unknown_name_message("ILP formulation", a.formulation, forms));
  std::error_code unreadable;
  // The LP may go into the --out folder this run creates (before the solve writes it).
  const fs::path lp_folder = fs::path(a.export_lp).parent_path();
  const auto folder = [](const fs::path& p) {  // "DIR/" as "DIR"
    const fs::path c = fs::weakly_canonical(p);
    return c.has_filename() ? c : c.parent_path();
  };
  const bool lp_in_out = !lp_folder.empty() && folder(lp_folder) == folder(a.out);
  if (!lp_folder.empty() && !lp_in_out && !fs::is_directory(lp_folder, unreadable))
    throw InputError("--export-lp " + a.export_lp + ": cannot write: no folder " +
                     lp_folder.string());
  if (!a.export_lp.empty() && fs::is_directory(a.export_lp, unreadable))
    throw InputError("--export-lp " + a.export_lp + ": cannot write: it is a directory");
  check_export_lp(a);
  check_can_create_folder(a.out, "output folder");  // before the tabulation and the solve
  check_not_folders(a.out, run_outputs(a));
  const HwSpec spec = a.hw.load();
  check_placement(a.placement, spec);
  opt::HwDesc hw = hw_desc_of(spec, a.bnoc);
  // Printed after the banner and listed in summary.json, with the run's other notes.
  std::vector<std::string> calibration_notes;
  if (!a.calibration.empty()) {
    calibration_notes = apply_calibration(a.calibration, spec, hw, a.cost_model == "linkload");
    // What the model read from it (the console named only the file).
    if (a.cost_model == "paper")
      calibration_notes.insert(calibration_notes.begin(),
                               "calibrated paper: B_NoC " + fixed(hw.bnoc_bytes_per_cycle, 2) +
                                   " bytes/cycle, latency " + fixed(hw.paper_latency_cycles, 2) +
                                   " cycles (" + a.calibration + ")");
    else if (a.cost_model == "linkload" && hw.router_slowdown)
      calibration_notes.insert(calibration_notes.begin(),
                               "calibrated linkload: router contention s " +
                                   fixed(*hw.router_slowdown, 3) + " on " + spec.topology.name() +
                                   " (" + a.calibration + ")");
  }
  const auto model = opt::make_cost_model(a.cost_model, hw);
  const opt::Graph graph =
      prepare_network(a.net.network, a.net.batch, spec, a.net.passes, a.net.train);
  if (a.stages > 0) return run_pipeline(a, spec, hw, graph, calibration_notes);
  const opt::EdgeTables edge_tables = a.compare ? opt::EdgeTables::Full : solver->edge_tables();
  const opt::PartitionSetup s = opt::setup_partition(
      graph, hw, *model,
      {a.exact, a.memory_limit, !a.no_prune, a.placement == "search",
       a.quiet ? opt::TabulationProgress() : tabulation_progress(a.cost_model), edge_tables});
  opt::SolveOptions so{a.time_limit, a.formulation, a.export_lp, true};
  if (lp_in_out) fs::create_directories(a.out);
  if (a.solver == "ilp" && !a.quiet)
    std::cout << "nocflow optimize: solving the ILP (" << a.formulation << ", time limit "
              << shortest(a.time_limit) << " s) ..." << std::endl;
  const opt::SolveResult r = solver->solve(s.problem, so);
  prepare_output_dir(a.out, spec, {a.net.network, a.calibration, a.export_lp});
  opt::Plan plan = opt::make_plan(s, r.choice, hw, *model, a.solver);
  record_priced_inputs(plan, spec, graph, a.net.passes);
  plan.calibration = a.calibration;
  if (a.bnoc > 0) plan.bnoc = a.bnoc;
  // Every note and warning, as the console prints them and summary.json lists them.
  std::vector<std::string> notes = calibration_notes;
  for (const std::string& note : r.notes) notes.push_back(note);
  for (const std::string& note : graph.notes()) notes.push_back(note);
  for (const std::string& note : plan_notes(a, spec, graph, s.workload, plan))
    notes.push_back(note);
  write_file(fs::path(a.out) / "plan.yaml", opt::plan_yaml(plan));
  write_file(fs::path(a.out) / "plan.dot", opt::plan_dot(plan));
  write_file(fs::path(a.out) / "summary.json",
             json_text(summary_json(a, s, r, plan, notes), 2) + "\n");

  std::cout
      << "nocflow optimize: " << plan.network << training_note(training_optimizer(graph)) << " on "
      << one_line_summary(spec) << "\n"
      << "  layers " << s.workload.layers.size() << ", edges " << s.workload.edges.size()
      << ", choices " << s.choices_before
      << (edge_tables == opt::EdgeTables::Full && a.no_prune
              ? " (tabulated in " + fixed(s.tabulate_seconds, 3) + " s; not pruned: --no-prune)"
          : edge_tables == opt::EdgeTables::Full
              ? " -> " + std::to_string(s.choices_after) +
                    " after dominance pruning (tabulated in " + fixed(s.tabulate_seconds, 3) +
                    " s, pruned in " + fixed(s.prune_seconds, 3) + " s)"
          : edge_tables == opt::EdgeTables::Rows
              ? " (" + a.solver +
                    " reads one row per edge, computed as it decides: no edge tables, nothing "
                    "pruned)"
              : " (" + a.solver + " reads layer costs only: no edge tables, nothing pruned)")
      << "\n"
      << "  solver " << a.solver << (r.ilp ? " (" + r.ilp->formulation + ")" : "")
      << ", cost model " << a.cost_model << ": total " << fixed(plan.total_cycles())
      << " cycles = compute " << fixed(plan.compute_cycles) << " + redistribution "
      << fixed(plan.redistribution_cycles) << ", energy " << energy_text(plan.energy_pj)
      << ", solved in " << fixed(r.seconds, 4) << " s\n";
  if (r.ilp)
    std::cout << "  ilp: " << r.ilp->choices_within_bound << " of " << r.ilp->choices
              << " choices can be optimal (tree bound: the optimum is "
              << (opt::bound_met(r.ilp->lower_bound, r.ilp->upper_bound)
                      ? fixed(r.ilp->upper_bound)
                      : fixed(r.ilp->lower_bound) + " to " + fixed(r.ilp->upper_bound))
              << " cycles), " << r.ilp->variables << " variables, " << r.ilp->constraints
              << " constraints, LP relaxation "
              << (r.ilp->has_lp_relaxation ? fixed(r.ilp->lp_relaxation) + " cycles"
                                           : "not solved in time")
              // digits enough to show a gap that is not 0 (0.003 % printed "0.00 %")
              << ", gap " << fixed(100 * r.ilp->gap, r.ilp->gap > 0 && r.ilp->gap < 1e-4 ? 4 : 2)
              << " %" << (r.ilp->optimal ? ", optimal" : "") << "\n";
  print_notes(notes);
  if (a.compare) compare(a, s, hw, *model);
  std::cout << "nocflow: wrote " << a.out
            << "/plan.yaml, plan.dot, summary.json, config.resolved.yaml"
            << (a.compare ? ", compare.csv" : "")
            << (a.export_lp.empty() ? "" : "; and " + a.export_lp) << "\n";
  return 0;
}

}  // namespace

void add_optimize_command(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand("optimize", "partition every layer across the PEs (plan.yaml)");
  auto a = std::make_shared<OptimizeArgs>();
  a->hw.add_to(*cmd);
  a->net.add_to(*cmd);
  cmd->add_option("--solver", a->solver, "greedy | greedy-layout | dp | dp-local | ilp")
      ->check(one_of("solver", opt::solver_names()))
      ->capture_default_str();
  cmd->add_option("--cost-model", a->cost_model, "paper | linkload")
      ->check(one_of("cost model", opt::cost_model_names()))
      ->capture_default_str();
  auto* formulation =
      cmd->add_option("--formulation", a->formulation,
                      "ilp (and dp, on a graph it hands to the ilp): flow | mccormick")
          ->capture_default_str();
  cmd->add_flag("--compare", a->compare, "run every solver, write compare.csv and print a table");
  cmd->add_flag("--exact-nodes", a->exact,
                "only choices using exactly P PEs (a layer with no dimension to split keeps its "
                "one-PE choice; one whose splits cannot make P is refused)");
  // Two flags, not "--memory-limit,!--no-memory-limit": its help read "{false}" as the default.
  auto* limit = cmd->add_flag_callback(
      "--memory-limit", [a] { a->memory_limit = true; },
      "keep every layer's share within a PE's SRAM (pe.sram_bytes): the default");
  cmd->add_flag_callback(
         "--no-memory-limit", [a] { a->memory_limit = false; },
         "let layers overflow the SRAM (a warning: simulate refuses such plans)")
      ->excludes(limit);
  cmd->add_flag("--no-prune", a->no_prune, "keep dominated choices");
  add_placement_option(*cmd, a->placement);
  auto* time_limit =
      cmd->add_option(
             "--time-limit", a->time_limit,
             "ilp: branch and bound's time limit, seconds (the tree bound's pruning before "
             "it is not limited; also dp's, on a graph it hands to the ilp)")
          ->capture_default_str()
          ->check(in_range(0.001, 1e6));
  auto* bnoc = cmd->add_option("--bnoc", a->bnoc, "paper model B_NoC, bytes/cycle (0: one link)")
                   ->capture_default_str()
                   ->check(at_least(0));
  cmd->add_option("--calibration", a->calibration, "paper model B_NoC and latency, linkload router slowdown, from nocflow validate --calibrate")
      ->type_name("FILE")
      ->excludes(bnoc);
  auto* export_lp =
      cmd->add_option("--export-lp", a->export_lp,
                      "ilp: write the model to FILE (FILE.mps: free MPS; otherwise LP format)")
          ->type_name("FILE");
  auto* stages = cmd->add_option("--stages", a->stages,
                                 "pipeline: cut the layers into this many stages, each on its own "
                                 "band of mesh rows (crossbar ports), --solver inside each")
                     ->check(at_least(1));
  cmd->add_option("--micro-batches", a->micro_batches,
                  "pipeline: micro-batches (of --batch each) streamed through the stages")
      ->capture_default_str()
      ->check(in_range(1, optimizer::kMaxMicroBatches))
      ->needs(stages);
  cmd->add_flag("--resident-weights", a->resident_weights,
                "pipeline: a stage must hold all its layers' weights in SRAM at once (seed 004)")
      ->needs(stages);
  cmd->add_option("--out", a->out, "output folder")->required()->type_name("DIR");
  cmd->add_flag("--quiet", a->quiet, "no progress lines");
  cmd->callback([a, &action, formulation, time_limit, export_lp, stages, bnoc] {
    if (bnoc->count() > 0 && a->cost_model != "paper")
      throw CLI::ValidationError("--bnoc", "sets the paper model's B_NoC; --cost-model " +
                                               a->cost_model +
                                               " does not read it (give --cost-model paper)");
    if (stages->count() > 0 && a->compare)
      throw CLI::ValidationError("--compare", "compares whole-machine solvers; not with --stages");
    if (stages->count() > 0 && export_lp->count() > 0)
      throw CLI::ValidationError("--export-lp",
                                 "one model per solve; --stages solves one per range");
    // ILP options without an ILP solve would be silently ignored: refuse them. (dp hands a graph
    // that does not reduce to the ilp.)
    const bool ilp = a->solver == "ilp" || a->solver == "dp" || a->compare;
    for (CLI::Option* o : {formulation, time_limit})
      if (!ilp && o->count() > 0)
        throw CLI::ValidationError(o->get_name(), "applies to --solver ilp or dp (or --compare) only");
    if ((a->solver != "ilp" || a->compare) && export_lp->count() > 0)  // --compare exports nothing
      throw CLI::ValidationError("--export-lp", "applies to --solver ilp without --compare only");
    action = [a] {
      try {
        return run(*a);
      } catch (const opt::MemoryInfeasible& e) {  // the limit is on by default: say how to lift it
        throw InputError(std::string(e.what()) +
                         "; --no-memory-limit plans it anyway (simulate refuses such a plan)");
      }
    };
  });
}

}  // namespace nocflow::sim::cli
