// SPDX-License-Identifier: MIT
#pragma once
// What a prediction was priced for, and what a run checks against it: the config keys the
// cost models read (a plan's priced_for), the batch and training optimizer of the network, the
// hardware a calibration was fitted on, and why a plan's predicted total does not apply to a
// replay (simulate --plan).
#include <cstdint>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "optimizer/cost/hw_desc.h"
#include "optimizer/graph/graph.h"
#include "optimizer/plan/plan.h"
#include "sim/config/hw_spec.h"

namespace nocflow::sim {

/// The config keys hw_desc_of reads, with their values in `spec` (those that apply to its
/// topology): what a plan's prediction depends on (optimizer::Plan::priced_for).
std::vector<std::pair<std::string, std::string>> priced_for(const HwSpec& spec);

/// The config keys a calibration (validate --calibrate) depends on besides each machine's
/// topology: every router, link, NI and lowering key, with its value (the fitted cases' messages
/// depend on lowering.all_gather).
std::vector<std::pair<std::string, std::string>> calibrated_for(const HwSpec& spec);
/// calibration.yaml's `fitted_for` section: the machines fitted on and calibrated_for(base).
std::string calibration_scope_yaml(const std::vector<std::string>& machines, const HwSpec& base);
/// Notes on pricing `spec` with calibration `file`: the keys of calibrated_for whose values
/// differ from the hardware it was fitted on, and the machines its paper fit saw when this one
/// is not among them. None when it applies, or for a file without `fitted_for`.
std::vector<std::string> calibration_notes(const std::string& file, const HwSpec& spec);

/// optimizer::apply_calibration_file, then calibration_notes for the caller to print (after its
/// banner). With `linkload` (the run prices with it), InputError first when the file has no
/// router contention for this machine (HwDesc::router_slowdown_missing): refused before any
/// output, not when the model is built; and a note when the file has no linkload section at all.
std::vector<std::string> apply_calibration(const std::string& file, const HwSpec& spec,
                                           optimizer::HwDesc& hw, bool linkload);

/// The keys of a plan's priced_for whose value `spec` changes, as "key old -> new, ..."; "" when
/// none does (the plan's predicted cycles apply to this hardware). Not the keys the predicted
/// cycles do not read: the energy costs (the plan's energy_pj) and pe.sram_bytes (which plans
/// fit, not what one costs).
std::string priced_for_changes(const optimizer::Plan& plan, const HwSpec& spec);

/// The batch size of a network: its first input's leading dimension (a zoo network's --batch, a
/// file's own), 1 without inputs.
std::int64_t network_batch(const optimizer::Graph& graph);

/// The optimizer of a training graph's weight updates (sgd, momentum, adam); "" for inference.
std::string training_optimizer(const optimizer::Graph& graph);

/// Records in `plan` what it was priced for: the batch, the hardware in one line, priced_for,
/// the training optimizer and the graph passes (`passes`, as --passes gave them) that made
/// `graph`'s layers.
void record_priced_inputs(optimizer::Plan& plan, const HwSpec& spec, const optimizer::Graph& graph,
                          const std::string& passes);

/// Why `plan`'s predicted total does not apply to a run of `graph` (whose layers output
/// `activation_bytes`) on `spec`, as (reason, what the plan was priced for) pairs; reasons:
/// batch, network (other shapes or element size), train (other weight updates), hardware.
/// Empty for a plan priced on this run's inputs.
std::vector<std::pair<std::string, std::string>> plan_mismatches(const optimizer::Plan& plan,
                                                                 const optimizer::Graph& graph,
                                                                 std::int64_t activation_bytes,
                                                                 const HwSpec& spec);

/// For a plan that does not fit `graph`: " (the plan was made for batch 4, this network has
/// batch 1: add --batch 4)" when the batches differ (the --batch advice for zoo networks, named
/// by `network`); "" otherwise.
std::string batch_hint(const optimizer::Plan& plan, const optimizer::Graph& graph,
                       const std::string& network);

/// "" when `plan` was priced with the calibration file `calibration` ("" for none) or does not
/// say; otherwise a note naming both. A plan priced with optimize's `--bnoc`, which simulate
/// does not take, always gets the note.
std::string calibration_mismatch(const optimizer::Plan& plan, const std::string& calibration);

}  // namespace nocflow::sim
