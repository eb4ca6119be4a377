// SPDX-License-Identifier: MIT
// `nocflow simulate`: replay a partition plan on the cycle-level system (issue 6). The plan
// comes from a plan.yaml (`nocflow optimize`) or is solved here; it is lowered to per-PE
// programs, run on SystemC PEs over the NoC, and compared with the analytic models.
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>

#include "noc/base/error.h"
#include "noc/base/format.h"
#include "noc/base/limits.h"
#include "optimizer/cost/cost_model.h"
#include "optimizer/cost/paper_calibration.h"
#include "optimizer/passes/autodiff.h"
#include "optimizer/plan/pipeline.h"
#include "optimizer/plan/plan.h"
#include "optimizer/solver/solver.h"
#include "sim/cli/command.h"
#include "sim/config/hw_loader.h"
#include "sim/lower/lowering.h"
#include "sim/lower/memory_plan.h"
#include "sim/lower/priced_inputs.h"
#include "sim/lower/workload_setup.h"
#include "sim/output/layer_stats.h"
#include "sim/output/output_file.h"
#include "sim/output/program_dump.h"
#include "sim/output/run_report.h"
#include "sim/output/trace.h"

namespace nocflow::sim::cli {
namespace {

namespace opt = nocflow::optimizer;
namespace fs = std::filesystem;

struct SimulateArgs {
  HwOptions hw;
  NetworkOptions net;
  std::string plan, solver = "dp", cost_model = "linkload", mode = "dataflow", calibration,
                    placement = "snake";
  std::string trace, dump_programs, programs, out;
  bool vcd = false, quiet = false;
  noc::Cycle window = 0;
  int stages = 0, micro_batches = 4;  ///< without --plan: solve a pipeline (plan/pipeline.h)
};

opt::Plan make_or_read_plan(const SimulateArgs& a, const opt::Graph& graph, const opt::HwDesc& hw,
                            const HwSpec& spec) {
  if (!a.plan.empty()) {
    opt::Plan plan = opt::read_plan(a.plan);
    const bool training = opt::is_training_graph_name(plan.network);
    if (training != opt::is_training_graph_name(graph.name()))
      throw InputError(a.plan + ": the plan is for " + plan.network + ", the network loaded is " +
                       graph.name() + (training ? " (add --train)" : " (drop --train)"));
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
  record_priced_inputs(plan, spec, graph);  // as optimize records
  plan.calibration = a.calibration;
  return plan;
}

/// The console's traffic and simulation lines.
void print_traffic(std::ostream& out, const RunResult& r) {
  out << "  traffic          " << r.messages << " messages, " << r.packets << " packets, "
      << r.flits << " flits, " << r.bytes
      << " bytes; every message received once, network drained\n"
      << "  simulation       " << fixed(r.wall_seconds, 3) << " s wall, "
      << fixed(r.wall_seconds > 0 ? r.flits / r.wall_seconds / 1e6 : 0, 2) << " M flits/s\n";
}

/// The run's traffic and wall time into summary.json.
void add_traffic(nlohmann::ordered_json& j, const RunResult& r) {
  j["messages"] = r.messages;
  j["packets"] = r.packets;
  j["flits"] = r.flits;
  j["bytes"] = r.bytes;
  j["flit_hops"] = r.flit_hops;
  j["steps"] = r.spans.size();
  j["wall_seconds"] = r.wall_seconds;
  j["flits_per_second"] = r.wall_seconds > 0 ? static_cast<double>(r.flits) / r.wall_seconds : 0;
}

/// What a plan's replay measured, as summary.json and the console give it.
struct Measured {
  RunResult run;
  std::vector<LayerStats> layers;
  RunTotals totals;
  std::vector<EdgeReport> edges;
  Energy energy;
  double seconds = 0;  ///< of simulated time
  std::vector<PeMemoryPlan> memory;
  std::size_t fullest_pe = 0;  ///< whose memory plan peaks highest
  PipelineRun pipeline;        ///< a pipelined plan's stages
  const PeMemoryPlan& fullest() const { return memory[fullest_pe]; }
};

Measured measure(RunResult run, const opt::Workload& workload, const Lowered& lowered,
                 const opt::Plan& replayed, const opt::HwDesc& hw, const HwSpec& spec) {
  Measured m;
  m.layers = layer_stats(run, lowered.programs.layer_names);
  m.totals = run_totals(run);
  m.edges = edge_reports(workload, lowered, run, hw);
  m.energy = run_energy(workload, lowered, run, spec);
  m.seconds = static_cast<double>(run.total_cycles) / (spec.clock.frequency_ghz * 1e9);
  m.memory = plan_memory(lowered, workload);
  m.fullest_pe =
      static_cast<std::size_t>(std::max_element(m.memory.begin(), m.memory.end(),
                                                [](const PeMemoryPlan& x, const PeMemoryPlan& y) {
                                                  return x.peak_bytes < y.peak_bytes;
                                                }) -
                               m.memory.begin());
  if (replayed.pipelined()) m.pipeline = pipeline_run(replayed, m.layers);
  m.run = std::move(run);
  return m;
}

/// summary.json. `stale`: why the plan's predicted total does not apply to this run.
nlohmann::ordered_json summary_json(const SimulateArgs& a, const std::string& network,
                                    const opt::Plan& plan, const std::vector<std::string>& stale,
                                    const HwSpec& spec, const Measured& m) {
  const RunResult& r = m.run;
  const PeMemoryPlan& fullest = m.fullest();
  nlohmann::ordered_json j;
  j["network"] = network;
  j["mode"] = a.mode;
  j["plan"] = a.plan.empty() ? "solved: " + a.solver + " / " + a.cost_model : a.plan;
  j["total_cycles"] = r.total_cycles;
  j["total_seconds"] = m.seconds;
  j["compute_cycles"] = m.totals.compute;
  j["communication_cycles"] = m.totals.communication;
  j["predicted_total_cycles"] = plan.predicted_cycles();
  j["predicted_by"] = plan.cost_model;
  // Empty when the plan's total applies to this run; else why not (batch, network, train,
  // hardware: the notes printed).
  j["predicted_total_does_not_apply"] = stale;
  // With --plan the total is the plan file's, priced when it was made; --calibration then
  // applies to the transfer table only.
  j["predicted_total_from"] = a.plan.empty() ? "this solve" : "the plan file";
  j["calibration"] =
      a.calibration;  // of the predictions (and of the solve without --plan); empty: none
  j["energy_pj"] = {{"mac", m.energy.mac_pj},
                    {"sram", m.energy.sram_pj},
                    {"noc", m.energy.noc_pj},
                    {"total", m.energy.total()}};
  j["memory_plan"] = {{"peak_bytes", fullest.peak_bytes},
                      {"pe", m.fullest_pe},
                      {"live_peak_bytes", fullest.live_peak_bytes},
                      {"no_reuse_bytes", fullest.no_reuse_bytes},
                      {"sram_bytes", spec.pe.sram_bytes}};
  if (plan.pipelined()) {
    nlohmann::ordered_json stages = nlohmann::ordered_json::array();
    for (std::size_t s = 0; s < plan.stages.size(); ++s)
      stages.push_back({{"first", plan.stages[s].first},
                        {"last", plan.stages[s].last},
                        {"first_pe", plan.stages[s].first_pe},
                        {"pes", plan.stages[s].pes},
                        {"predicted_cycles", plan.stages[s].cycles},
                        {"simulated_cycles", m.pipeline.stage_cycles[s]}});
    j["pipeline"] = {{"micro_batches", plan.micro_batches},
                     {"interval_cycles", plan.micro_batches > 1 ? nlohmann::ordered_json(m.pipeline.interval)
                                                                 : nlohmann::ordered_json()},
                     {"stages", stages}};
  }
  add_traffic(j, r);
  j["units"] = {
      {"*_cycles", "clock cycles"},
      {"total_seconds", "seconds of simulated time"},
      {"energy_pj", "picojoules"},
      {"pipeline",
       "cycles per micro-batch and stage: predicted, and simulated as the mean over micro-batches "
       "from when the stage could start (its previous micro-batch done, the previous stage done "
       "with this one) to the end of its last layer; interval_cycles: mean cycles between "
       "micro-batches leaving the last stage (null with one micro-batch)"},
      {"messages / packets / flits", "counts over the run (flits of link.width_bytes each)"},
      {"steps", "program steps the PEs ran (compute, send, receive, reduce, barrier)"},
      {"memory_plan",
       "bytes of SRAM on the PE whose static memory plan peaks highest (memory.csv): planned "
       "peak, most bytes live at one step, all buffers without reuse"},
      {"bytes", "bytes"},
      {"compute_cycles / communication_cycles",
       "on the PE that finished last: busy computing / blocked receiving or at barriers (exposed)"},
      {"flit_hops",
       "flits x hops (router-to-router links; 1 on a crossbar); NoC energy = flit_hops x link "
       "width x energy.hop_pj_per_byte"},
      {"wall_seconds", "seconds (wall clock; varies run to run, with flits_per_second)"}};
  return j;
}

/// The console's figures of the run: totals, energy, memory, traffic, pipeline stages.
void print_measured(std::ostream& out, const SimulateArgs& a, const opt::Plan& plan,
                    const HwSpec& spec, const Measured& m) {
  const RunResult& r = m.run;
  const PeMemoryPlan& fullest = m.fullest();
  out << "  total            " << r.total_cycles << " cycles = " << fixed(m.seconds * 1e6, 3)
      << " us"
      << " (predicted by " << plan.cost_model << (a.plan.empty() ? "" : " in the plan file") << ": "
      << fixed(plan.predicted_cycles()) << " cycles)\n"
      << "  critical PE      " << m.totals.compute << " cycles computing, "
      << m.totals.communication << " cycles waiting for data or at barriers\n"
      << "  energy           " << fixed(m.energy.total() / 1e6, 3) << " uJ (MAC "
      << fixed(m.energy.mac_pj / 1e6, 3) << ", SRAM " << fixed(m.energy.sram_pj / 1e6, 3)
      << ", NoC " << fixed(m.energy.noc_pj / 1e6, 3) << " uJ)\n"
      << "  memory plan      " << fullest.peak_bytes << " bytes of SRAM at most (PE "
      << m.fullest_pe << "; " << fullest.live_peak_bytes << " bytes live at once, "
      << fullest.no_reuse_bytes << " bytes without reuse; the PE holds " << spec.pe.sram_bytes
      << " bytes)\n";
  print_traffic(out, r);
  if (fullest.peak_bytes > spec.pe.sram_bytes)
    out << "  note: the memory plan of PE " << m.fullest_pe << " needs " << fullest.peak_bytes
        << " bytes, more than a PE's SRAM (pe.sram_bytes " << spec.pe.sram_bytes
        << "): data of several layers is live at once\n";
  if (plan.pipelined()) {
    double bottleneck = 0;
    for (const auto& st : plan.stages) bottleneck = std::max(bottleneck, st.cycles);
    out << "  pipeline         " << plan.stages.size() << " stages, " << plan.micro_batches
        << " micro-batches";
    if (plan.micro_batches > 1 && m.pipeline.interval > 0)
      out << ": one left the last stage every " << fixed(m.pipeline.interval, 0)
          << " cycles (predicted bottleneck " << fixed(bottleneck, 0) << ", error "
          << signed_percent(bottleneck / m.pipeline.interval - 1) << ")";
    out << "\n    stage  " << std::setw(12) << "PEs" << std::setw(14) << "predicted"
        << std::setw(14) << "simulated"
        << "   (cycles per micro-batch; simulated: mean "
        << "from when it could start to its end)\n";
    for (std::size_t s = 0; s < plan.stages.size(); ++s) {
      const opt::PlanStage& st = plan.stages[s];
      out << "    " << std::setw(5) << s << "  " << std::setw(12) << st.pe_range() << std::setw(14)
          << fixed(st.cycles, 0) << std::setw(14) << fixed(m.pipeline.stage_cycles[s], 0) << "\n";
    }
  }
}

/// Removes from the output folder what an earlier run left and this one does not write (traces
/// not asked for; with --programs, a plan replay's plan and memory files), so that it holds one
/// run. A replay of programs into their own folder keeps everything: the plan that made them.
void clear_unwritten_outputs(const SimulateArgs& a) {
  std::error_code ignored;
  if (!a.programs.empty() && fs::equivalent(a.programs, a.out, ignored)) return;
  std::vector<std::string> stale;
  if (a.trace.empty()) stale.push_back("trace.json");
  if (!a.vcd) stale.push_back("trace.vcd");
  if (!a.programs.empty()) stale.insert(stale.end(), {"plan.yaml", "plan.dot", "memory.csv"});
  remove_stale_outputs(a.out, stale);
}

/// The traces asked for (--trace, --vcd) into the output folder; their names, ", "-led.
std::string write_traces(const SimulateArgs& a, const HwSpec& spec, const RunResult& r,
                         const std::vector<std::string>& layer_names, noc::Cycle window) {
  std::string written;
  if (!a.trace.empty()) {
    write_file(fs::path(a.out) / "trace.json", [&](std::ostream& f) {
      write_chrome_trace(f, r, layer_names, spec.clock.frequency_ghz, window);
    });
    written += ", trace.json";
  }
  if (a.vcd) {
    write_file(fs::path(a.out) / "trace.vcd", [&](std::ostream& f) {
      write_vcd(f, r, spec.topology.num_nodes(), window, spec.clock.frequency_ghz);
    });
    written += ", trace.vcd";
  }
  return written;
}

/// `--programs DIR`: per-PE programs read back (written by --dump-programs, perhaps edited)
/// replayed as they are; no network, plan or predictions.
int run_programs(const SimulateArgs& a, const HwSpec& spec) {
  const ProgramFiles files = read_programs(a.programs, spec.topology.num_nodes());
  const ProgramSet& programs = files.programs;
  std::size_t steps = 0;
  for (const Program& p : programs.pe) steps += p.size();
  prepare_output_dir(a.out, spec);
  clear_unwritten_outputs(a);
  std::cout << "nocflow simulate: programs " << a.programs << " (" << steps << " steps, "
            << programs.layer_names.size() << " layers) on " << one_line_summary(spec) << std::endl;
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
      {"bytes", "bytes"},
      {"compute_cycles / communication_cycles",
       "on the PE that finished last: busy computing / blocked receiving or at barriers (exposed)"},
      {"wall_seconds", "seconds (wall clock; varies run to run, with flits_per_second)"}};
  write_file(fs::path(a.out) / "summary.json", j.dump(2) + "\n");
  write_file(fs::path(a.out) / "layers.csv",
             [&](std::ostream& f) { write_layers_csv(f, nullptr, layers); });
  write_file(fs::path(a.out) / "transfers.csv", [&](std::ostream& f) {
    write_transfers_csv(f, program_edge_reports(programs, files.edge_names, r));
  });
  write_file(fs::path(a.out) / "links.csv",
             [&](std::ostream& f) { write_links_csv(f, r, spec.link.width_bytes); });
  std::string written = "summary.json, layers.csv, transfers.csv, links.csv, config.resolved.yaml";
  written += write_traces(a, spec, r, programs.layer_names, window);
  std::cout << "  total            " << r.total_cycles << " cycles = " << fixed(seconds * 1e6, 3)
            << " us\n"
            << "  critical PE      " << totals.compute << " cycles computing, "
            << totals.communication << " cycles waiting for data or at barriers\n"
            << "  energy           " << fixed(noc_pj / 1e6, 3) << " uJ in the NoC\n";
  print_traffic(std::cout, r);
  std::cout << "nocflow: wrote " << a.out << "/{" << written << "}\n";
  return 0;
}

int run(const SimulateArgs& a) {
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
  const opt::Graph graph =
      prepare_network(a.net.network, a.net.batch, spec, a.net.passes, a.net.train);
  const opt::Plan plan = make_or_read_plan(a, graph, hw, spec);
  // A pipelined plan runs every micro-batch: the network's layers once per micro-batch.
  const opt::Workload network = opt::build_workload(graph);
  const std::int64_t network_activation_bytes = opt::activation_bytes(network);
  const std::int64_t batch = network_batch(graph);
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
  const ExecMode mode = a.mode == "barrier" ? ExecMode::Barrier : ExecMode::Dataflow;
  const Lowered lowered = [&] {
    try {
      return lower_plan(workload, replay.plan, spec, mode);  // validates the plan
    } catch (const InputError& e) {
      if (a.plan.empty()) throw;
      // Name the file the bad plan came from, and the likely cause when it says one.
      throw InputError(a.plan + ": " + e.what() + batch_hint(plan, graph, a.net.network));
    }
  }();
  if (!a.dump_programs.empty())
    prepare_program_dump(a.dump_programs, static_cast<int>(lowered.programs.pe.size()));
  prepare_output_dir(a.out, spec);
  clear_unwritten_outputs(a);
  if (!a.dump_programs.empty()) {
    std::vector<std::string> edge_names;
    for (const LoweredEdge& e : lowered.edges) edge_names.push_back(edge_name(e));
    write_program_dump(a.dump_programs, lowered.programs, edge_names);
  }

  std::cout << "nocflow simulate: " << graph.name() << " ("
            << (plan.pipelined() ? std::to_string(plan.layers.size()) + " layers x " +
                                       std::to_string(plan.micro_batches) + " micro-batches in " +
                                       std::to_string(plan.stages.size()) + " pipeline stages"
                                 : std::to_string(workload.layers.size()) + " layers")
            << ", batch " << batch << ", plan "
            << (a.plan.empty() ? a.solver + " / " + a.cost_model : a.plan) << ", " << a.mode
            << ") on " << one_line_summary(spec) << std::endl;
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
  if (plan.pipelined() && mode == ExecMode::Barrier) {  // the prediction overlaps the stages
    stale.push_back("mode");
    std::cout << "  note: barrier replay runs the micro-batches one after another, where the "
                 "plan's pipeline overlaps its stages: its predicted total does not apply"
              << std::endl;
  }
  if (const std::string note = element_size_note(graph, spec); !note.empty())
    std::cout << "  " << note << std::endl;
  for (const std::string& note : hw_notes(spec)) std::cout << "  note: " << note << std::endl;
  if (const std::string note = calibration_mismatch(plan, a.calibration); !note.empty())
    std::cout << "  note: " << note << std::endl;
  const noc::Cycle window = a.window > 0 ? a.window : 1000;
  System system("system", spec, lowered.programs);
  if (!a.trace.empty() || a.vcd) system.sample_links(window);
  if (!a.quiet)
    system.on_progress = [](noc::Cycle c) { std::cerr << "  ... cycle " << c << std::endl; };
  RunResult r = system.run();

  const Measured m = measure(std::move(r), workload, lowered, replay.plan, hw, spec);
  write_file(fs::path(a.out) / "summary.json",
             summary_json(a, graph.name(), plan, stale, spec, m).dump(2) + "\n");
  // The plan replayed, so that a solved one can be replayed again (--plan) and drawn.
  write_file(fs::path(a.out) / "plan.yaml", opt::plan_yaml(plan));
  write_file(fs::path(a.out) / "plan.dot", opt::plan_dot(plan));
  write_file(fs::path(a.out) / "layers.csv",
             [&](std::ostream& f) { write_layers_csv(f, &lowered, m.layers); });
  write_file(fs::path(a.out) / "transfers.csv",
             [&](std::ostream& f) { write_transfers_csv(f, m.edges); });
  write_file(fs::path(a.out) / "links.csv",
             [&](std::ostream& f) { write_links_csv(f, m.run, spec.link.width_bytes); });
  write_file(fs::path(a.out) / "memory.csv",
             [&](std::ostream& f) { write_memory_csv(f, m.memory, lowered); });
  std::string written =
      "summary.json, plan.yaml, plan.dot, layers.csv, transfers.csv, links.csv, memory.csv, "
      "config.resolved.yaml";
  written += write_traces(a, spec, m.run, lowered.programs.layer_names, window);
  print_measured(std::cout, a, plan, spec, m);
  print_transfers_table(std::cout, m.edges);
  std::cout << "nocflow: wrote " << a.out << "/{" << written << "}\n";
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
  auto* stages =
      cmd->add_option("--stages", a->stages,
                      "without --plan: solve a pipeline of this many stages (optimize --stages)")
          ->check(at_least(1))
          ->excludes(plan);
  cmd->add_option("--micro-batches", a->micro_batches,
                  "with --stages: micro-batches streamed through the stages")
      ->capture_default_str()
      ->check(in_range(1, optimizer::kMaxMicroBatches))
      ->needs(stages);
  cmd->add_option("--mode", a->mode,
                  "dataflow (overlap) | barrier (layer by layer, edges isolated)")
      ->check(one_of("mode", {"dataflow", "barrier"}))
      ->capture_default_str();
  cmd->add_option("--trace", a->trace,
                  "trace format: perfetto (writes trace.json, Chrome/Perfetto JSON)")
      ->check(one_of("trace format", {"perfetto"}))
      ->type_name("FORMAT");
  cmd->add_flag("--vcd", a->vcd, "write trace.vcd (PE states, link activity)");
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
                            "--calibration", "--stages", "--mode", "--placement"})
    programs->excludes(cmd->get_option(other));
  programs->excludes(dump);
  cmd->add_flag("--quiet", a->quiet, "no progress lines");
  cmd->add_option("--out", a->out, "output folder")->required()->type_name("DIR");
  cmd->callback([a, window, &action] {
    if (window->count() > 0 && a->trace.empty() && !a->vcd)
      throw CLI::ValidationError("--trace-window", "samples links for --trace or --vcd; give one");
    action = [a] { return run(*a); };
  });
}

}  // namespace nocflow::sim::cli
