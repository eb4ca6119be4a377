// SPDX-License-Identifier: MIT
// `--resident-weights`: a stage's cheapest assignment that holds every layer's weights and its
// largest layer's activations in a PE's SRAM (StagePricer::fit_resident), with a lower bound
// on it.
//
// The search prices each byte of a choice's weights λ cycles more, raising λ fourfold until the
// solve fits and then bisecting: a Lagrangian relaxation of "weights ≤ SRAM − activations".
// Every optimal solve at λ bounds the cheapest fitting assignment whose activations peak at
// A or more by its objective − λ · (SRAM − A) (Lagrangian duality). One rate for every layer
// misses trades, so a local search (solver/memory_search.h) follows, from the cheapest fitting
// solve and from the last that did not fit, made to fit.
//
// The activations make the bound loose where cheap assignments peak high (resnet50's first
// stage on 8x8: a peak of 200,704 bytes where its layers could stay under 112,896), and keep
// the search from trading activation bytes for weight bytes. So it runs again on the choices
// whose activations stay below the best assignment's peak, round by round while that pays:
// the assignments split into classes by their peak, each bounded with its own budget.
#include <algorithm>
#include <iomanip>
#include <limits>
#include <optional>
#include <sstream>

#include "optimizer/plan/stage_pricer.h"
#include "optimizer/solver/memory_search.h"

namespace nocflow::optimizer {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

/// Searches on lower activation caps after the first: each costs about ten stage solves.
constexpr int kMaxCapRounds = 3;

/// One search's result on the choices with activations up to a cap.
struct CapRound {
  std::optional<SolveResult> best;                ///< the cheapest fitting assignment found
  std::vector<std::pair<double, double>> duals;   ///< (λ, objective) of its optimal solves
  double peak = 0;                                ///< best's largest activations
  double fitting_lambda = 0;                      ///< the least λ seen to fit

  /// The duals' bound on fitting assignments of these choices that hold at most `budget`
  /// weight bytes per PE.
  double bound(double budget) const {
    double b = -kInf;
    for (const auto& [lambda, objective] : duals) b = std::max(b, objective - lambda * budget);
    return b;
  }
};

}  // namespace

double StagePricer::stage_bytes(const PartitionSetup& s, const std::vector<int>& choice) {
  double weights = 0, activations = 0;
  for (std::size_t l = 0; l < s.workload.layers.size(); ++l) {
    const LayerShares sh =
        layer_shares(s.workload.layers[l], s.choices[l][static_cast<std::size_t>(choice[l])]);
    weights += sh.weights;
    activations = std::max(activations, sh.input + sh.output);
  }
  return weights + activations;
}

StagePricer::ResidentFit StagePricer::fit_resident(const PartitionSetup& s, SolveResult& r) {
  const auto sram = static_cast<double>(hw.sram_bytes);
  const std::size_t layers = s.problem.node.size();
  StageMemory memory{std::vector<std::vector<double>>(layers),
                     std::vector<std::vector<double>>(layers), sram};
  const std::vector<std::vector<double>>& weights = memory.summed;
  std::vector<double> levels;            // every choice's activations, sorted, once each
  double heaviest = 0;                   // the stage's weights per PE under r
  double lightest = 0, activations = 0;  // no assignment holds less of either
  for (std::size_t l = 0; l < layers; ++l) {
    double least_activations = kInf;
    for (const Choice& c : s.choices[l]) {
      const LayerShares sh = layer_shares(s.workload.layers[l], c);
      memory.summed[l].push_back(sh.weights);
      memory.peak[l].push_back(sh.input + sh.output);
      levels.push_back(sh.input + sh.output);
      least_activations = std::min(least_activations, sh.input + sh.output);
    }
    heaviest += weights[l][static_cast<std::size_t>(r.choice[l])];
    lightest += *std::min_element(weights[l].begin(), weights[l].end());
    activations = std::max(activations, least_activations);
  }
  std::sort(levels.begin(), levels.end());
  levels.erase(std::unique(levels.begin(), levels.end()), levels.end());
  ResidentFit fit;
  if (r.optimal) fit.lower = r.cost;  // no fitting assignment costs less than the cheapest
  if (lightest + activations > sram) {  // none fits, nor on any longer range of the band
    fit.infeasible = true;
    return fit;
  }
  if (heaviest <= lightest) return fit;  // nothing to trade

  const bool tables = std::all_of(s.problem.edges.begin(), s.problem.edges.end(),
                                  [](const Problem::Edge& e) { return e.tabulated(); });
  // λ in cycles per byte, from the stage's own exchange rate: its cost over its weights.
  const double scale = std::max(r.cost, 1.0) / heaviest;
  const auto search = [&](double cap, double first_lambda) {
    CapRound round;
    Problem allowed = s.problem;  // edges read the band's tables: only the layer costs copy
    for (std::size_t l = 0; l < layers; ++l)
      for (std::size_t c = 0; c < weights[l].size(); ++c)
        if (memory.peak[l][c] > cap) allowed.node[l][c] = kInf;
    Problem priced = allowed;
    std::optional<SolveResult> near;  // the last that did not fit
    const auto fits_at = [&](double lambda) {
      for (std::size_t l = 0; l < layers; ++l)
        for (std::size_t c = 0; c < weights[l].size(); ++c)
          priced.node[l][c] = allowed.node[l][c] + lambda * weights[l][c];
      SolveResult x = make_solver(o.solver)->solve(priced, o.solve);
      if (x.optimal) round.duals.emplace_back(lambda, x.cost);
      x.cost = evaluate(s.problem, x.choice);
      if (memory.bytes(x.choice) > sram) {
        near = std::move(x);
        return false;
      }
      if (!round.best || x.cost < round.best->cost) round.best = std::move(x);
      return true;
    };
    double low = 0, high = first_lambda;
    while (!fits_at(high)) {
      low = high;
      high *= 4;
      if (high > scale * 1e9) return round;  // the weights alone price every choice: none fits
    }
    for (int step = 0; step < (cap < kInf ? 6 : 10); ++step) {
      const double mid = (low + high) / 2;
      (fits_at(mid) ? high : low) = mid;
    }
    round.fitting_lambda = high;
    if (tables) {
      round.best->cost = improve_within_memory(allowed, memory, round.best->choice);
      if (near && (near->cost = fit_within_memory(allowed, memory, near->choice)) < round.best->cost)
        round.best = std::move(near);
    }
    for (std::size_t l = 0; l < layers; ++l)
      round.peak = std::max(round.peak, memory.peak[l][static_cast<std::size_t>(round.best->choice[l])]);
    return round;
  };

  std::vector<CapRound> rounds{search(kInf, scale / 1024)};
  if (!rounds[0].best) return fit;
  SolveResult best = *rounds[0].best;
  // Round i covers the assignments whose peak lies above the next round's cap (which is the
  // level below round i's peak): they hold at most SRAM − that peak in weights. The last
  // round covers every assignment under its cap, whose peak is at least `activations`.
  const auto bound = [&] {
    double b = kInf;
    for (std::size_t i = 0; i < rounds.size(); ++i)
      b = std::min(b, rounds[i].bound(sram - (i + 1 < rounds.size() ? rounds[i].peak : activations)));
    return std::max(fit.lower, b);
  };
  for (int k = 0; k < kMaxCapRounds && tables && bound() < best.cost * (1 - 1e-9); ++k) {
    const auto below = std::lower_bound(levels.begin(), levels.end(), rounds.back().peak);
    if (below == levels.begin() || *(below - 1) < activations) break;
    // From the least λ that fit above this cap (raised if it does not fit here), fewer steps.
    rounds.push_back(search(*(below - 1), rounds.back().fitting_lambda));
    if (!rounds.back().best || rounds.back().best->cost >= best.cost) break;
    best = *rounds.back().best;
  }
  fit.lower = bound();
  // Proven when the bound meets it (to rounding), else how far it may be from the cheapest.
  best.optimal = fit.lower >= best.cost * (1 - 1e-9);
  if (!best.optimal) {
    std::ostringstream note;
    note << "resident weights: the cheapest fitting assignment found by pricing weight bytes "
            "and changing one or two layers' choices, ";
    if (fit.lower > 0)
      note << "at most " << std::fixed << std::setprecision(2)
           << 100 * (best.cost - fit.lower) / fit.lower
           << " % above the cheapest that fits (a Lagrangian bound)";
    else
      note << "not proven the cheapest";
    best.notes.push_back(note.str());
    fit.note = note.str();
  }
  r = std::move(best);
  return fit;
}

}  // namespace nocflow::optimizer
