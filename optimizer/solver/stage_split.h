// SPDX-License-Identifier: MIT
#pragma once
// Pipeline stage splits (seed 004): cut a sequence of layers into contiguous stages so that
// the slowest stage, which sets the pipeline's rate, is as fast as possible.
//
// Seed 004 splits layer times among equal devices: `split_min_max` is its min-max dynamic
// program (optimal), `split_balanced` its near-even baseline (cut once a stage reaches total/K).
// nocflow's stages also choose how much of the machine each gets: `split_min_max_units` gives
// stage s `units[s]` ≥ 1 of U units (whole mesh rows) and asks the cost of a stage from the
// caller, who prices a range of layers on a number of units (an ordinary partition solve on
// that sub-machine).
#include <functional>
#include <vector>

namespace nocflow::optimizer {

struct StageSplit {
  std::vector<int> begin;    ///< K + 1 cut points: stage s holds layers [begin[s], begin[s+1])
  std::vector<int> units;    ///< per stage (split_min_max_units; empty otherwise)
  std::vector<double> cost;  ///< per stage
  int stages() const { return static_cast<int>(cost.size()); }
  double bottleneck() const;  ///< max stage cost: one micro-batch leaves every bottleneck cycles
  double imbalance() const;   ///< max / min stage cost (seed 004: target below 1.15)
  double efficiency() const;  ///< mean / max stage cost
  /// Cycles for M micro-batches through the stages: fill and drain plus M − 1 bottlenecks,
  /// Σ_s cost[s] + (M − 1) · bottleneck.
  double pipeline_cost(int micro_batches) const;
};

/// The split of `times` into `stages` contiguous non-empty stages with the least maximum stage
/// sum (ties: the first found, trying
/// each stage's first layer from the front). Throws InputError unless 1 ≤ stages ≤ times.size().
StageSplit split_min_max(const std::vector<double>& times, int stages);

/// Seed 004's balanced baseline: walk the layers, close a stage once its sum reaches
/// total/stages while stages remain, the last stage takes the rest; every stage keeps at least
/// one layer (so exactly `stages` stages). Same preconditions.
StageSplit split_balanced(const std::vector<double>& times, int stages);

/// What a stage cost answers: the cost, or (only where that is above the cutoff it was asked
/// with) a lower bound above the cutoff, which shows the stage too slow to matter there. +inf
/// means the stage does not fit, bound or not.
struct StagePrice {
  StagePrice(double cost, bool bound = false) : cost(cost), bound(bound) {}  // NOLINT: implicit
  double cost;
  bool bound;  ///< `cost` is a lower bound above the cutoff, not the cost
};

/// cost(first, end, units, cutoff): a stage of layers [first, end) on `units` units; +inf if it
/// does not fit (memory, no valid choice). Above `cutoff` it may answer a bound (StagePrice).
using StageCost = std::function<StagePrice(int first, int end, int units, double cutoff)>;
/// lower_bound(first, end, units): at most the stage's cost.
using StageBound = std::function<double(int first, int end, int units)>;

/// Cuts `layers` layers into `stages` contiguous stages and `units` units among them (each
/// stage at least one, all used), minimising the maximum stage cost and then, among splits
/// with that maximum, the sum of stage costs (ties on both: the first found). Throws
/// InputError unless
/// 1 ≤ stages ≤ min(layers, units), or when every split has an infinite stage.
///
/// A stage cost is asked only where it could still win: not where the split before it is
/// already slower than the best found, and with a cutoff (the least of the best found for its
/// cell and the cap below) above which a bound serves as well as the cost. With `lower_bound`
/// (at most the cost, for the same arguments; cheap, and asked many times: it may tighten
/// between calls), the candidates for each (layers, stages, units) are tried in the order of
/// the max stage their bounds allow, least first, and only until that exceeds the best found;
/// and the DP runs under a cap on the max stage, from the best split of the bounds alone
/// upwards (2 % or more a pass) until some split fits within it. A partial split already
/// slower than the cap is never priced further, nor is one whose remaining layers and units
/// cannot be split within the cap by their bounds (a backward pass of the bounds gives that
/// for every cell), nor one whose last stage, priced first with the cap as its cutoff, is
/// slower than the cap. A second DP, every stage within the maximum found, then minimises the
/// sum, pricing a stage only where its bound leaves it a chance of a smaller sum. The maximum
/// and the sum are the same with or without a bound; among splits that tie on both, which is
/// found first may differ.
StageSplit split_min_max_units(int layers, int stages, int units, const StageCost& cost,
                               const StageBound& lower_bound = {});

}  // namespace nocflow::optimizer
