// SPDX-License-Identifier: MIT
#pragma once
// What `optimize`, `simulate` (and later `validate`, `sweep`) share, so that they always see
// the same network and the same machine: the optimizer's view of the hardware config, and the
// network as the optimizer partitions it (loaded, passes run, zoo elements of data.width_bytes).
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "optimizer/cost/hw_desc.h"
#include "optimizer/graph/graph.h"
#include "optimizer/plan/partition_setup.h"
#include "optimizer/plan/plan.h"
#include "sim/config/hw_spec.h"

namespace nocflow::sim {

/// Router pipeline per hop: route computation (unless lookahead), VC and switch allocation
/// (overlapped when speculative), switch traversal. `bnoc`: the paper model's B_NoC in bytes
/// per cycle, 0 for one link's.
optimizer::HwDesc hw_desc_of(const HwSpec& spec, double bnoc = 0);

/// zoo:NAME, a network .yaml or an .onnx file; `batch` 0: not given (optimizer::load_network);
/// `passes` as for `nocflow inspect`; `train`: an optimizer for the training graph
/// (optimizer/passes/autodiff.h), "" for inference.
optimizer::Graph prepare_network(const std::string& network, std::int64_t batch, const HwSpec& spec,
                                 const std::string& passes = "default",
                                 const std::string& train = "");

/// "" when the network's inputs have the hardware's element size (data.width_bytes, which zoo
/// networks take), or when `network` is an ONNX model whose floats take it (data.onnx_floats:
/// width; its integers keep their type's, as the key says); otherwise a note saying which size
/// the run uses: network files and ONNX models keep their own (elem_bytes, the tensors' data
/// type).
std::string element_size_note(const optimizer::Graph& graph, const HwSpec& spec,
                               const std::string& network);

/// "" unless partition.splits is `divisors` and `plan` runs layers with MACs or vector work on
/// one PE of a machine (a pipeline stage's band) of more, because no divisor of their dimensions
/// splits them where balanced splits would; else one line (without "note: ") saying how many,
/// which sizes and what to set. `workload`: the network's layers, matched to `plan`'s by name.
std::string single_pe_note(const optimizer::Workload& workload, const optimizer::Plan& plan,
                           const HwSpec& spec);

/// A plan solved for replay, as `simulate` (without --plan) and `sweep` solve: the per-PE SRAM
/// limit on (lowering rejects a plan that does not fit), dominance pruning, a 60 s ILP limit.
struct SolvedPlan {
  optimizer::Plan plan;
  double tabulate_seconds = 0, solve_seconds = 0;  ///< wall clock
};
/// `threads`: for tabulating the cost model, 0 = one per hardware thread. `placement_search`:
/// also offer PLACE=ROWS choices (optimizer/partition/placement.h, rule 3).
/// `progress`: as optimizer::SetupOptions::progress.
SolvedPlan solve_plan(const optimizer::Graph& graph, const optimizer::HwDesc& hw,
                      const std::string& solver, const std::string& cost_model, int threads = 0,
                      bool placement_search = false,
                      const optimizer::TabulationProgress& progress = {});

}  // namespace nocflow::sim
