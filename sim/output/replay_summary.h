// SPDX-License-Identifier: MIT
#pragma once
// What a plan's replay measured (sim/cli: `nocflow simulate`): totals, energy, memory plan,
// pipeline stages and traffic, as summary.json holds them and the console prints them.
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "optimizer/plan/plan.h"
#include "sim/lower/lowering.h"
#include "sim/lower/memory_plan.h"
#include "sim/output/layer_stats.h"
#include "sim/output/memory_use.h"
#include "sim/output/run_report.h"
#include "sim/system/system.h"

namespace nocflow::sim {

/// Where the replayed plan came from, and how it ran.
struct ReplaySource {
  std::string mode;         ///< dataflow | barrier
  std::string plan_file;    ///< --plan; "" when solved for the run
  std::string solved_by;    ///< "SOLVER / COST_MODEL" when solved for the run
  std::string calibration;  ///< of the predictions; "" for none
  std::int64_t batch = 1;   ///< of the network replayed
  std::string train;        ///< the weight updates' optimizer; "" for inference
  /// A pipelined plan file replayed with other micro-batches than its own: its total is then
  /// predicted from its stages, not read from the file.
  bool micro_batches_changed = false;
  /// The plan's predictions are for another run (another batch, network, hardware, edited
  /// choices; simulate's notes say which): no error against them is printed.
  bool predictions_stale = false;
};

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
  RunMemory in_use;            ///< the plan's live buffers plus early messages, during the run
  PipelineRun pipeline;        ///< a pipelined plan's stages
  const PeMemoryPlan& fullest() const { return memory[fullest_pe]; }
};

/// `run` with its layers, totals, edges, energy, memory plan and (for a pipelined `replayed`)
/// stages worked out; `mode` the replay's.
Measured measure(RunResult run, const optimizer::Workload& workload, const Lowered& lowered,
                 const optimizer::Plan& replayed, const optimizer::HwDesc& hw, const HwSpec& spec,
                 ExecMode mode);

/// summary.json's `train` (optimize's and simulate's): the weight updates' optimizer, null for
/// inference ("").
nlohmann::ordered_json train_json(const std::string& train);

/// summary.json. `stale`: why the plan's predicted total does not apply to this run.
nlohmann::ordered_json summary_json(const ReplaySource& source, const std::string& network,
                                    const optimizer::Plan& plan, const std::vector<std::string>& stale,
                                    const HwSpec& spec, const Measured& m);

/// The console's figures of the run: totals, energy, memory, traffic, pipeline stages.
void print_measured(std::ostream& out, const ReplaySource& source, const optimizer::Plan& plan,
                    const HwSpec& spec, const Measured& m);

/// The console's traffic and simulation lines (also a replay of programs).
void print_traffic(std::ostream& out, const RunResult& r);

/// The run's traffic and wall time into summary.json (also a replay of programs).
void add_traffic(nlohmann::ordered_json& j, const RunResult& r);
/// The units of add_traffic's fields, into summary.json's "units" (also a replay of programs).
void add_traffic_units(nlohmann::ordered_json& units);

}  // namespace nocflow::sim
