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
//
// The peaks a fitting assignment can have are known before any solve (a peak P fits only if
// every layer's lightest choice within P, plus P, does): a stage with none is proven not to
// fit, and one whose cheap choices all peak too high, so that no λ moves the solve off them,
// is searched under lower caps until an assignment fits.
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
/// ... and while none has found a fitting assignment.
constexpr int kMaxRescueRounds = 8;

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
        held_shares(s.workload.layers[l], s.choices[l][static_cast<std::size_t>(choice[l])]);
    weights += sh.weights;
    activations = std::max(activations, activation_share(s.workload.layers[l], sh));
  }
  return weights + activations;
}

StagePricer::ResidentFit StagePricer::fit_resident(const PartitionSetup& s, SolveResult& r) {
  const auto sram = static_cast<double>(hw.sram_bytes);
  const std::size_t layers = s.problem.node.size();
  StageMemory memory{std::vector<std::vector<double>>(layers),
                     std::vector<std::vector<double>>(layers), sram};
  const std::vector<std::vector<double>>& weights = memory.summed;
  double heaviest = 0, lightest = 0;  // the stage's weights per PE under r; the least
  struct Option {
    double peak, weights;
    std::size_t layer;
  };
  std::vector<Option> options;  // every layer's choices, by activations
  for (std::size_t l = 0; l < layers; ++l) {
    for (const Choice& c : s.choices[l]) {
      const LayerShares sh = held_shares(s.workload.layers[l], c);
      const double peak = activation_share(s.workload.layers[l], sh);
      memory.summed[l].push_back(sh.weights);
      memory.peak[l].push_back(peak);
      options.push_back({peak, sh.weights, l});
    }
    heaviest += weights[l][static_cast<std::size_t>(r.choice[l])];
    lightest += *std::min_element(weights[l].begin(), weights[l].end());
  }
  // The peaks a fitting assignment can have: a peak P needs every layer's lightest choice
  // within P, plus P, to fit. Each such level caps a round of the search below; a stage with
  // none cannot fit, nor can a longer range of the band (more layers hold no fewer bytes).
  std::sort(options.begin(), options.end(),
            [](const Option& a, const Option& b) { return a.peak < b.peak; });
  std::vector<double> levels;  // ascending
  {
    std::vector<double> least(layers, kInf);
    std::size_t missing = layers;
    double sum = 0;
    for (std::size_t i = 0; i < options.size(); ++i) {
      const Option& o = options[i];
      if (least[o.layer] == kInf) {
        --missing, least[o.layer] = o.weights, sum += o.weights;
      } else if (o.weights < least[o.layer]) {
        sum -= least[o.layer] - o.weights, least[o.layer] = o.weights;
      }
      const bool last_of_level = i + 1 == options.size() || options[i + 1].peak != o.peak;
      if (last_of_level && missing == 0 && sum + o.peak <= sram) levels.push_back(o.peak);
    }
  }
  ResidentFit fit;
  if (r.optimal) fit.lower = r.cost;  // no fitting assignment costs less than the cheapest
  if (levels.empty()) {
    fit.infeasible = true;
    return fit;
  }
  const bool trade = heaviest > lightest;  // else r's weights are the least: no λ moves them

  const bool tables = std::all_of(s.problem.edges.begin(), s.problem.edges.end(),
                                  [](const Problem::Edge& e) { return e.tabulated(); });
  const auto peak_of = [&](const std::vector<int>& choice) {
    double peak = 0;
    for (std::size_t l = 0; l < layers; ++l)
      peak = std::max(peak, memory.peak[l][static_cast<std::size_t>(choice[l])]);
    return peak;
  };
  // λ in cycles per byte, from the stage's own exchange rate: its cost over its weights.
  const double scale = std::max(r.cost, 1.0) / std::max(heaviest, 1.0);
  const auto search = [&](double cap, double first_lambda) {
    CapRound round;
    Problem allowed = s.problem;  // edges read the band's tables: only the layer costs copy
    for (std::size_t l = 0; l < layers; ++l)
      for (std::size_t c = 0; c < weights[l].size(); ++c)
        if (memory.peak[l][c] > cap) allowed.node[l][c] = kInf;
    Problem priced = allowed;
    std::optional<SolveResult> near;  // the last that did not fit
    if (cap == kInf) {                // the unpriced solve: λ = 0
      near = r;
      if (r.optimal) round.duals.emplace_back(0.0, r.cost);
    }
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
    if (trade || cap < kInf) {
      double low = 0, high = first_lambda;
      bool fits = fits_at(high);
      // Past this, the weights alone price every choice: no λ makes it fit.
      for (; !fits && high <= scale * 1e9; fits = fits_at(high)) low = high, high *= 4;
      for (int step = 0; fits && step < (cap < kInf ? 6 : 10); ++step) {
        const double mid = (low + high) / 2;
        (fits_at(mid) ? high : low) = mid;
      }
      round.fitting_lambda = fits ? high : first_lambda;
    }
    // The next cap lies below this peak: the best's, else the last solve's that did not fit.
    round.peak = round.best ? peak_of(round.best->choice) : near ? peak_of(near->choice) : 0;
    if (tables) {
      if (round.best) round.best->cost = improve_within_memory(allowed, memory, round.best->choice);
      if (near && (near->cost = fit_within_memory(allowed, memory, near->choice)) <
                      (round.best ? round.best->cost : kInf))
        round.best = std::move(near);
      if (round.best) round.peak = peak_of(round.best->choice);
    }
    return round;
  };

  std::vector<CapRound> rounds{search(kInf, scale / 1024)};
  std::optional<SolveResult> best = rounds[0].best;
  // Round i covers the fitting assignments whose peak lies above the next round's cap (the
  // level below round i's peak): they hold at most SRAM − that peak in weights. The last
  // round covers every fitting assignment under its cap, whose peak is at least the lowest
  // level.
  const auto bound = [&] {
    double b = kInf;
    for (std::size_t i = 0; i < rounds.size(); ++i)
      b = std::min(b, rounds[i].bound(
                          sram - (i + 1 < rounds.size() ? rounds[i].peak : levels.front())));
    return std::max(fit.lower, b);
  };
  // Rounds under lower caps while they pay, or, until one fits, while the levels last (a stage
  // whose cheap choices all peak too high, their weights as light as the ones that fit).
  for (int k = 0; best ? k < kMaxCapRounds && tables && bound() < best->cost * (1 - 1e-9)
                       : k < kMaxRescueRounds;
       ++k) {
    const auto below = std::lower_bound(levels.begin(), levels.end(), rounds.back().peak);
    if (below == levels.begin()) break;
    // From the least λ that fit above this cap (raised if it does not fit here), fewer steps.
    rounds.push_back(search(*(below - 1), rounds.back().fitting_lambda > 0
                                              ? rounds.back().fitting_lambda
                                              : scale / 1024));
    if (!rounds.back().best) continue;
    if (best && rounds.back().best->cost >= best->cost) break;
    best = rounds.back().best;
  }
  fit.lower = bound();
  if (!best) return fit;  // none found: r stays, and the stage does not fit
  // Proven when the bound meets it (to rounding), else how far it may be from the cheapest.
  best->optimal = fit.lower >= best->cost * (1 - 1e-9);
  if (!best->optimal) {
    std::ostringstream note;
    note << "resident weights: the cheapest fitting assignment found by pricing weight bytes "
            "and changing one or two layers' choices, ";
    if (fit.lower > 0)
      note << "at most " << std::fixed << std::setprecision(2)
           << 100 * (best->cost - fit.lower) / fit.lower
           << " % above the cheapest that fits (a Lagrangian bound)";
    else
      note << "not proven the cheapest";
    best->notes.push_back(note.str());
    fit.note = note.str();
  }
  r = std::move(*best);
  return fit;
}

}  // namespace nocflow::optimizer
