// SPDX-License-Identifier: MIT
#pragma once
// Isolated microbenchmarks of the redistributions the analytic models distinguish (issue 7).
//
// A case is (topology, type, tensor bytes). Its network has two layers, a 1x1 convolution
// producing a 2-byte C x H x W tensor of the requested size and a consumer convolution (3x3,
// pad 1, for the halo case; 1x1 otherwise). The pair of choices replayed: among the pairs
// (using every PE if any qualifies) that the paper model's Type function calls the wanted type
// and that split the fewest dimensions, the one whose exact transfer list moves the most bytes
// (for NONE the fewest; GROUP_GATHER: the most PEs, then the squarest, then the most bytes; ties:
// enumeration order). So each type gets its textbook pattern (OUTP -> OFMP: every strip
// gathers all channels; OFMP_H -> OFMP_W: all-to-all) rather than a degenerate one (OUTP f ->
// INPP f, which the seed calls an all-gather, moves nothing when aligned). HALO: the same
// single spatial split on both sides with a 3x3 consumer (paper: NONE; exact: the halo rows).
// HALO_2D: the same with both OFMP_H and OFMP_W split (rows, columns and corners to up to 8
// neighbours, some several hops away on the mesh). GROUP_GATHER: OUTP x OFMP_H on both sides,
// as near square as the tensor allows (16 x 16 on 16x16 from 256 KiB; small tensors give OUTP=2
// groups); the consumer's every spatial block gathers its channels from its OUTP peers, an
// all-gather in each of OFMP_H groups, the groups' PEs strided by OFMP_H along the snake
// (placement.h) as in real plans (bert_base_layer's FFN on 16x16). The seed's Type function
// calls it NONE (same choice, same width) and prices it at nothing; BERT's FFN edge, whose
// widths differ, it calls LOCAL.
// The pair runs in barrier mode, so the edge is alone between two barriers, in its own child
// process. A case with no such pair is skipped and reported.
#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "noc/traffic/batch.h"
#include "optimizer/cost/linkload_model.h"
#include "sim/config/hw_spec.h"

namespace nocflow::sim {

struct BenchCase {
  std::string topology;  ///< "mesh 4x4", "crossbar 16"
  std::string type;      ///< bench_types(): NONE, LOCAL, ..., ALL_REDUCE, AFTER_REDUCE, HALO, ...
  std::int64_t tensor_bytes = 0;
};

/// A case's tensor on `pes` PEs: C x H x W of 2-byte elements with C*H*W*2 == bytes, H = W a
/// power of two (the largest with H*W ≤ elements, at most 64 and bounded by the PEs), C the
/// rest. Throws InputError when `bytes` has no such shape (1000 B on 16 PEs: not C x 16 x 16).
std::array<std::int64_t, 3> tensor_shape(std::int64_t bytes, int pes);

/// Whether validate scores `paper` on a type: not on AFTER_REDUCE, which the seed prices within
/// ALL_REDUCE's row (the reduction and the edge after it as one ALL_REDUCE edge).
inline bool paper_scores(const std::string& type) {
  return type != "AFTER_REDUCE";
}

struct BenchResult {
  BenchCase bench;
  bool run = false;            ///< false: no choice pair of that type at this size
  std::string producer, consumer;  ///< the choices
  std::int64_t bytes_moved = 0;    ///< exact transfer list
  std::int64_t flits_moved = 0;    ///< flits the simulator put into the network (per message ⌈bytes / width⌉)
  double paper_cycles = 0, linkload_cycles = 0;
  std::int64_t simulated_cycles = 0;
  double max_link_utilisation = 0;  ///< busiest link's flits per cycle during the edge
  std::int64_t busiest_router_link_flits = 0;  ///< flits on the busiest router-to-router link
  std::int64_t busiest_endpoint_flits = 0;     ///< ... on the busiest injection or ejection channel
  /// That channel's flits over the cycles from its first flit to its last (noc::busiest_links): 1
  /// when it sent back to back, as linkload's endpoint term assumes; below, it waited for
  /// credits or flits (back-pressure from congested routes).
  double busiest_endpoint_busy_share = 0;
  /// Cycles the busiest router-to-router link (the most VC-starved of equals) sat idle with every
  /// VC held while a packet waited for one (noc::Router::vc_starved_cycles): wormhole blocking,
  /// which no link load carries.
  std::int64_t busiest_router_link_vc_starved = 0;
  /// A router-to-router link carried more flits than any injection or ejection channel: the
  /// routers, not the PEs' NIs, bound the edge. (A tie counts as endpoint-bound, even where
  /// linkload_fitted slows a shared one.)
  bool router_bound() const { return busiest_router_link_flits > busiest_endpoint_flits; }
  std::int64_t messages = 0;                   ///< transfers (one message each)
  /// The measured sends, each PE's in its program's order: `nocflow traffic --messages`
  /// replays them (all at start 0, as the barrier releases them) in simulated_cycles. Empty
  /// for ring rounds (`rings`), each of which waits for the previous one.
  std::vector<noc::BatchMessage> sends;

  // Where the simulated time goes. The contention-free run replays the same redistribution
  // with only its busiest sender sending (most bytes; ties: lowest PE): the other flows are
  // gone, so T_sim − T_solo is what they cost it (contention). H is the zero-load pipeline
  // latency of that sender's longest route (noc/README.md: (router pipeline + link latency)
  // per router + 2 channel traversals), and T_solo − H its serialization.
  int busiest_sender = -1;
  std::int64_t busiest_sender_bytes = 0;
  std::int64_t solo_cycles = 0;      ///< T_solo
  std::int64_t hop_latency_cycles = 0;  ///< H
  std::int64_t serialization_cycles() const { return solo_cycles - hop_latency_cycles; }
  std::int64_t contention_cycles() const { return simulated_cycles - solo_cycles; }

  // Each model's prediction split into its latency term and its load term (load = the rest):
  // paper: the calibrated fixed latency and V·h_avg/B_NoC; linkload: routers on the longest
  // route × (pipeline + link) and the busiest link's serialization (plus, for ALL_REDUCE, the
  // adds). `paper_bytes` is the seed's formula volume V; linkload's volume is bytes_moved.
  double paper_bytes = 0;
  double paper_latency = 0, linkload_latency = 0;

  // linkload with router contention s fitted to one case of the machine (fit_router_slowdown):
  // the busiest link of the edge, or of one ring round for ALL_REDUCE and ring all-gathers.
  optimizer::LinkLoad linkload_links;
  /// Ring rounds (ALL_REDUCE; a case whose transfers all run in rings under lowering.all_gather
  /// ring or auto): calibrated or not, linkload prices them alike (a round is one message per
  /// member, never slowed by router contention).
  bool rings = false;
  optimizer::HwDesc linkload_hw;  ///< the machine, as linkload saw it (no slowdown)
  double router_slowdown = 0;     ///< s of this case's machine
  bool slowdown_fitted_here = false;  ///< s was fitted on this case (not a prediction)
  double linkload_fitted_cycles() const;
  /// The round-robin fluid run of the sends (optimizer/cost/round_robin_fluid.h) plus linkload's
  /// latency term (the longest route's): an estimate beside the models, not one the optimizer
  /// uses; -1 where it does not apply (ring rounds, a crossbar, routing other than xy).
  double round_robin_cycles = -1;

  /// A model's (bench_models()) prediction, latency term and load term (the rest), in cycles.
  double predicted(const std::string& model) const;
  double latency(const std::string& model) const {
    return model == "paper" ? paper_latency : linkload_latency;
  }
  double load(const std::string& model) const { return predicted(model) - latency(model); }
  /// Whether the case scores `model`: linkload_fitted is not scored on the case it was fitted
  /// on, round_robin only where it applies, paper not on AFTER_REDUCE (which it prices within
  /// ALL_REDUCE).
  bool scores(const std::string& model) const {
    if (model == "round_robin") return round_robin_cycles >= 0;
    if (model == "paper") return paper_scores(bench.type);
    return !(model == "linkload_fitted" && slowdown_fitted_here);
  }
};

/// The machine's router contention s: fitted on its router-bound case (a router-to-router link
/// busier than any PE channel; not ring rounds, whose form is the rounds': ALL_REDUCE and the
/// all-gathers lowering.all_gather runs as rings; nor GROUP_GATHER, which stays out of the fit
/// so that its rows measure the calibration on the grouped collectives of real plans rather
/// than refit it to them) whose busiest link carries the most flits, so
/// that linkload_fitted predicts that case exactly, unless no s ≥ 0 can (the case simulates
/// faster than midpoint route + L_R: s = 0; or slower only through longest route + busiest
/// channel, which s does not change); 0 without a router-bound case. Sets router_slowdown on
/// every result and marks the case it was fitted on, and any other case that sends the same
/// messages.
double fit_router_slowdown(std::vector<BenchResult>& machine);

/// How a model's error on one case splits: (prediction − T_sim) = (its latency term − H) +
/// (its load term − serialization) − contention, exactly.
struct ErrorParts {
  double latency = 0, load = 0, contention = 0;  ///< cycles; contention ≤ 0: what the model misses
  double total() const { return latency + load + contention; }
};
ErrorParts error_parts(const BenchResult& r, const std::string& model);

/// Columns appended to each validation.csv row (sim/README.md documents every column).
std::string decomposition_csv_header();
std::string decomposition_csv_columns(const BenchResult& r);

/// Per type, over the cases it is given (`nocflow validate`: those below saturation that take
/// time): the mean share of simulated time in hop latency, serialization and contention and,
/// per model, its mean signed relative error split into latency, load and missed contention
/// (the three add up to the error), and its mean volume error (model bytes / exact − 1).
class DecompositionSummary {
 public:
  void add(const BenchResult& r);
  /// Columns appended to summary.csv's (type, model) rows.
  static std::string csv_header();
  std::string csv_columns(const std::string& type, const std::string& model) const;
  void print(std::ostream& out, const std::vector<std::string>& types) const;

 private:
  /// Sums of shares of T_sim: hop latency, serialization, contention, and the busiest router
  /// link's VC-starved cycles (a cause of contention).
  struct Shares {
    double hop = 0, serialization = 0, contention = 0, vc_starved = 0;
  };
  struct ModelParts {
    Shares time;  ///< over the cases the model scores (linkload_fitted: not those it was fitted on)
    int cases = 0, volume_cases = 0;
    double error = 0, latency = 0, load = 0, contention = 0, volume = 0;  ///< sums
  };
  std::map<std::string, int> cases_;                                 ///< by type
  std::map<std::pair<std::string, std::string>, ModelParts> parts_;  ///< by (type, model)
};

/// Relative errors |predicted − simulated| / simulated of a model over cases, split by whether
/// the case ran near saturation; a case that moved nothing (simulated 0) is counted apart.
struct ErrorStats {
  double sum = 0, max = 0;  ///< below saturation
  double sum_all = 0, max_all = 0;
  int count = 0, near = 0, still = 0, skipped = 0;  ///< below; near saturation; moving nothing; skipped
  /// Below saturation, the first case with the largest error (the `id` given to add; −1 before
  /// any) and its signed error (predicted − simulated) / simulated.
  int worst = -1;
  double worst_error = 0;
  double mape() const { return count ? sum / count : 0; }  ///< below saturation, a fraction
  void add(double predicted, double simulated, bool near_saturation, int id = -1);
  /// MAPE ≤ 10 % and max ≤ 20 % below saturation (kTargetMape, kTargetMax); false over no case.
  bool meets_target() const;
};

/// The accuracy an analytic model is held to below saturation (issue 7): MAPE and largest
/// error per redistribution type.
inline constexpr double kTargetMape = 0.10, kTargetMax = 0.20;
/// An error statistic over `cases` cases as printed: "12.3%", or "n/a" over none (not a
/// perfect 0.0%).
std::string error_percent(int cases, double fraction);
/// The same in summary.csv: the fraction, or an empty cell over no case.
std::string error_csv(int cases, double fraction);

/// The models validate compares: paper, linkload, linkload_fitted (linkload with the machine's
/// router slowdown, scored only on the cases it was not fitted on), and round_robin (the fluid
/// run of the sends, BenchResult::round_robin_cycles; only where it applies).
const std::vector<std::string>& bench_models();

/// The type names, in the seed's order, plus AFTER_REDUCE (after ALL_REDUCE: the edge that takes
/// an INPP producer's reduced output to the consumer, ALL_REDUCE's row being the reduction; its
/// pair is ALL_REDUCE's where that edge moves bytes, else the next by ALL_REDUCE's rule that
/// does), HALO, HALO_2D and GROUP_GATHER.
const std::vector<std::string>& bench_types();
/// Column width of a type name in the printed tables (the longest name and two spaces).
inline constexpr int kTypeWidth = 14;

/// The cases on `hw` (whose topology is the one to test), in their order. Each case's two
/// simulations (as is, and contention-free) run in children of their own, `jobs` at a time; the
/// models are priced in this process. done(result) is called as each case completes (cases
/// without a choice pair first, then in completion order).
std::vector<BenchResult> run_benches(const HwSpec& hw, const std::vector<BenchCase>& cases,
                                     int jobs,
                                     const std::function<void(const BenchResult&)>& done = {});

}  // namespace nocflow::sim
