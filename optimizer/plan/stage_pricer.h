// SPDX-License-Identifier: MIT
#pragma once
// The stage costs of a pipeline (pipeline.h): every (layer range, band height) the min-max
// split asks for, bounded, solved or stopped at a cutoff on its band as a machine of its own.
// solve_pipeline's, in a file of its own.
#include <array>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "optimizer/plan/pipeline.h"

namespace nocflow::optimizer {

/// Which stage's cost holds an edge between stages (pipeline.h). Its consumer's, when the
/// producer is the last layer of the stage just before: the tensor crosses as that stage could
/// start. Its producer's, when the producer is not its stage's last layer: the tensor crosses
/// while that stage runs on, through its PEs' NIs and its band's links. Neither's when a
/// stage's last layer feeds a stage two or more on: it crosses while the stages between run.
/// `producer_end`: the end of the producer's layer range; `consumer_first`: the first layer of
/// the consumer's.
enum class CrossingPayer { Consumer, Producer, Neither };
CrossingPayer crossing_payer(const LayerEdge& e, int producer_end, int consumer_first);
/// crossing_payer's two cases, each known to one side: the consumer's stage, from its first
/// layer, pays `e` all; the producer's stage, from its end, pays the tensor once (once
/// repriced, as many times as StagePricer::copies says).
inline bool consumer_pays(const LayerEdge& e, int consumer_first) {
  return e.src == consumer_first - 1;
}
inline bool producer_pays(const LayerEdge& e, int producer_end) {
  return e.src < producer_end - 1;
}

/// Hops of a stage input's mean route into a band of `units` (pipeline.h: an estimate).
double stage_input_hops(const HwDesc& hw, int units);

/// Everything priced on one band height, in two steps: the layers' costs alone (cheap: every
/// height has them), then the whole network tabulated on it (only a height on which some
/// stage is solved).
struct Band {
  HwDesc hw;
  std::unique_ptr<CostModel> model;
  std::string failure;  ///< why no layer range fits this band ("" when it may)
  /// With the memory limit: next_unfit[first] is the first layer from `first` on that fits
  /// none of its choices on this band (the layer count if none), so a stage of layers
  /// [first, end) fits only if end ≤ next_unfit[first]; `unfit` says why the first does not.
  std::vector<int> next_unfit;
  std::string unfit;
  /// Why a stage on this band may not fit: `failure`, else `unfit` ("" when every layer fits).
  const std::string& why_not() const { return failure.empty() ? unfit : failure; }
  bool tabulated = false;
  PartitionSetup setup;  ///< once tabulated
  /// bound[first · (layers + 1) + end]: a lower bound of the stage of layers [first, end) on
  /// this band. Before tabulation each layer's cheapest choice with its stage inputs; after,
  /// its best assignment counting the layer costs, the stage inputs and the edges between
  /// consecutive layers (the other edges, each costing at least 0, only add).
  std::vector<double> bound;
  /// Once tabulated: no layer cost or edge entry is negative, so a stage never costs less for
  /// taking more layers (what it adds, layer costs, edges and stage inputs, is never negative)
  /// but for what its producers paid of the edges to the layers it takes (StagePricer::learn).
  bool grows = false;
  /// Once tabulated, by edge of the workload: its output_cycles at its producer's dearest
  /// choice on this band.
  std::vector<double> dearest_output;
};

/// Prices stages for split_min_max_units (StageCost, StageBound) and solves the chosen ones'
/// plans. Bands are built on first use and tabulated only where some stage is solved.
struct StagePricer {
  StagePricer(const Workload& w, const HwDesc& hw, const PipelineOptions& o,
              const std::string& model);

  /// StageCost: the cost, or above `cutoff` perhaps a bound above it (+inf: does not fit).
  StagePrice cost(int first, int end, int units,
                  double cutoff = std::numeric_limits<double>::infinity());

  /// At most cost(first, end, units), without solving or tabulating: Band::bound, a relative
  /// 10⁻⁹ lower for rounding (the costs are cycles, ≥ 0).
  double lower_bound(int first, int end, int units);

  struct Solved {
    PartitionSetup setup;
    SolveResult result;
  };

  /// The stage's plan; with a cutoff (SolveOptions::cutoff) perhaps only a bound above it.
  /// Solved once: an exact answer is kept, so the plan is the assignment the stage was priced
  /// with.
  Solved solve(int first, int end, int units,
               double cutoff = std::numeric_limits<double>::infinity());

  /// The band of `units`, with its layer costs (and their bounds) at least.
  Band& band(int units);

  /// The band of `units` tabulated, unless it fails.
  Band& tabulated(int units);

  /// Cycles for a PE of `layer` under `c` on a band of `units` to receive the tensor of a
  /// producer in an earlier stage (pipeline.h: an estimate).
  double stage_input_cycles(const Layer& producer, const Layer& layer, int input, const Choice& c,
                            int units) const;

  /// Cycles for the PEs of `producer` under `c` on a band of `units` to send input `input` of
  /// `consumer` out of the band (pipeline.h: an estimate): the tensor once through the band's
  /// `cols` boundary links (a crossbar: each PE's share through its injection channel).
  double stage_output_cycles(const Layer& producer, const Choice& c, const Layer& consumer,
                             int input) const;

  /// Cycles for the copies beyond `paid` of input `input` that `layer` under `c` needs from
  /// `producer` in an earlier stage that pays `paid` copies of the tensor (stage_output_cycles
  /// each): through the band's `cols` boundary links (a crossbar: the PE's ejection channel; a
  /// one-PE producer: its injection channel).
  double stage_copies_cycles(const Layer& producer, const Layer& layer, int input, const Choice& c,
                             double paid = 1) const;

  /// What the producer's stage pays of workload edge `i` (producer_pays) under `c`:
  /// stage_output_cycles, times the edge's `copies` once repriced.
  double output_cycles(std::size_t i, const Choice& c) const;

  /// What the consumer's stage pays of workload edge `i` from an earlier stage but the one just
  /// before, under `c`: the copies beyond those its producer's stage pays (stage_copies_cycles):
  /// beyond one, or once repriced beyond the edge's `copies` (none, for the choice they were
  /// counted for).
  double copies_cycles(std::size_t i, const Choice& c) const;

  /// Prices the edges between stages again with `copies` (per workload edge, ≥ 1: the copies of
  /// its tensor its consumer's choice needs). A stage whose cost reads no changed count
  /// (reads_copies) keeps its solves; every other is solved again, with what was proven of it,
  /// less most_saved, as its bound.
  void reprice(std::vector<double> copies);

  /// Whether the stage of layers [first, end) pays an edge whose copies differ between
  /// `copies` and `other` (empty: one each; pays_copies).
  bool reads_copies(int first, int end, const std::vector<double>& other) const;

  /// Whether the stage of layers [first, end) pays copies of workload edge `i`: those beyond
  /// the ones sent, of an edge into it from a stage but the one just before (copies_cycles), or
  /// those it sends of an edge out of it (output_cycles).
  bool pays_copies(std::size_t i, int first, int end) const;

  /// The most any choice of the stage of layers [first, end) on a tabulated band of `units`
  /// costs less with `next` copies than with `copies`: per edge it pays copies of whose count
  /// changes, the most one of its layer's choices saves.
  double most_saved(int first, int end, int units, const std::vector<double>& next) const;

  /// Per-PE bytes of weights resident across micro-batches plus the largest layer's
  /// activations: what the stage's PEs hold at most under `choice`.
  static double stage_bytes(const PartitionSetup& s, const std::vector<int>& choice);

  const Workload& w;              ///< the caller's, which must outlive the pricer
  const HwDesc hw;                ///< copies: callers pass temporaries and literals
  const PipelineOptions o;
  const std::string cost_model;
  /// Once repriced, per workload edge: the copies of its tensor that the producer's stage sends
  /// (the consumer's stage then pays none); empty: the producer's stage sends it once and the
  /// consumer's pays the copies beyond one. The copies slow the stage that sends them: a
  /// training graph's forward layers send their saved activations while their stage runs on.
  std::vector<double> copies;
  std::vector<std::unique_ptr<Band>> bands;  ///< [units], built on first use
  /// grown[units][first · (layers + 1) + end]: the most a stage of layers [first, e) on `units`
  /// was proven to cost at least (its optimum, a bound a cutoff stopped at, with resident
  /// weights what the search for a fitting assignment proved), less what its producers may
  /// have paid for edges into [e, end), for any e ≤ end; on a band that grows (Band::grows) at
  /// most what [first, end) costs: a longer stage holds more weights and activations, so it
  /// fits no more easily either.
  std::vector<std::vector<double>> grown;
  /// Exact solves by (first, end, units): what the split priced, the baselines and the plan
  /// read back instead of solving again.
  std::map<std::array<int, 3>, SolveResult> exact;
  /// What the search for a fitting assignment (fit_resident) found, by (first, end, units).
  struct ResidentFit {
    std::string note;     ///< how far from the cheapest that fits it may be; "" when proven
    double lower = -std::numeric_limits<double>::infinity();  ///< no fitting one costs less
    bool infeasible = false;  ///< proven: none fits (nor does one of any longer range)
  };
  std::map<std::array<int, 3>, ResidentFit> resident_fits;
  /// By (first, end, units): the most its solves proved the range costs (learn), learned
  /// again once repriced where it stands.
  std::map<std::array<int, 3>, double> proven;
  int priced = 0;   ///< stage solves run (a range asked again under a higher cutoff counts again)
  int stopped = 0;  ///< of those, the solves stopped at a cutoff
  std::string why;  ///< the first reason a stage did not fit, for the error when none does

 private:
  /// Band::bound for every range: per first layer, a Viterbi pass over the layers after it,
  /// each choice's layer cost plus its stage inputs from layers before `first` (as
  /// stage_setup adds them), through the tables of the edges from each layer to the next.
  /// Without those tables only the layer costs and stage inputs (each layer's cheapest choice);
  /// with a negative edge cost (the models' are cycles, never negative) no bound at all.
  std::vector<double> chain_bounds(const PartitionSetup& setup, int units) const;

  /// Band::dearest_output of a tabulated band.
  void dearest_outputs(Band& b) const;

  /// The stage of layers [first, end) on `units`: its sub-problem, stage inputs added to the
  /// consumers' layer costs.
  PartitionSetup stage_setup(int first, int end, int units);

  /// The stage's cheapest assignment holds more than the SRAM with its weights resident: look
  /// for a cheap one that fits by pricing every byte of a choice's weights per PE λ cycles more
  /// (a Lagrangian relaxation of the bound): λ raised fourfold until the solve fits, then
  /// bisected towards the cheapest that fits, then improved by a local search; again on the
  /// choices whose activations stay below its peak while that pays (resident_fit.cpp).
  /// Feasible; proven the cheapest (r.optimal) only where the solves' Lagrangian bound meets
  /// it. `r` is left as it was when no choice of weights could fit (the lightest weights of
  /// every layer plus the least any layer's activations need exceed the SRAM) or the heaviest
  /// pricing does not. Returns what it proved and, where the assignment is not proven the
  /// cheapest, how far from it it may be.
  ResidentFit fit_resident(const PartitionSetup& s, SolveResult& r);

  /// Keeps `least`, a lower bound of [first, end)'s cost, in `proven`, and raises grown[units]
  /// for [first, e ≥ end) to it less what [first, end)'s producers paid for edges into [end, e)
  /// (not kept without PipelineOptions::bound_by_shorter or on a band that does not grow).
  void learn(int first, int end, int units, double least);
};

}  // namespace nocflow::optimizer
