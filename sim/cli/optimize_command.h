// SPDX-License-Identifier: MIT
#pragma once
// `nocflow optimize`'s options and the pieces its two modes share: one plan over the whole
// machine (cmd_optimize.cpp) and pipeline stages, --stages (cmd_optimize_pipeline.cpp).
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "optimizer/graph/graph.h"
#include "optimizer/partition/workload.h"
#include "optimizer/plan/plan.h"
#include "sim/cli/command.h"

namespace nocflow::sim::cli {

struct OptimizeArgs {
  HwOptions hw;
  NetworkOptions net;
  std::string solver = "dp";
  std::string cost_model = "linkload";
  std::string formulation = "flow";
  bool compare = false;
  bool exact = false;
  bool memory_limit = true;  // as simulate and sweep solve: a plan simulate can replay
  bool no_prune = false;
  std::string placement = "snake";
  double time_limit = 60;
  double bnoc = 0;
  std::string calibration;
  std::string export_lp;
  std::string out;
  int stages = 0;  ///< > 0: pipeline stages (plan/pipeline.h)
  int micro_batches = 4;
  bool resident_weights = false;
  bool quiet = false;  // no progress lines
};

/// summary.json's first keys, for both modes: the build, network, batch, train, solver, cost
/// model, placement, and what else the solve was given (calibration, --bnoc, memory limit,
/// exact nodes, pruning, time limit).
nlohmann::ordered_json summary_head(const OptimizeArgs& a, const optimizer::Plan& plan);

/// The notes on a solved plan (its layers the workload's, in its order) beside the solver's and
/// the graph's: layers on one PE, the element size, the machine's notes and, without
/// --memory-limit, a warning ("warning: ...") when a layer needs more than a PE's SRAM, which
/// simulate would refuse. summary.json's `notes` lists them all, as the console prints them.
std::vector<std::string> plan_notes(const OptimizeArgs& a, const HwSpec& spec,
                                    const optimizer::Graph& graph, const optimizer::Workload& w,
                                    const optimizer::Plan& plan);
/// Prints notes as "  note: ...", warnings as "  warning: ...".
void print_notes(const std::vector<std::string>& notes);

/// --stages: cut the network into pipeline stages, each on its own band of rows.
/// `calibration_notes` (apply_calibration's) are printed after its banner and listed in
/// summary.json.
int run_pipeline(const OptimizeArgs& a, const HwSpec& spec, const optimizer::HwDesc& hw,
                 const optimizer::Graph& graph, const std::vector<std::string>& calibration_notes);

}  // namespace nocflow::sim::cli
