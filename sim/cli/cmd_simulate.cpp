// SPDX-License-Identifier: MIT
// `nocflow simulate`: replay a partition plan on the cycle-level system (issue 6). The plan
// comes from a plan.yaml (`nocflow optimize`) or is solved here; it is lowered to per-PE
// programs, run on SystemC PEs over the NoC, and compared with the analytic models.
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <utility>

#include "noc/base/error.h"
#include "noc/base/format.h"
#include "noc/base/json_text.h"
#include "noc/base/limits.h"
#include "noc/network/network.h"
#include "optimizer/cost/cost_model.h"
#include "optimizer/cost/paper_calibration.h"
#include "optimizer/passes/autodiff.h"
#include "optimizer/passes/pass_manager.h"
#include "optimizer/plan/pipeline.h"
#include "optimizer/plan/plan.h"
#include "optimizer/solver/solver.h"
#include "sim/cli/command.h"
#include "sim/config/hw_loader.h"
#include "sim/lower/lowering.h"
#include "sim/lower/priced_inputs.h"
#include "sim/lower/workload_setup.h"
#include "sim/output/build_id.h"
#include "sim/output/layer_stats.h"
#include "sim/output/output_file.h"
#include "sim/output/program_dump.h"
#include "sim/output/replay_summary.h"
#include "sim/output/run_report.h"
#include "sim/output/trace.h"

namespace nocflow::sim::cli {
namespace {

namespace opt = nocflow::optimizer;
namespace fs = std::filesystem;

struct SimulateArgs {
  HwOptions hw;
  NetworkOptions net;
  std::string plan, solver = "dp", cost_model = "linkload", mode, calibration,
                    placement = "snake";
  std::string trace, dump_programs, programs, out;
  bool vcd = false, quiet = false;
  noc::Cycle window = 0;
  int stages = 0, micro_batches = 4;  ///< without --plan: solve a pipeline (plan/pipeline.h)
  bool micro_batches_given = false;   ///< with a pipelined --plan: replay this many instead
  bool passes_given = false;          ///< --passes given: else a --plan's own, if it records them
};

/// A pipelined plan replayed with `micro_batches` instead of its own: its predicted cycles
/// follow from its stages' (StageSplit::pipeline_cost), and so does the choices digest it was
/// priced with, unless its file had been edited (the costs digest leaves the count out).
void set_micro_batches(opt::Plan& plan, int micro_batches) {
  const bool as_priced = !plan.priced_choices || *plan.priced_choices == opt::choices_digest(plan);
  opt::StageSplit stages;
  for (const opt::PlanStage& s : plan.stages) stages.cost.push_back(s.cycles);
  plan.micro_batches = micro_batches;
  plan.pipeline_cycles = stages.pipeline_cost(micro_batches);
  if (as_priced && plan.priced_choices) plan.priced_choices = opt::choices_digest(plan);
}

/// The graph passes that prepare the network, and whether they are a --plan's.
struct RunPasses {
  std::string spec;
  bool from_plan = false;
};

/// --passes, or, when it is not given, those the --plan `plan` records. A --passes other than
/// the plan's is refused: the plan's layers are the graph its passes made.
RunPasses passes_of_run(const SimulateArgs& a, const std::optional<opt::Plan>& plan) {
  if (!plan || !plan->passes) return {a.net.passes};  // no plan, or one from before `passes`
  if (!a.passes_given) return {*plan->passes, true};
  if (opt::parse_passes_option(a.net.passes) != opt::parse_pass_list(*plan->passes))
    throw InputError("--passes " + a.net.passes + ": " + a.plan + " was optimized with --passes " +
                     *plan->passes + " (leave --passes out to replay it with the plan's)");
  return {a.net.passes};
}

/// `file_plan` (--plan, read) checked against the network, or a plan solved here.
opt::Plan make_or_read_plan(const SimulateArgs& a, std::optional<opt::Plan> file_plan,
                            const opt::Graph& graph, const opt::HwDesc& hw, const HwSpec& spec,
                            const std::string& passes) {
  if (file_plan) {
    opt::Plan plan = std::move(*file_plan);
    const bool training = opt::is_training_graph_name(plan.network);
    if (training != opt::is_training_graph_name(graph.name()))
      throw InputError(a.plan + ": the plan is for " + plan.network + ", the network loaded is " +
                       graph.name() + (training ? " (add --train)" : " (drop --train)"));
    if (a.micro_batches_given && !plan.pipelined())
      throw InputError("--micro-batches: " + a.plan +
                       " is not a pipelined plan (optimize --stages makes one)");
    return plan;
  }
  opt::Plan plan = [&] {
    const bool search = a.placement == "search";
    const auto progress = a.quiet ? opt::TabulationProgress() : tabulation_progress(a.cost_model);
    if (a.stages == 0)
      return solve_plan(graph, hw, a.solver, a.cost_model, 0, search, progress).plan;
    opt::PipelineOptions po;
    po.stages = a.stages;
    po.micro_batches = a.micro_batches;
    po.solver = a.solver;
    po.solve = {60, "flow", "", false};  // as solve_plan
    po.setup = {false, true, true, search};  // as solve_plan: within SRAM
    if (!a.quiet) report_pipeline_progress(po, a.cost_model, hw.mesh());
    return opt::solve_pipeline(graph, hw, a.cost_model, po).plan;
  }();
  record_priced_inputs(plan, spec, graph, passes);  // as optimize records
  plan.calibration = a.calibration;
  return plan;
}

/// The output folder emptied of an earlier run's files (prepare_output_dir) but this run's
/// inputs. A replay of programs into their own folder keeps the plan that made them.
void prepare_simulate_output(const SimulateArgs& a, const HwSpec& spec) {
  std::error_code ignored;
  const bool into_programs = !a.programs.empty() && fs::equivalent(a.programs, a.out, ignored);
  prepare_output_dir(a.out, spec, {a.plan, a.calibration, a.net.network, a.programs},
                     into_programs ? std::vector<std::string>{"plan.yaml", "plan.dot"}
                                   : std::vector<std::string>{});
  // What the run writes, refused now rather than after the simulation.
  std::vector<std::string> writes = {"summary.json", "layers.csv", "transfers.csv", "links.csv"};
  if (a.programs.empty()) writes.insert(writes.end(), {"plan.yaml", "plan.dot", "memory.csv"});
  if (!a.trace.empty()) writes.push_back("trace.json");
  if (a.vcd) writes.push_back("trace.vcd");
  check_not_folders(a.out, writes);
}

/// `--programs DIR`: per-PE programs read back (written by --dump-programs, perhaps edited)
/// replayed as they are; no network, plan or predictions.
int run_programs(const SimulateArgs& a, const HwSpec& spec) {
  const noc::NocSpec noc_spec = spec.noc();
  const ProgramFiles files =
      read_programs(a.programs, spec.topology.num_nodes(),
                    [&](std::int64_t bytes) { noc::cut_message(noc_spec, bytes); });
  const ProgramSet& programs = files.programs;
  std::size_t steps = 0;
  for (const Program& p : programs.pe) steps += p.size();
  prepare_simulate_output(a, spec);  // read_programs checked the messages fit
  std::cout << "nocflow simulate: programs " << a.programs << " ("
            << counted(static_cast<std::int64_t>(steps), "step") << ", "
            << counted(static_cast<std::int64_t>(programs.layer_names.size()), "layer") << ") on "
            << one_line_summary(spec) << std::endl;
  for (const std::string& note : hw_notes(spec)) std::cout << "  note: " << note << "\n";
  for (const std::string& note : files.notes) std::cout << "  note: " << note << "\n";
  const noc::Cycle window = a.window > 0 ? a.window : 1000;
  System system("system", spec, programs);
  if (!a.trace.empty() || a.vcd) system.sample_links(window);
  if (!a.quiet)
    system.on_progress = [](noc::Cycle c) { std::cerr << "  ... cycle " << c << std::endl; };
  RunResult r = system.run();
  const auto layers = layer_stats(r, programs.layer_names);
  const RunTotals totals = run_totals(r);
  const double seconds = static_cast<double>(r.total_cycles) / (spec.clock.frequency_ghz * 1e9);
  const double noc_pj = noc_energy_pj(r, spec);

  nlohmann::ordered_json j;
  j["nocflow"] = nocflow_build();  // the version and commit that wrote it
  j["programs"] = a.programs;
  j["total_cycles"] = r.total_cycles;
  j["total_seconds"] = seconds;
  j["compute_cycles"] = totals.compute;
  j["communication_cycles"] = totals.communication;
  j["energy_pj"] = {{"noc", noc_pj}};
  add_traffic(j, r);
  j["units"] = {
      {"*_cycles", "clock cycles"},
      {"total_seconds", "seconds of simulated time"},
      {"energy_pj",
       "picojoules; only the NoC's (flit_hops x link width x energy.hop_pj_per_byte): programs do "
       "not say what their compute steps compute"},
      {"compute_cycles / communication_cycles", kRunTotalsUnits}};
  add_traffic_units(j["units"]);
  write_file(fs::path(a.out) / "summary.json", json_text(j, 2) + "\n");
  write_file(fs::path(a.out) / "layers.csv",
             [&](std::ostream& f) { write_layers_csv(f, nullptr, layers); });
  write_file(fs::path(a.out) / "transfers.csv", [&](std::ostream& f) {
    write_transfers_csv(f, program_edge_reports(programs, files.edge_names, r));
  });
  write_file(fs::path(a.out) / "links.csv",
             [&](std::ostream& f) { write_links_csv(f, r, spec.link.width_bytes); });
  std::string written = "summary.json, layers.csv, transfers.csv, links.csv, config.resolved.yaml";
  written += write_traces(a.out, !a.trace.empty(), a.vcd, r, programs.layer_names,
                          spec.topology.num_nodes(), spec.clock.frequency_ghz, window);
  std::cout << "  total            " << r.total_cycles << " cycles = " << fixed(seconds * 1e6, 3)
            << " us\n"
            << run_totals_line(totals) << "  energy           " << energy_text(noc_pj)
            << " in the NoC\n";
  print_traffic(std::cout, r);
  std::cout << "nocflow: wrote " << a.out << "/{" << written << "}\n";
  return 0;
}

int run(const SimulateArgs& a) {
  check_can_create_folder(a.out, "output folder");  // before the solve and the replay
  const HwSpec spec = a.hw.load();
  check_placement(a.placement, spec);
  if (a.vcd && spec.topology.num_nodes() > 256)
    throw InputError("--vcd: for meshes up to 256 PEs (this one has " +
                     std::to_string(spec.topology.num_nodes()) + "); use --trace perfetto");
  if (!a.programs.empty()) return run_programs(a, spec);
  if (a.net.network.empty()) throw InputError("--network is required (or --programs DIR)");
  opt::HwDesc hw = hw_desc_of(spec);
  // The transfer table prices every edge with linkload: a calibration without this machine is
  // refused before the run, not after it.
  if (!a.calibration.empty())
    for (const std::string& note : apply_calibration(a.calibration, spec, hw, true))
      std::cout << "  note: " << note << "\n";
  // A --plan is read before the network, which is prepared with the passes it records.
  std::optional<opt::Plan> file_plan;
  if (!a.plan.empty()) file_plan = opt::read_plan(a.plan);
  const RunPasses passes = passes_of_run(a, file_plan);
  std::string batch_note;
  auto load = [&](std::int64_t batch) {
    return prepare_network(a.net.network, batch, spec, passes.spec, a.net.train);
  };
  const opt::Graph graph = [&] {
    try {
      return load(a.net.batch);
    } catch (const InputError&) {
      // A network that leaves its batch open (an ONNX model's dynamic axis) needs one: without
      // --batch, the plan's. If that does not load either, the first error stands.
      if (a.net.batch != 0 || !file_plan || file_plan->batch <= 0) throw;
      try {
        opt::Graph g = load(file_plan->batch);
        batch_note = a.net.network + " leaves its batch open: it runs at the plan's, " +
                     std::to_string(file_plan->batch) + " (--batch N for another)";
        return g;
      } catch (const InputError&) {
      }
      throw;
    }
  }();
  opt::Plan plan = make_or_read_plan(a, std::move(file_plan), graph, hw, spec, passes.spec);
  // A file whose micro_batches alone was edited, priced for another count: replayed as
  // --micro-batches would replay it, its prediction from its stages'.
  const std::optional<int> priced_micro_batches = opt::priced_micro_batches(plan);
  const int file_micro_batches = priced_micro_batches.value_or(plan.micro_batches);
  if (priced_micro_batches)
    set_micro_batches(plan, std::exchange(plan.micro_batches, file_micro_batches));
  // The file's own count leaves the plan as it is, its predicted total the file's.
  if (!a.plan.empty() && a.micro_batches_given && a.micro_batches != plan.micro_batches)
    set_micro_batches(plan, a.micro_batches);
  // A pipelined plan runs every micro-batch: the network's layers once per micro-batch.
  const opt::Workload network = opt::build_workload(graph);
  const std::int64_t network_activation_bytes = opt::activation_bytes(network);
  const std::int64_t batch = network_batch(graph);
  const std::string train = training_optimizer(graph);  // "" for inference
  const MicroBatched replay = [&] {
    if (!plan.pipelined()) return MicroBatched{network, plan};
    try {
      return micro_batched(network, plan);
    } catch (const InputError& e) {
      if (a.plan.empty()) throw;
      throw InputError(a.plan + ": " + e.what());
    }
  }();
  const opt::Workload& workload = replay.workload;
  // A plan ranked in barrier replay (validate --rank --mode barrier) replays so by default.
  const std::string mode_name = !a.mode.empty() ? a.mode : plan.replay_mode.value_or("dataflow");
  const ExecMode mode = mode_name == "barrier" ? ExecMode::Barrier : ExecMode::Dataflow;
  const Lowered lowered = [&] {
    try {
      return lower_plan(workload, replay.plan, spec, mode);  // validates the plan
    } catch (const InputError& e) {
      if (a.plan.empty()) throw;
      // Name the file the bad plan came from, and the likely cause when it says one.
      throw InputError(a.plan + ": " + e.what() + batch_hint(plan, graph, a.net.network));
    }
  }();
  check_messages_fit(spec.noc(), lowered.programs);  // before any output
  if (!a.dump_programs.empty())
    prepare_program_dump(a.dump_programs, static_cast<int>(lowered.programs.pe.size()));
  prepare_simulate_output(a, spec);
  if (!a.dump_programs.empty()) {
    std::vector<std::string> edge_names;
    for (const LoweredEdge& e : lowered.edges) edge_names.push_back(edge_name(e));
    write_program_dump(a.dump_programs, lowered.programs, edge_names);
  }

  std::cout << "nocflow simulate: " << graph.name() << " ("
            << (plan.pipelined()
                    ? counted(static_cast<std::int64_t>(plan.layers.size()), "layer") + " x " +
                          counted(plan.micro_batches, "micro-batch") + " in " +
                          counted(static_cast<std::int64_t>(plan.stages.size()), "pipeline stage")
                    : counted(static_cast<std::int64_t>(workload.layers.size()), "layer"))
            << ", batch " << batch << (train.empty() ? "" : ", training with " + train) << ", plan "
            << (a.plan.empty() ? a.solver + " / " + a.cost_model : a.plan) << ", " << mode_name
            << ") on " << one_line_summary(spec) << std::endl;
  if (passes.from_plan && passes.spec != "default")
    std::cout << "  note: graph passes " << passes.spec << ", as the plan's passes say"
              << std::endl;
  if (a.mode.empty() && plan.replay_mode == "barrier")
    std::cout << "  note: " << mode_name << " replay, as the plan's replay_mode says (--mode "
              << "to change it)" << std::endl;
  else if (!a.mode.empty() && plan.replay_mode && *plan.replay_mode != a.mode)
    std::cout << "  note: the plan's simulated cycles were measured in " << *plan.replay_mode
              << " replay, this is " << a.mode << std::endl;
  // The plan's choices replay on any inputs they fit; its predicted totals only on its own.
  if (plan.network != graph.name())
    std::cout << "  note: the plan names the network " << plan.network
              << "; its layers are matched by name to " << graph.name() << "'s" << std::endl;
  std::vector<std::string> stale;  // why they do not apply (summary.json)
  for (const auto& [why, priced] : plan_mismatches(plan, graph, network_activation_bytes, spec)) {
    stale.push_back(why);
    std::cout << "  note: the plan was priced for " << priced
              << ": its predicted total does not apply" << std::endl;
  }
  if (plan.priced_choices && *plan.priced_choices != opt::choices_digest(plan)) {
    stale.push_back("choices");
    std::cout << "  note: the plan's choices, PEs or stages differ from those it was priced with "
                 "(its file was edited): its predicted total does not apply; transfers.csv prices "
                 "each edge as it is replayed"
              << std::endl;
  }
  if (plan.priced_costs && *plan.priced_costs != opt::costs_digest(plan)) {
    stale.push_back("costs");
    std::cout << "  note: the plan's cycles, bytes or types differ from those it was priced "
                 "with (its file was edited): its predicted total does not apply, and plan.yaml "
                 "and plan.dot here carry the edited figures"
              << std::endl;
  }
  if (plan.micro_batches != file_micro_batches)
    std::cout << "  note: the plan's " << file_micro_batches << " micro-batches replayed as "
              << plan.micro_batches
              << (priced_micro_batches ? " (its file's micro_batches was edited)" : "")
              << ", predicted " << fixed(plan.pipeline_cycles, 1)
              << " cycles from its stages' (their sum + " << plan.micro_batches - 1
              << " x the bottleneck)" << std::endl;
  if (plan.pipelined() && !train.empty())
    std::cout << "  note: " << kPipelinedTrainingNote << std::endl;
  if (plan.pipelined() && mode == ExecMode::Barrier) {  // the prediction overlaps the stages
    stale.push_back("mode");
    std::cout << "  note: barrier replay runs the micro-batches one after another, where the "
                 "plan's pipeline overlaps its stages: its predicted total does not apply"
              << std::endl;
  }
  for (const std::string& note : graph.notes()) std::cout << "  note: " << note << std::endl;
  if (const std::string note = element_size_note(graph, spec, a.net.network); !note.empty())
    std::cout << "  " << note << std::endl;
  for (const std::string& note : hw_notes(spec)) std::cout << "  note: " << note << std::endl;
  if (!batch_note.empty()) std::cout << "  note: " << batch_note << std::endl;
  if (const std::string note = single_pe_note(network, plan, spec); !note.empty())
    std::cout << "  note: " << note << std::endl;
  if (const std::string note = calibration_mismatch(plan, a.calibration); !note.empty())
    std::cout << "  note: " << note << std::endl;
  const noc::Cycle window = a.window > 0 ? a.window : 1000;
  System system("system", spec, lowered.programs);
  if (!a.trace.empty() || a.vcd) system.sample_links(window);
  if (!a.quiet)
    system.on_progress = [](noc::Cycle c) { std::cerr << "  ... cycle " << c << std::endl; };
  RunResult r = system.run();

  const Measured m = measure(std::move(r), workload, lowered, replay.plan, hw, spec, mode);
  const std::string solved_by = a.solver + " / " + a.cost_model;
  const ReplaySource source{mode_name,
                            a.plan,
                            solved_by,
                            a.calibration,
                            batch,
                            train,
                            plan.micro_batches != file_micro_batches,
                            !stale.empty()};
  write_file(fs::path(a.out) / "summary.json",
             json_text(summary_json(source, graph.name(), plan, stale, spec, m), 2) + "\n");
  // The plan replayed, so that a solved one can be replayed again (--plan) and drawn; but not
  // over the --plan file itself, which may hold a user's comments and edits.
  std::error_code ignored;
  const bool plan_is_output =
      !a.plan.empty() && fs::equivalent(a.plan, fs::path(a.out) / "plan.yaml", ignored);
  if (!plan_is_output) {
    opt::Plan replayed = plan;
    replayed.replay_mode =
        mode == ExecMode::Barrier ? std::optional<std::string>("barrier") : std::nullopt;
    write_file(fs::path(a.out) / "plan.yaml", opt::plan_yaml(replayed));
  }
  write_file(fs::path(a.out) / "plan.dot", opt::plan_dot(plan));
  write_file(fs::path(a.out) / "layers.csv",
             [&](std::ostream& f) { write_layers_csv(f, &lowered, m.layers); });
  write_file(fs::path(a.out) / "transfers.csv",
             [&](std::ostream& f) { write_transfers_csv(f, m.edges); });
  write_file(fs::path(a.out) / "links.csv",
             [&](std::ostream& f) { write_links_csv(f, m.run, spec.link.width_bytes); });
  write_file(fs::path(a.out) / "memory.csv",
             [&](std::ostream& f) { write_memory_csv(f, m.memory, lowered); });
  std::string written = std::string("summary.json, ") + (plan_is_output ? "" : "plan.yaml, ") +
                        "plan.dot, layers.csv, transfers.csv, links.csv, memory.csv, "
                        "config.resolved.yaml";
  written += write_traces(a.out, !a.trace.empty(), a.vcd, m.run, lowered.programs.layer_names,
                          spec.topology.num_nodes(), spec.clock.frequency_ghz, window);
  print_measured(std::cout, source, plan, spec, m);
  print_transfers_table(std::cout, m.edges);
  std::cout << "nocflow: wrote " << a.out << "/{" << written << "}"
            << (a.dump_programs.empty() ? "" : ", and the programs to " + a.dump_programs + "/{pe_N.txt, names.txt}")
            << "\n";
  return 0;
}

}  // namespace

void add_simulate_command(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand("simulate", "replay a partition plan cycle by cycle on the PEs and NoC");
  auto a = std::make_shared<SimulateArgs>();
  a->hw.add_to(*cmd);
  auto* network = a->net.add_to(*cmd)->required(false);
  auto* plan = cmd->add_option("--plan", a->plan, "plan.yaml from nocflow optimize")->type_name("FILE");
  cmd->add_option("--solver", a->solver, "without --plan: solve with this solver (SRAM limit on)")
      ->check(one_of("solver", opt::solver_names()))
      ->capture_default_str()
      ->excludes(plan);
  cmd->add_option("--cost-model", a->cost_model, "without --plan: paper | linkload")
      ->check(one_of("cost model", opt::cost_model_names()))
      ->capture_default_str()
      ->excludes(plan);
  add_placement_option(*cmd, a->placement)->excludes(plan);
  cmd->add_option("--calibration", a->calibration,
                  "calibration.yaml (validate --calibrate) for the cost models: the solve without --plan and "
                  "the predicted column of every table")
      ->type_name("FILE");
  cmd->add_option("--stages", a->stages,
                  "without --plan: solve a pipeline of this many stages (optimize --stages)")
      ->check(at_least(1))
      ->excludes(plan);
  auto* micro_batches =
      cmd->add_option("--micro-batches", a->micro_batches,
                      "with --stages: micro-batches streamed through the stages; with a "
                      "pipelined --plan: replay this many instead of the plan's (its predicted "
                      "cycles follow from its stages')")
          ->capture_default_str()
          ->check(in_range(1, optimizer::kMaxMicroBatches));
  cmd->add_option("--mode", a->mode,
                  "dataflow (overlap) | barrier (layer by layer, edges isolated); default: "
                  "the plan's replay_mode, else dataflow")
      ->check(one_of("mode", {"dataflow", "barrier"}));
  cmd->add_option("--trace", a->trace,
                  "trace format: perfetto (writes trace.json, Chrome/Perfetto JSON)")
      ->check(one_of("trace format", {"perfetto"}))
      ->type_name("FORMAT");
  cmd->add_flag("--vcd", a->vcd, "write trace.vcd (PE states, link activity; up to 256 PEs)");
  auto* window = cmd->add_option("--trace-window", a->window,
                                 "link sampling window for --trace and --vcd, cycles (default 1000)")
                     ->check(in_range(1, static_cast<double>(kMaxCycles)));
  auto* dump = cmd->add_option("--dump-programs", a->dump_programs,
                               "write each PE's program to DIR/pe_N.txt, and the layer and "
                               "edge names in the plan's order to DIR/names.txt")
                   ->type_name("DIR");
  auto* programs =
      cmd->add_option("--programs", a->programs,
                      "instead of --network and a plan: replay the programs in DIR/pe_N.txt (as "
                      "--dump-programs writes them, edited or not; DIR/names.txt, if there, "
                      "orders the tables' layers and edges)")
          ->type_name("DIR")
          ->excludes(network);
  for (const char* other : {"--batch", "--passes", "--train", "--plan", "--solver", "--cost-model",
                            "--calibration", "--stages", "--micro-batches", "--mode",
                            "--placement"})
    programs->excludes(cmd->get_option(other));
  programs->excludes(dump);
  cmd->add_flag("--quiet", a->quiet, "no progress lines");
  cmd->add_option("--out", a->out, "output folder")->required()->type_name("DIR");
  cmd->callback([a, cmd, window, micro_batches, &action] {
    a->passes_given = cmd->get_option("--passes")->count() > 0;
    if (window->count() > 0 && a->trace.empty() && !a->vcd)
      throw CLI::ValidationError("--trace-window", "samples links for --trace or --vcd; give one");
    a->micro_batches_given = micro_batches->count() > 0;
    if (a->micro_batches_given && a->stages == 0 && a->plan.empty())
      throw CLI::ValidationError("--micro-batches", "needs --stages or a pipelined --plan");
    action = [a] { return run(*a); };
  });
}

}  // namespace nocflow::sim::cli
