// SPDX-License-Identifier: MIT
#pragma once
// Plan ranking (`nocflow validate --rank`): do the cost models order plans the way the
// cycle-level simulator does? For each model, the k cheapest plans under that model
// (optimizer/solver/kbest.h, SRAM limit on, as `simulate` solves) are replayed, each in its own
// child process (sim/run/replay.h); a plan both models pick is replayed once.
//
// The k best plans of a model are usually near-twins (they differ in how one or two layers
// split, and the model prices them within a fraction of a percent), so their order is below
// any model's resolution. Each model also ranks a spread of plans: its best plan under each
// partition strategy (kStrategies: one dimension only, no INPP, all PEs, a quarter of the PEs,
// ...; a layer with no choice of a strategy keeps all its choices), found by dp on the
// unpruned problem restricted to the strategy's choices.
//
// Per model: Kendall τ-b between predicted and simulated total cycles over its k best plans and
// over its strategy plans; the regret of trusting it, (simulated cycles of its predicted-best
// plan − best simulated cycles among all plans replayed) / that best; the error of its
// predicted-best plan's prediction.
//
// Dataflow replay is the default: regret is about what a deployment would run. Barrier replay
// (phases isolated, as the models add them up) separates overlap from model error.
//
// The simulator's own resolution: each k-best plan is also replayed on images of its placement
// under the network's symmetries (noc/router/symmetry.h: mirrors of a mesh that its routing
// commutes with, a crossbar's port reversal). Every image moves the same flits over the same
// number of hops (the same NoC energy); what changes are the simulator's tie-breaks, which no
// analytic model sees: which port wins an arbitration tie, the order in which a source issues
// its sends (by ring distance along the placement) and which of two equally near copies of a
// block supplies it (the lower PE id; the links differ, the hop counts do not). τ-b between the
// simulator's orders of the k best on two images (mean over pairs of images) measures how much
// those tie-breaks reorder the plans; τ-b of the prediction against the mean over images is the
// model's τ with that noise averaged.
#include <cstdint>
#include <iosfwd>
#include <limits>
#include <string>
#include <vector>

#include "optimizer/plan/plan.h"
#include "sim/config/hw_spec.h"
#include "sim/lower/lowering.h"

namespace nocflow::sim {

struct RankOptions {
  std::string network;               ///< zoo:NAME, .yaml or .onnx
  std::int64_t batch = 1;
  std::string passes = "default";
  std::string train;                 ///< optimizer of the training graph, "" for inference
  int k = 10;                        ///< plans per model
  ExecMode mode = ExecMode::Dataflow;
  std::vector<std::string> models = {"paper", "linkload"};
  bool strategies = true;            ///< also rank the per-strategy best plans
  int jobs = 1;                      ///< replays at once (child processes)
  std::string calibration;           ///< calibration.yaml for the models (empty: none)
  int placements = 4;                ///< images of each k-best plan replayed, identity first
                                     ///< (at most the network's symmetries; 1: identity only)
};

struct RankedPlan {
  std::string model;
  std::string set = "kbest";       ///< "kbest" or "strategy"
  std::string label;               ///< "k-best 3", "strategy OUTP only"
  int k = 0;                       ///< index within the model's set; 0 = the cheapest k-best
  int plan_id = 0;                 ///< distinct plans over all models, from 0
  double predicted_cycles = 0;     ///< the model's plan total (compute + redistribution)
  double predicted_compute_cycles = 0, predicted_redistribution_cycles = 0;
  std::int64_t simulated_cycles = 0;
  std::int64_t simulated_compute_cycles = 0;        ///< on the critical path (RunTotals)
  std::int64_t simulated_communication_cycles = 0;  ///< on the critical path (RunTotals)
  int predicted_rank = 0, simulated_rank = 0;       ///< within the model's plans, 1 = cheapest;
                                                    ///< ties share the smaller rank
  std::vector<std::int64_t> placement_cycles;       ///< simulated on each image (RankReport::placements);
                                                    ///< [0] = simulated_cycles; plans in a k-best set
  double relative_error() const;                    ///< (predicted − simulated) / simulated
  double simulated_mean_cycles() const;             ///< mean over placement_cycles
};

/// Pairs of plans that the simulator orders the same way on every image, none tied (with one
/// image: every pair it does not tie), and how the prediction orders them: the model's
/// agreement with what the simulator resolves, tie-breaks aside.
struct ResolvedPairs {
  int pairs = 0;       ///< all pairs of the plans
  int resolved = 0;    ///< ordered alike on every image
  int concordant = 0;  ///< of those, predicted in the same order
  int discordant = 0;  ///< ... in the other order (the rest the prediction ties)
  /// Kendall's τ over the resolved pairs alone, (concordant − discordant) / resolved: the
  /// model's order of what the simulator orders whatever its tie-breaks; NaN without such pairs.
  double tau() const {
    return resolved > 0 ? static_cast<double>(concordant - discordant) / resolved
                        : std::numeric_limits<double>::quiet_NaN();
  }
};

/// `images[i][p]`: plan p's simulated cycles on image i; `predicted[p]` its prediction.
ResolvedPairs resolved_pairs(const std::vector<double>& predicted,
                             const std::vector<std::vector<double>>& images);

struct ModelRanking {
  std::string model;
  int plans = 0;
  double kendall_tau = 0;          ///< τ-b over the k best; NaN when undefined (< 2 plans, all tied)
  int strategy_plans = 0;          ///< distinct strategy plans
  double strategy_kendall_tau = 0; ///< τ-b over the strategy plans (NaN when undefined)
  double strategy_predicted_spread_pct = 0;
  double regret_pct = 0;
  double best_plan_error_pct = 0;  ///< signed, of the model's predicted-best plan
  double predicted_spread_pct = 0; ///< (max − min) / min predicted cycles over its plans
  double simulated_spread_pct = 0; ///< the same, simulated
  double error_range_pct = 0;      ///< max − min relative error over its plans: when this exceeds
                                   ///< the predicted spread, τ reflects model error, not order
  double optimize_seconds = 0;     ///< set-up (tabulation, pruning) and k best, wall clock
  // Over the k best replayed on every image (NaN with one image or when undefined):
  double self_kendall_tau = 0;     ///< the simulator's τ-b between two images, mean over pairs
  double placement_spread_pct = 0; ///< (max − min) / min simulated cycles over images, mean over plans
  double mean_kendall_tau = 0;     ///< τ-b of predicted against the mean over images
  ResolvedPairs resolved;          ///< pairs every image orders alike, and the model on them
};

struct RankReport {
  std::string network, mode;
  std::string calibration;         ///< the calibration file the models used (empty: none)
  std::vector<RankedPlan> plans;   ///< model by model, k ascending
  std::vector<ModelRanking> models;
  std::vector<optimizer::Plan> distinct;  ///< by plan_id, as the first model to find it priced it
  std::vector<std::string> placements;    ///< the images replayed, "identity" first
  int replays = 0;                 ///< distinct plans simulated (on the identity)
  int image_replays = 0;           ///< further replays, of k-best plans on the other images
  double simulate_seconds = 0;     ///< wall clock, all replays
};

/// Optimizes, replays and ranks `graph` (options.network prepared by prepare_network, which the
/// replays repeat); progress lines go to `progress`. InputError for a bad model name,
/// CheckError if a replay fails its checks.
RankReport rank_plans(const HwSpec& hw, const optimizer::Graph& graph, const RankOptions& options,
                      std::ostream& progress);

/// `plan` with every layer's PEs mapped through `node` (a symmetry's image of each node).
optimizer::Plan placed_image(const optimizer::Plan& plan, const std::vector<int>& node);

/// DIR/rank.csv, DIR/rank_summary.csv, DIR/rank_placements.csv and DIR/plans/plan_ID.yaml (for `nocflow simulate --plan`,
/// which reports per layer and edge); DIR must exist. Returns what was written.
std::string write_rank_files(const std::string& dir, const RankReport& report);

/// The summary as a table with units.
void print_rank_table(std::ostream& out, const RankReport& report);

/// Kendall's τ-b of paired samples: (concordant − discordant pairs) /
/// √((pairs − pairs tied in x)(pairs − pairs tied in y)); a pair tied in x or y counts as
/// neither. NaN when the denominator is 0 (fewer than two samples, or all tied on one side).
double kendall_tau_b(const std::vector<double>& x, const std::vector<double>& y);

}  // namespace nocflow::sim
