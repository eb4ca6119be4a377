// SPDX-License-Identifier: MIT
#pragma once
// Cost models: what a layer costs under a choice and what an edge costs under a pair of
// choices, in cycles (and pJ, bytes). Chosen by name ("paper", "linkload").
//
// Contract: pure functions of (workload, hardware, choices): same arguments, same result, so
// the solvers may tabulate them. Costs are ≥ 0. The edge cost covers moving the producer's
// output to one consumer input slot; a layer's own work (compute, and for linkload the
// reduction of INPP partial sums) is in its layer cost.
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "optimizer/cost/hw_desc.h"
#include "optimizer/partition/choice.h"
#include "optimizer/partition/workload.h"

namespace nocflow::optimizer {

struct Cost {
  double cycles = 0;
  double energy_pj = 0;
  double bytes = 0;  ///< bytes moved (edges; linkload: also a layer's reduction)
};

class CostModel {
 public:
  virtual ~CostModel() = default;
  virtual std::string name() const = 0;
  virtual Cost layer_cost(const Layer& layer, const Choice& choice) const = 0;
  virtual Cost edge_cost(const Workload& workload, const LayerEdge& edge, const Choice& src,
                         const Choice& dst) const = 0;
  /// Told how many more entries of a table are done, from whichever thread computed them (for
  /// progress lines: it must be thread-safe).
  using EntriesDone = std::function<void(std::size_t)>;
  /// edge_cost(...).cycles for every pair, row-major |src_choices| × |dst_choices|. The
  /// default calls edge_cost per pair; a model may override it with a faster computation of
  /// the same numbers. `done`, if set, hears of each row (or part of one) finished.
  virtual std::vector<double> edge_cycles_table(const Workload& workload, const LayerEdge& edge,
                                                const std::vector<Choice>& src_choices,
                                                const std::vector<Choice>& dst_choices,
                                                const EntriesDone& done = {}) const;
};

/// Throws InputError listing the known names for an unknown one. `threads`: for tabulating
/// (linkload), 0 = one per hardware thread; results never depend on it.
std::unique_ptr<CostModel> make_cost_model(const std::string& name, const HwDesc& hw, int threads = 0);
std::vector<std::string> cost_model_names();

/// What one PE of a layer holds under a choice, in bytes spread evenly over the parts (fractions
/// of an element; held_shares counts whole ones): its weight share (split by OUTP and
/// INPP, a fused tail's by OUTP only; a weight update's like its output; and the part of each
/// fixed constant it reads, split as an input is, Layer::Input::held_bytes), its input shares (each
/// input split by the dimensions that split it, Layer::Input) and its output block (split by BATCH,
/// OUTP, OFMP_H, OFMP_W). Halos are not counted.
struct LayerShares {
  double weights = 0, input = 0, output = 0;
};
LayerShares layer_shares(const Layer& layer, const Choice& choice);
/// One PE's share of input slot `input` (bytes, halos not counted).
double input_share(const Layer& layer, int input, const Choice& choice);

/// layer_shares as a PE holds them in SRAM: each share a whole number of elements, ⌈elements /
/// parts⌉ times their size (a weight's Layer::elem_bytes, an input's Layer::Input::elem_bytes),
/// where layer_shares spreads the bytes evenly (in fractions of an element: a convolution's
/// 10 weights of 2 bytes under OUTP=2,INPP=2 hold 5 bytes there, 6 here). What the SRAM
/// check (layer_memory_bytes), --resident-weights and the memory plan (memory.csv) count; the PE
/// model's SRAM traffic reads layer_shares.
LayerShares held_shares(const Layer& layer, const Choice& choice);
/// held_shares' part of input slot `input`: input_share in whole elements.
std::int64_t held_input_share(const Layer& layer, int input, const Choice& choice);

/// What a layer holds beside its weights (`shares` its layer_shares or held_shares): its input
/// and output shares, but for a weight update's output, written in place over its weights.
double activation_share(const Layer& layer, const LayerShares& shares);
/// Per-PE bytes a layer holds under a choice (for the SRAM constraint): its held_shares' weights
/// and activation_share.
double layer_memory_bytes(const Layer& layer, const Choice& choice);

}  // namespace nocflow::optimizer
