// SPDX-License-Identifier: MIT
#pragma once
// `nocflow optimize`'s options and the pieces its two modes share: one plan over the whole
// machine (cmd_optimize.cpp) and pipeline stages, --stages (cmd_optimize_pipeline.cpp).
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

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

/// summary.json's first keys, for both modes: network, batch, train, solver, cost model, placement.
nlohmann::ordered_json summary_head(const OptimizeArgs& a, const optimizer::Plan& plan);

/// Without --memory-limit: a warning when a layer of `plan` (its layers the workload's, in its
/// order) needs more than a PE's SRAM, which simulate would refuse.
void warn_if_over_sram(const optimizer::Workload& w, const optimizer::Plan& plan,
                       std::int64_t sram_bytes);

/// --stages: cut the network into pipeline stages, each on its own band of rows.
int run_pipeline(const OptimizeArgs& a, const HwSpec& spec, const optimizer::HwDesc& hw,
                 const optimizer::Graph& graph);

}  // namespace nocflow::sim::cli
