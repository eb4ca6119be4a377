// SPDX-License-Identifier: MIT
// `nocflow optimize --stages K`: the network cut into K pipeline stages, each on its own band of
// mesh rows (or crossbar ports), with stages.csv and the stages' table.
#include <cmath>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>

#include "noc/base/format.h"
#include "noc/base/json_text.h"
#include "optimizer/plan/pipeline.h"
#include "sim/cli/optimize_command.h"
#include "sim/config/hw_loader.h"
#include "sim/lower/priced_inputs.h"
#include "sim/lower/workload_setup.h"
#include "sim/output/output_file.h"

namespace nocflow::sim::cli {

namespace opt = nocflow::optimizer;
namespace fs = std::filesystem;

int run_pipeline(const OptimizeArgs& a, const HwSpec& spec, const opt::HwDesc& hw,
                 const opt::Graph& graph, const std::vector<std::string>& calibration_notes) {
  opt::PipelineOptions po;
  po.stages = a.stages;
  po.micro_batches = a.micro_batches;
  po.solver = a.solver;
  po.solve = {a.time_limit, a.formulation, "", false};
  po.setup = {a.exact, a.memory_limit, !a.no_prune, a.placement == "search"};
  po.resident_weights = a.resident_weights;
  opt::check_pipeline_options(graph, hw, a.cost_model, po);  // refused before the banner
  std::cout << "nocflow optimize: " << graph.name() << training_note(training_optimizer(graph))
            << " on " << one_line_summary(spec) << "\n"
            << "  pipeline: " << counted(a.stages, "stage") << " over " << opt::pipeline_units(hw)
            << (hw.mesh() ? " mesh rows" : " crossbar ports") << ", " << a.solver
            << " inside each band, cost model " << a.cost_model
            << "; pricing every range of layers "
            << "on every band ..." << std::endl;
  for (const std::string& note : calibration_notes) std::cout << "  note: " << note << "\n";
  for (const std::string& note : graph.notes()) std::cout << "  note: " << note << "\n";
  if (const std::string note = element_size_note(graph, spec, a.net.network); !note.empty())
    std::cout << "  " << note << "\n";
  for (const std::string& note : hw_notes(spec)) std::cout << "  note: " << note << "\n";
  if (!training_optimizer(graph).empty()) std::cout << "  note: " << kPipelinedTrainingNote << "\n";
  if (!a.quiet) report_pipeline_progress(po, a.cost_model, hw.mesh());
  const opt::PipelineResult r = opt::solve_pipeline(graph, hw, a.cost_model, po);
  prepare_output_dir(a.out, spec, {a.net.network, a.calibration, a.export_lp});
  opt::Plan plan = r.plan;
  record_priced_inputs(plan, spec, graph, a.net.passes);
  plan.calibration = a.calibration;
  if (a.bnoc > 0) plan.bnoc = a.bnoc;
  write_file(fs::path(a.out) / "plan.yaml", opt::plan_yaml(plan));
  write_file(fs::path(a.out) / "plan.dot", opt::plan_dot(plan));
  write_file(fs::path(a.out) / "stages.csv", [&](std::ostream& csv) {
    csv << "stage,first_layer,last_layer,layers,units,first_pe,pes,cycles_per_micro_batch,"
           "resident_bytes_per_pe\n";
    for (std::size_t s = 0; s < plan.stages.size(); ++s) {
      const opt::PlanStage& st = plan.stages[s];
      csv << s << "," << st.first << "," << st.last << ","
          << r.split.begin[s + 1] - r.split.begin[s] << "," << st.units << "," << st.first_pe << ","
          << st.pes << "," << std::setprecision(12) << st.cycles << "," << r.resident_bytes[s]
          << "\n";
    }
  });
  const double whole = r.whole_machine_cycles * a.micro_batches;
  const opt::Workload network = opt::build_workload(graph);
  std::vector<std::string> notes = r.notes;  // printed below; the graph's were printed first
  for (const std::string& note : plan_notes(a, spec, graph, network, plan)) notes.push_back(note);
  nlohmann::ordered_json j = summary_head(a, plan);
  j["total_cost_cycles"] =
      as_written(plan.pipeline_cycles);  // as a whole-machine plan's: the run's cycles
  j["stages"] = plan.stages.size();
  j["micro_batches"] = a.micro_batches;
  j["pipeline_cycles"] = as_written(plan.pipeline_cycles);
  j["bottleneck_cycles"] = as_written(r.split.bottleneck());
  j["imbalance"] = r.split.imbalance();
  j["efficiency"] = r.split.efficiency();
  if (std::isfinite(whole)) j["whole_machine_cycles"] = as_written(whole);
  const double baseline = r.balanced.pipeline_cost(a.micro_batches);
  if (std::isfinite(baseline)) {
    j["balanced_baseline_cycles"] = as_written(baseline);
    j["balanced_baseline_bottleneck_cycles"] = as_written(r.balanced.bottleneck());
  }
  j["compute_cycles"] = as_written(plan.compute_cycles);
  j["redistribution_cycles"] = as_written(plan.redistribution_cycles);
  j["energy_pj"] = as_written(plan.energy_pj);
  if (!r.copies.empty()) {
    j["first_split_bottleneck_cycles"] = as_written(r.first_split.bottleneck());
    j["first_split_copied_edges"] = r.copied_edges;
  }
  j["ranges_priced"] = r.ranges_priced;
  j["ranges_stopped"] = r.ranges_stopped;
  j["notes"] = calibration_notes;
  for (const std::string& note : graph.notes()) j["notes"].push_back(note);
  for (const std::string& note : notes) j["notes"].push_back(note);
  j["solve_seconds"] = r.seconds;
  j["pes"] = plan.pes;
  j["topology"] = plan.topology;
  j["layers"] = network.layers.size();
  j["edges"] = network.edges.size();
  j["units"] = {{"*_cycles",
                 "clock cycles; total_cost (= pipeline), whole_machine and balanced_baseline: all "
                 "micro-batches; bottleneck and first_split_bottleneck: per micro-batch; the rest "
                 "per micro-batch summed "
                 "over the stages"},
                {"imbalance", "slowest / fastest stage"},
                {"efficiency", "mean / slowest stage"},
                {"energy_pj", "picojoules per micro-batch"},
                {"solve_seconds", "seconds (wall clock)"}};
  write_file(fs::path(a.out) / "summary.json", json_text(j, 2) + "\n");

  std::cout << "  " << r.ranges_priced << " (layer range, " << (hw.mesh() ? "rows" : "ports")
            << ") stage costs solved in " << fixed(r.seconds, 2) << " s"
            << (r.ranges_stopped ? " (" + std::to_string(r.ranges_stopped) +
                                       " of them stopped once shown too slow to matter)"
                                 : std::string())
            << "\n";
  if (!r.copies.empty())
    std::cout << "  split twice: in the first split (bottleneck "
              << fixed(r.first_split.bottleneck(), 1) << " cycles as first priced) "
              << counted(r.copied_edges, "edge")
              << " between stages carried copies for their consumers' choices; priced again with "
                 "the producers' stages sending them, and split again\n";
  std::cout << "    stage  " << std::left << std::setw(44) << "first .. last layer" << std::right
            << std::setw(7) << "layers" << std::setw(6) << (hw.mesh() ? "rows" : "ports")
            << std::setw(10) << "PEs" << std::setw(14) << "cycles/mb" << std::setw(16)
            << "resident B/PE"
            << "\n";
  for (std::size_t s = 0; s < plan.stages.size(); ++s) {
    const opt::PlanStage& st = plan.stages[s];
    const std::string span = st.first == st.last ? st.first : st.first + " .. " + st.last;
    std::cout << "    " << std::setw(5) << s << "  " << std::left << std::setw(44)
              << span.substr(0, 43) << std::right << std::setw(7)
              << r.split.begin[s + 1] - r.split.begin[s] << std::setw(6) << st.units
              << std::setw(10) << st.pe_range() << std::setw(14) << fixed(st.cycles, 1)
              << std::setw(16) << fixed(r.resident_bytes[s], 0) << "\n";
  }
  std::cout << "  (resident: every layer's weights plus the largest layer's activations, per PE; "
            << (a.resident_weights ? "bounded by" : "not bounded, --resident-weights bounds it by")
            << " the SRAM, " << spec.pe.sram_bytes << " bytes)\n";
  // One decimal, as the table's rows: the sum below is of the unrounded stages (stages.csv has
  // them), so it may differ from the printed rows' sum by their rounding (a tenth or two).
  std::cout << "  bottleneck " << fixed(r.split.bottleneck(), 1)
            << " cycles per micro-batch; imbalance " << fixed(r.split.imbalance(), 2)
            << " (slowest / fastest stage), efficiency " << fixed(100 * r.split.efficiency(), 1)
            << " % (mean / slowest)\n"
            << "  " << counted(a.micro_batches, "micro-batch") << " of batch " << plan.batch << ": "
            << fixed(plan.pipeline_cycles, 1) << " cycles predicted (the stages' sum "
            << fixed(plan.pipeline_cycles - (a.micro_batches - 1) * r.split.bottleneck(), 1)
            << " + " << a.micro_batches - 1 << " x the bottleneck)";
  if (std::isfinite(whole))
    std::cout << "; the whole machine layer by layer: " << a.micro_batches << " x "
              << fixed(r.whole_machine_cycles, 1) << " = " << fixed(whole, 1) << " cycles ("
              << fixed(whole / plan.pipeline_cycles, 2) << "x the pipeline's time)";
  // Seed 004's comparison: what its balanced split (even rows) would give.
  std::cout << "\n  seed 004's balanced baseline (even " << (hw.mesh() ? "rows" : "ports")
            << ", layers cut at equal shares of their cheapest cycles): ";
  if (std::isfinite(baseline)) {
    std::cout << "bottleneck " << fixed(r.balanced.bottleneck(), 1) << ", " << fixed(baseline, 1)
              << " cycles predicted (" << fixed(baseline / plan.pipeline_cycles, 2)
              << "x the pipeline's time); stages of";
    for (int s = 0; s < r.balanced.stages(); ++s)
      std::cout << (s ? "," : "") << " " << r.balanced.begin[s + 1] - r.balanced.begin[s];
    std::cout << " layers";
  } else {
    std::cout << "a stage does not fit";
  }
  std::cout << "\n";
  print_notes(notes);
  std::cout << "nocflow: wrote " << a.out
            << "/plan.yaml, plan.dot, stages.csv, summary.json, config.resolved.yaml\n";
  return 0;
}

}  // namespace nocflow::sim::cli
