// SPDX-License-Identifier: MIT
#include "optimizer/plan/pipeline.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <limits>
#include <map>
#include <memory>
#include <optional>

#include "noc/base/error.h"

namespace nocflow::optimizer {

int pipeline_units(const HwDesc& hw) {
  return hw.mesh() ? hw.topology.rows : hw.topology.ports;
}
int pes_per_unit(const HwDesc& hw) {
  return hw.mesh() ? hw.topology.cols : 1;
}

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

/// The band of `units` rows (ports) as a machine of its own.
HwDesc band_machine(const HwDesc& hw, int units) {
  HwDesc band = hw;
  if (hw.mesh())
    band.topology.rows = units;
  else
    band.topology.ports = units;
  return band;
}

/// Layers [first, end) of `w` and the edges among them, renumbered from 0.
Workload sub_workload(const Workload& w, int first, int end) {
  Workload sub;
  sub.graph = w.graph;
  sub.layers.assign(w.layers.begin() + first, w.layers.begin() + end);
  for (const LayerEdge& e : w.edges)
    if (e.src >= first && e.dst < end) sub.edges.push_back({e.src - first, e.dst - first, e.input});
  return sub;
}

/// The edges into layers [first, end) from earlier layers: the stage's inputs.
std::vector<LayerEdge> stage_inputs(const Workload& w, int first, int end) {
  std::vector<LayerEdge> in;
  for (const LayerEdge& e : w.edges)
    if (e.src < first && e.dst >= first && e.dst < end) in.push_back(e);
  return in;
}

/// Hops of a stage input's mean route into a band of `units` (pipeline.h: an estimate).
double stage_input_hops(const HwDesc& hw, int units) {
  return hw.mesh() ? (units + hw.topology.cols) / 2.0 : 1;
}

/// Everything priced on one band height, in two steps: the layers' costs alone (cheap: every
/// height has them), then the whole network tabulated on it (only a height on which some
/// stage is solved).
struct Band {
  HwDesc hw;
  std::unique_ptr<CostModel> model;
  std::string failure;  ///< why no layer range fits this band ("" when it may)
  bool tabulated = false;
  PartitionSetup setup;  ///< once tabulated
  /// bound[first · (layers + 1) + end]: a lower bound of the stage of layers [first, end) on
  /// this band. Before tabulation each layer's cheapest choice with its stage inputs; after,
  /// its best assignment counting the layer costs, the stage inputs and the edges between
  /// consecutive layers (the other edges, each costing at least 0, only add).
  std::vector<double> bound;
  /// Once tabulated: no layer cost or edge entry is negative, so a stage never costs less for
  /// taking more layers (what it adds, layer costs, edges and stage inputs, is never negative).
  bool grows = false;
};

struct Pricer {
  Pricer(const Workload& w, const HwDesc& hw, const PipelineOptions& o, const std::string& model)
      : w(w),
        hw(hw),
        o(o),
        cost_model(model),
        bands(static_cast<std::size_t>(pipeline_units(hw)) + 1),
        grown(bands.size()) {}

  const Workload& w;
  const HwDesc& hw;
  const PipelineOptions& o;
  const std::string& cost_model;
  std::vector<std::unique_ptr<Band>> bands;  ///< [units], built on first use
  /// grown[units][first · (layers + 1) + end]: the most a stage of layers [first, e) on `units`
  /// was proven to cost (its optimum, or a bound a cutoff stopped at) for any e ≤ end; on a
  /// band that grows (Band::grows) at most what [first, end) costs. Not kept with resident
  /// weights, whose fitting assignment is not proven the cheapest.
  std::vector<std::vector<double>> grown;
  /// Exact solves by (first, end, units): what the split priced, the baselines and the plan
  /// read back instead of solving again.
  std::map<std::array<int, 3>, SolveResult> exact;
  int priced = 0;   ///< stage solves run (a range asked again under a higher cutoff counts again)
  int stopped = 0;  ///< of those, the solves stopped at a cutoff
  std::string why;  ///< the first reason a stage did not fit, for the error when none does

  /// The band of `units`, with its layer costs (and their bounds) at least.
  Band& band(int units) {
    auto& b = bands[static_cast<std::size_t>(units)];
    if (!b) {
      b = std::make_unique<Band>();
      b->hw = band_machine(hw, units);
      try {  // a band of one crossbar port is no machine: the stages use ≥ 2
        b->model = make_cost_model(cost_model, b->hw);
        SetupOptions setup = o.setup;
        setup.edge_tables = EdgeTables::None;  // every choice, unpruned: the least of each layer
        b->bound = chain_bounds(setup_partition(*w.graph, b->hw, *b->model, setup), units);
      } catch (const InputError& e) {
        b->failure = e.what();
      }
    }
    return *b;
  }

  /// The band of `units` tabulated, unless it fails.
  Band& tabulated(int units) {
    Band& b = band(units);
    if (!b.tabulated && b.failure.empty()) {
      SetupOptions setup = o.setup;
      if (o.band_progress) setup.progress = o.band_progress(units);
      try {
        b.setup = setup_partition(*w.graph, b.hw, *b.model, setup);
        b.bound = chain_bounds(b.setup, units);
        b.grows = grows(b.setup.problem);
        b.tabulated = true;
      } catch (const InputError& e) {
        b.failure = e.what();
      }
    }
    return b;
  }

  /// Cycles for a PE of `layer` under `c` on a band of `units` to receive the tensor of a
  /// producer in an earlier stage (pipeline.h: an estimate).
  double stage_input_cycles(const Layer& producer, const Layer& layer, int input, const Choice& c,
                            int units) const {
    const double share = input_share(layer, input, c);
    double cycles = share / hw.link_bytes_per_cycle;  // its ejection channel
    if (hw.mesh())  // all its PEs' shares over the band's boundary links
      cycles = std::max(cycles, share * c.nodes() / (hw.topology.cols * hw.link_bytes_per_cycle));
    if (producer.legal.empty())  // one PE (a Reshape, a Transpose) sends all of them
      cycles = std::max(cycles, share * c.nodes() / hw.link_bytes_per_cycle);
    return cycles +
           (hw.router_pipeline_cycles + hw.link_latency_cycles) * stage_input_hops(hw, units);
  }

  /// No tabulated edge entry is negative (the models' are cycles): leaving an edge out never
  /// raises a cost.
  static bool tables_nonnegative(const Problem& p) {
    const auto negative = [](double x) { return !(x >= 0); };
    for (const Problem::Edge& e : p.edges) {
      if (!e.tabulated()) continue;
      const double* t = e.table();
      const std::size_t size =
          p.node[static_cast<std::size_t>(e.u)].size() * static_cast<std::size_t>(e.nv);
      if (std::any_of(t, t + size, negative))
        return false;
    }
    return true;
  }

  /// Band::grows: every edge tabulated, and neither it nor a layer cost negative.
  static bool grows(const Problem& p) {
    const auto negative = [](double x) { return !(x >= 0); };
    for (const auto& costs : p.node)
      if (std::any_of(costs.begin(), costs.end(), negative)) return false;
    return std::all_of(p.edges.begin(), p.edges.end(),
                       [](const Problem::Edge& e) { return e.tabulated(); }) &&
           tables_nonnegative(p);
  }

  /// Band::bound for every range: per first layer, a Viterbi pass over the layers after it,
  /// each choice's layer cost plus its stage inputs from layers before `first` (as
  /// stage_setup adds them), through the tables of the edges from each layer to the next.
  /// Without those tables only the layer costs and stage inputs (each layer's cheapest choice);
  /// with a negative edge cost (the models' are cycles, never negative) no bound at all.
  std::vector<double> chain_bounds(const PartitionSetup& setup, int units) const {
    const Problem& p = setup.problem;
    const int n = p.num_layers();
    const auto N = static_cast<std::size_t>(n) + 1;
    // next[l]: the edges from l − 1 to l summed (empty: none, or not usable for the bound).
    if (!tables_nonnegative(p)) return std::vector<double>(N * N, -kInf);
    std::vector<std::vector<double>> next(static_cast<std::size_t>(n));
    for (const Problem::Edge& e : p.edges) {
      if (!e.tabulated() || e.v != e.u + 1) continue;
      const std::size_t size = p.node[static_cast<std::size_t>(e.u)].size() *
                               static_cast<std::size_t>(e.nv);
      const double* t = e.table();
      auto& m = next[static_cast<std::size_t>(e.v)];
      if (m.empty()) m.assign(size, 0.0);
      for (std::size_t x = 0; x < size; ++x) m[x] += t[x];
    }
    std::vector<double> bound(N * N, 0.0);
    std::vector<std::vector<double>> node;
    std::vector<double> f, g;
    for (int first = 0; first < n; ++first) {
      node.assign(p.node.begin() + first, p.node.end());
      for (const LayerEdge& e : w.edges)
        if (e.src < first && e.dst >= first) {
          auto& costs = node[static_cast<std::size_t>(e.dst - first)];
          const auto& choices = setup.choices[static_cast<std::size_t>(e.dst)];
          for (std::size_t c = 0; c < costs.size(); ++c)
            costs[c] += stage_input_cycles(w.layers[static_cast<std::size_t>(e.src)],
                                           w.layers[static_cast<std::size_t>(e.dst)], e.input,
                                           choices[c], units);
        }
      f.clear();  // the best of [first, l] for each choice of l
      for (int l = first; l < n; ++l) {
        const auto& costs = node[static_cast<std::size_t>(l - first)];
        const auto& m = next[static_cast<std::size_t>(l)];
        g.assign(costs.size(), kInf);
        if (f.empty()) {
          g = costs;
        } else if (m.empty()) {
          const double least = *std::min_element(f.begin(), f.end());
          for (std::size_t c = 0; c < g.size(); ++c) g[c] = least + costs[c];
        } else {
          for (std::size_t a = 0; a < f.size(); ++a) {
            const double fa = f[a];
            const double* row = &m[a * g.size()];
            for (std::size_t c = 0; c < g.size(); ++c) {
              const double x = fa + row[c];
              g[c] = x < g[c] ? x : g[c];
            }
          }
          for (std::size_t c = 0; c < g.size(); ++c) g[c] += costs[c];
        }
        f.swap(g);
        bound[static_cast<std::size_t>(first) * N + static_cast<std::size_t>(l) + 1] =
            *std::min_element(f.begin(), f.end());
      }
    }
    return bound;
  }

  /// The stage of layers [first, end) on `units`: its sub-problem, stage inputs added to the
  /// consumers' layer costs.
  PartitionSetup stage_setup(int first, int end, int units) {
    Band& b = tabulated(units);
    PartitionSetup s;
    s.workload = sub_workload(w, first, end);
    const Problem& all = b.setup.problem;
    Problem& p = s.problem;
    p.max_pes = all.max_pes;
    p.memory_limit = all.memory_limit;
    for (int l = first; l < end; ++l) {
      const auto i = static_cast<std::size_t>(l);
      s.choices.push_back(b.setup.choices[i]);
      p.names.push_back(all.names[i]);
      p.node.push_back(all.node[i]);
      if (!all.memory.empty()) p.memory.push_back(all.memory[i]);
      if (!all.pes.empty()) p.pes.push_back(all.pes[i]);
    }
    for (const Problem::Edge& e : all.edges)
      if (e.u >= first && e.v < end) {
        Problem::Edge sub;  // the band's table, not a copy: the band outlives every stage
        sub.u = e.u - first;
        sub.v = e.v - first;
        sub.nv = e.nv;
        sub.shared = e.table();
        sub.row = e.row;
        p.edges.push_back(std::move(sub));
      }
    for (const LayerEdge& e : stage_inputs(w, first, end)) {
      const auto v = static_cast<std::size_t>(e.dst - first);
      for (std::size_t c = 0; c < p.node[v].size(); ++c)
        p.node[v][c] += stage_input_cycles(w.layers[static_cast<std::size_t>(e.src)],
                                           w.layers[static_cast<std::size_t>(e.dst)], e.input,
                                           s.choices[v][c], units);
    }
    return s;
  }

  /// Per-PE bytes of weights resident across micro-batches plus the largest layer's
  /// activations: what the stage's PEs hold at most under `choice`.
  static double stage_bytes(const PartitionSetup& s, const std::vector<int>& choice) {
    double weights = 0, activations = 0;
    for (std::size_t l = 0; l < s.workload.layers.size(); ++l) {
      const LayerShares sh =
          layer_shares(s.workload.layers[l], s.choices[l][static_cast<std::size_t>(choice[l])]);
      weights += sh.weights;
      activations = std::max(activations, sh.input + sh.output);
    }
    return weights + activations;
  }

  struct Solved {
    PartitionSetup setup;
    SolveResult result;
  };

  /// The stage's plan; with a cutoff (SolveOptions::cutoff) perhaps only a bound above it.
  /// Solved once: an exact answer is kept, so the plan is the assignment the stage was priced
  /// with.
  Solved solve(int first, int end, int units, double cutoff = kInf) {
    PartitionSetup s = stage_setup(first, end, units);
    const std::array<int, 3> key{first, end, units};
    if (const auto it = exact.find(key); it != exact.end()) return {std::move(s), it->second};
    SolveOptions options = o.solve;
    options.cutoff = cutoff;
    ++priced;
    SolveResult r = make_solver(o.solver)->solve(s.problem, options);
    if (r.above_cutoff) {  // fitting costs no less
      ++stopped;
    } else {
      if (o.resident_weights && stage_bytes(s, r.choice) > static_cast<double>(hw.sram_bytes))
        fit_resident(s, r);
      exact.emplace(key, r);
    }
    if (o.priced_progress) o.priced_progress(priced);
    return {std::move(s), std::move(r)};
  }

  /// The stage's cheapest assignment holds more than the SRAM with its weights resident: look
  /// for a cheap one that fits by pricing every byte of a choice's weights per PE λ cycles more
  /// (a Lagrangian relaxation of the bound): λ raised fourfold until the solve fits, then
  /// bisected towards the cheapest that fits. Feasible, not proven the cheapest; `r` is left as
  /// it was when no choice of weights could fit (the lightest weights of every layer plus the
  /// least any layer's activations need exceed the SRAM) or the heaviest pricing does not.
  void fit_resident(const PartitionSetup& s, SolveResult& r) {
    const auto sram = static_cast<double>(hw.sram_bytes);
    Problem priced = s.problem;  // edges read the band's tables: only the layer costs copy
    std::vector<std::vector<double>> weights(priced.node.size());
    double heaviest = 0;  // the stage's weights per PE under r
    double lightest = 0, activations = 0;  // no assignment holds less of either
    for (std::size_t l = 0; l < weights.size(); ++l) {
      double least_activations = kInf;
      for (const Choice& c : s.choices[l]) {
        const LayerShares sh = layer_shares(s.workload.layers[l], c);
        weights[l].push_back(sh.weights);
        least_activations = std::min(least_activations, sh.input + sh.output);
      }
      heaviest += weights[l][static_cast<std::size_t>(r.choice[l])];
      lightest += *std::min_element(weights[l].begin(), weights[l].end());
      activations = std::max(activations, least_activations);
    }
    if (heaviest <= lightest || lightest + activations > sram) return;  // nothing to trade
    const auto solve_at = [&](double lambda) {
      for (std::size_t l = 0; l < weights.size(); ++l)
        for (std::size_t c = 0; c < weights[l].size(); ++c)
          priced.node[l][c] = s.problem.node[l][c] + lambda * weights[l][c];
      SolveResult x = make_solver(o.solver)->solve(priced, o.solve);
      x.cost = evaluate(s.problem, x.choice);
      return x;
    };
    std::optional<SolveResult> best;
    const auto fits = [&](SolveResult x) {
      if (stage_bytes(s, x.choice) > sram) return false;
      if (!best || x.cost < best->cost) best = std::move(x);
      return true;
    };
    // λ in cycles per byte, from the stage's own exchange rate: its cost over its weights.
    const double scale = std::max(r.cost, 1.0) / heaviest;
    double low = 0, high = scale / 1024;
    while (!fits(solve_at(high))) {
      low = high;
      high *= 4;
      if (high > scale * 1e9) return;  // the weights alone price every choice: none fits
    }
    for (int step = 0; step < 10; ++step) {
      const double mid = (low + high) / 2;
      (fits(solve_at(mid)) ? high : low) = mid;
    }
    best->optimal = false;
    best->notes.push_back("resident weights: the cheapest fitting assignment found by pricing "
                          "weight bytes, not proven the cheapest");
    r = std::move(*best);
  }

  /// At most cost(first, end, units), without solving or tabulating: Band::bound, a relative
  /// 10⁻⁹ lower for rounding (the costs are cycles, ≥ 0).
  double lower_bound(int first, int end, int units) {
    const Band& b = band(units);
    if (!b.failure.empty()) return kInf;
    const std::size_t at =
        static_cast<std::size_t>(first) * (w.layers.size() + 1) + static_cast<std::size_t>(end);
    const auto& known = grown[static_cast<std::size_t>(units)];
    return std::max(b.bound[at], known.empty() ? 0 : known[at]) * (1 - 1e-9);
  }

  void learn(int first, int end, int units, double proven) {
    if (o.resident_weights || !tabulated(units).grows) return;
    auto& known = grown[static_cast<std::size_t>(units)];
    const std::size_t n = w.layers.size() + 1;
    if (known.empty()) known.assign(n * n, 0.0);
    double* row = &known[static_cast<std::size_t>(first) * n];
    for (auto e = static_cast<std::size_t>(end); e < n && row[e] < proven; ++e) row[e] = proven;
  }

  /// StageCost: the cost, or above `cutoff` perhaps a bound above it.
  StagePrice cost(int first, int end, int units, double cutoff = kInf) {
    if (!tabulated(units).failure.empty()) return kInf;
    try {
      Solved st = solve(first, end, units, cutoff);
      if (st.result.above_cutoff || st.result.optimal)
        learn(first, end, units, st.result.cost);
      if (st.result.above_cutoff) return {st.result.cost, true};
      if (o.resident_weights) {
        const double bytes = stage_bytes(st.setup, st.result.choice);
        if (bytes > static_cast<double>(hw.sram_bytes)) {
          if (why.empty())
            why = "layers " + w.layers[static_cast<std::size_t>(first)].name + " .. " +
                  w.layers[static_cast<std::size_t>(end - 1)].name + " on " +
                  std::to_string(units) + " units hold " +
                  std::to_string(static_cast<std::int64_t>(bytes)) +
                  " bytes per PE (weights of every layer, activations of the largest), the SRAM " +
                  std::to_string(hw.sram_bytes);
          return kInf;
        }
      }
      return st.result.cost;
    } catch (const MemoryInfeasible& e) {  // no choice of some layer fits the SRAM on this band
      if (why.empty()) why = e.what();
      learn(first, end, units, kInf);  // nor on any stage that holds that layer too
      return kInf;
    } catch (const InputError& e) {
      if (why.empty()) why = e.what();
      return kInf;
    }
  }
};

}  // namespace

void check_pipeline_options(const Graph& graph, const HwDesc& hw, const std::string& cost_model,
                            const PipelineOptions& o) {
  make_solver(o.solver);
  make_cost_model(cost_model, hw);
  if (o.micro_batches < 1)
    throw InputError("--micro-batches: must be at least 1 (got " + std::to_string(o.micro_batches) +
                     ")");
  const int units = pipeline_units(hw), n = static_cast<int>(build_workload(graph).layers.size());
  if (o.stages < 1 || o.stages > std::min(units, n))
    throw InputError("--stages: " + std::to_string(o.stages) + " stages need as many " +
                     (hw.mesh() ? "mesh rows" : "crossbar ports") + " and layers; " +
                     hw.topology.name() + " has " + std::to_string(units) + ", " + graph.name() +
                     " has " + std::to_string(n) + " layers (1 to " +
                     std::to_string(std::min(units, n)) + ")");
}

PipelineResult solve_pipeline(const Graph& graph, const HwDesc& hw, const std::string& cost_model,
                              const PipelineOptions& o) {
  const auto t0 = std::chrono::steady_clock::now();
  check_pipeline_options(graph, hw, cost_model, o);  // before any work
  const Workload w = build_workload(graph);
  const int units = pipeline_units(hw), n = static_cast<int>(w.layers.size());
  Pricer pricer(w, hw, o, cost_model);
  PipelineResult out;
  try {
    out.split = split_min_max_units(
        n, o.stages, units,
        [&](int first, int end, int q, double cutoff) {
          return pricer.cost(first, end, q, cutoff);
        },
        [&](int first, int end, int q) { return pricer.lower_bound(first, end, q); });
  } catch (const InputError& e) {
    std::string why = pricer.why;
    for (const auto& b : pricer.bands)
      if (why.empty() && b && !b->failure.empty()) why = b->failure;
    throw InputError(std::string(e.what()) + (why.empty() ? "" : "; for example: " + why));
  }
  out.whole_machine_cycles = pricer.cost(0, n, units).cost;

  {
    const int even = units / o.stages;
    std::vector<double> times;
    for (int l = 0; l < n; ++l) times.push_back(pricer.lower_bound(l, l + 1, even));
    out.balanced = split_balanced(times, o.stages);
    for (int s = 0; s < o.stages; ++s) {
      const int q = even + (s < units % o.stages);
      out.balanced.units.push_back(q);
      out.balanced.cost[static_cast<std::size_t>(s)] =
          pricer.cost(out.balanced.begin[static_cast<std::size_t>(s)],
                      out.balanced.begin[static_cast<std::size_t>(s) + 1], q)
              .cost;
    }
  }

  // The plan: each stage's own plan on its band (as priced), moved to the band's PEs, then its
  // stage inputs.
  Plan& plan = out.plan;
  plan.network = graph.name();
  plan.cost_model = cost_model;
  plan.solver = "pipeline/" + o.solver;
  plan.pes = hw.num_pes();
  plan.topology = hw.topology.name();
  plan.micro_batches = o.micro_batches;
  int first_pe = 0;
  for (int s = 0; s < out.split.stages(); ++s) {
    const int first = out.split.begin[s], end = out.split.begin[s + 1], q = out.split.units[s];
    Band& b = pricer.tabulated(q);
    Pricer::Solved st = pricer.solve(first, end, q);
    Plan part = make_plan(st.setup, st.result.choice, b.hw, *b.model, plan.solver);
    out.resident_bytes.push_back(Pricer::stage_bytes(st.setup, st.result.choice));
    for (PlanLayer& l : part.layers) {
      for (int& pe : l.pes) pe += first_pe;
      l.stage = s;
      plan.layers.push_back(std::move(l));
    }
    for (PlanEdge& e : part.edges) plan.edges.push_back(std::move(e));
    plan.compute_cycles += part.compute_cycles;
    plan.redistribution_cycles += part.redistribution_cycles;
    plan.energy_pj += part.energy_pj;
    plan.activation_bytes += part.activation_bytes;
    for (const LayerEdge& e : stage_inputs(w, first, end)) {
      const Layer& src = w.layers[static_cast<std::size_t>(e.src)];
      const Layer& dst = w.layers[static_cast<std::size_t>(e.dst)];
      const auto v = static_cast<std::size_t>(e.dst - first);
      const Choice& c = st.setup.choices[v][static_cast<std::size_t>(st.result.choice[v])];
      const double cycles = pricer.stage_input_cycles(src, dst, e.input, c, q);
      // Energy: every consumer PE's share (copies of what is not split) over the mean route.
      const double bytes = input_share(dst, e.input, c) * c.nodes();
      const double pj = bytes * stage_input_hops(hw, q) * hw.hop_pj_per_byte;
      plan.edges.push_back({src.name, dst.name, e.input, "STAGE_INPUT", bytes, cycles, pj});
      plan.redistribution_cycles += cycles;
      plan.energy_pj += pj;
    }
    const int pes = q * pes_per_unit(hw);
    plan.stages.push_back({w.layers[static_cast<std::size_t>(first)].name,
                           w.layers[static_cast<std::size_t>(end - 1)].name, q, first_pe, pes,
                           out.split.cost[static_cast<std::size_t>(s)]});
    first_pe += pes;
  }
  out.ranges_priced = pricer.priced;
  out.ranges_stopped = pricer.stopped;
  // Layers are in workload order (stages are contiguous); edges stage by stage.
  plan.pipeline_cycles = out.split.pipeline_cost(o.micro_batches);
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

}  // namespace nocflow::optimizer
