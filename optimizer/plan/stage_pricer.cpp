// SPDX-License-Identifier: MIT
#include "optimizer/plan/stage_pricer.h"

#include <algorithm>
#include <iomanip>
#include <limits>
#include <optional>
#include <sstream>

#include "noc/base/error.h"
#include "noc/base/format.h"

namespace nocflow::optimizer {
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

/// "on a band of 2 mesh rows (8 PEs)": what a band's refusal holds for.
std::string band_name(const HwDesc& band, int units) {
  const std::string unit = band.mesh() ? " mesh row" : " crossbar port";
  const int pes = band.num_pes();
  return "on a band of " + std::to_string(units) + unit + (units == 1 ? "" : "s") + " (" +
         std::to_string(pes) + (pes == 1 ? " PE)" : " PEs)");
}

/// Band::next_unfit and Band::unfit from a band's problem, under its memory limit.
void find_unfitting(Band& b, const Problem& p, int units) {
  const int n = p.num_layers();
  b.next_unfit.assign(static_cast<std::size_t>(n) + 1, n);
  if (p.memory_limit <= 0 || p.memory.empty()) return;
  for (int l = n - 1; l >= 0; --l) {
    const auto& bytes = p.memory[static_cast<std::size_t>(l)];
    const bool fits =
        bytes.empty() || *std::min_element(bytes.begin(), bytes.end()) <= p.memory_limit;
    b.next_unfit[static_cast<std::size_t>(l)] =
        fits ? b.next_unfit[static_cast<std::size_t>(l) + 1] : l;
  }
  try {
    check_memory_feasible(p);
  } catch (const MemoryInfeasible& e) {
    b.unfit = band_name(b.hw, units) + ": " + e.what();
  }
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

/// No tabulated edge entry is negative (the models' are cycles): leaving an edge out never
/// raises a cost.
bool tables_nonnegative(const Problem& p) {
  const auto negative = [](double x) { return !(x >= 0); };
  for (const Problem::Edge& e : p.edges) {
    if (!e.tabulated()) continue;
    const double* t = e.table();
    const std::size_t size =
        p.node[static_cast<std::size_t>(e.u)].size() * static_cast<std::size_t>(e.nv);
    if (std::any_of(t, t + size, negative)) return false;
  }
  return true;
}

/// Band::grows: every edge tabulated, and neither it nor a layer cost negative.
bool grows(const Problem& p) {
  const auto negative = [](double x) { return !(x >= 0); };
  for (const auto& costs : p.node)
    if (std::any_of(costs.begin(), costs.end(), negative)) return false;
  return std::all_of(p.edges.begin(), p.edges.end(),
                     [](const Problem::Edge& e) { return e.tabulated(); }) &&
         tables_nonnegative(p);
}

/// Copies of edge `i` in a StagePricer::copies vector (empty: one each).
double count_of(const std::vector<double>& copies, std::size_t i) {
  return copies.empty() ? 1.0 : copies[i];
}

}  // namespace

CrossingPayer crossing_payer(const LayerEdge& e, int producer_end, int consumer_first) {
  if (consumer_pays(e, consumer_first)) return CrossingPayer::Consumer;
  return producer_pays(e, producer_end) ? CrossingPayer::Producer : CrossingPayer::Neither;
}

double stage_input_hops(const HwDesc& hw, int units) {
  return hw.mesh() ? (units + hw.topology.cols) / 2.0 : 1;
}

StagePricer::StagePricer(const Workload& w, const HwDesc& hw, const PipelineOptions& o,
                         const std::string& model)
    : w(w),
      hw(hw),
      o(o),
      cost_model(model),
      bands(static_cast<std::size_t>(pipeline_units(hw)) + 1),
      grown(bands.size()) {}

Band& StagePricer::band(int units) {
  auto& b = bands[static_cast<std::size_t>(units)];
  if (!b) {
    b = std::make_unique<Band>();
    b->hw = band_machine(hw, units);
    try {  // a band of one crossbar port is no machine: the stages use ≥ 2
      b->model = make_cost_model(cost_model, b->hw);
      SetupOptions setup = o.setup;
      setup.edge_tables = EdgeTables::None;  // every choice, unpruned: the least of each layer
      setup.require_fit = false;             // a layer that fits no choice: stages holding it
      const PartitionSetup all = setup_partition(*w.graph, b->hw, *b->model, setup);
      b->bound = chain_bounds(all, units);
      find_unfitting(*b, all.problem, units);
    } catch (const InputError& e) {
      b->failure = band_name(b->hw, units) + ": " + e.what();
    }
  }
  return *b;
}

Band& StagePricer::tabulated(int units) {
  Band& b = band(units);
  if (!b.tabulated && b.failure.empty()) {
    SetupOptions setup = o.setup;
    // Dominance on cost (and, under the memory limit, on a layer's whole share) drops choices
    // with lighter weights that a stage's resident weights may need: with them, the bands stay
    // unpruned (vgg5 on 4x4 with 160 KiB PEs, no memory limit: stage 1 cost 32,969 cycles
    // pruned, 31,146 not).
    if (o.resident_weights) setup.prune = false;
    if (o.band_progress) setup.progress = o.band_progress(units);
    setup.require_fit = false;  // as in band(): next_unfit
    try {
      b.setup = setup_partition(*w.graph, b.hw, *b.model, setup);
      b.bound = chain_bounds(b.setup, units);
      b.grows = grows(b.setup.problem);
      dearest_outputs(b);
      b.tabulated = true;
    } catch (const InputError& e) {
      b.failure = band_name(b.hw, units) + ": " + e.what();
    }
  }
  return b;
}

void StagePricer::dearest_outputs(Band& b) const {
  b.dearest_output.clear();
  for (std::size_t i = 0; i < w.edges.size(); ++i) {
    double dearest = 0;
    for (const Choice& c : b.setup.choices[static_cast<std::size_t>(w.edges[i].src)])
      dearest = std::max(dearest, output_cycles(i, c));
    b.dearest_output.push_back(dearest);
  }
}

bool StagePricer::reads_copies(int first, int end, const std::vector<double>& other) const {
  for (std::size_t i = 0; i < w.edges.size(); ++i)
    if (count_of(copies, i) != count_of(other, i) && pays_copies(i, first, end)) return true;
  return false;
}

bool StagePricer::pays_copies(std::size_t i, int first, int end) const {
  const LayerEdge& e = w.edges[i];
  return (e.dst >= first && e.dst < end && e.src < first && !consumer_pays(e, first)) ||
         (e.src >= first && e.dst >= end && producer_pays(e, end));
}

double StagePricer::most_saved(int first, int end, int units,
                               const std::vector<double>& next) const {
  const Band& b = *bands[static_cast<std::size_t>(units)];
  double saved = 0;
  for (std::size_t i = 0; i < w.edges.size(); ++i) {
    const double was = count_of(copies, i), now = count_of(next, i);
    if (was == now || !pays_copies(i, first, end)) continue;
    const LayerEdge& e = w.edges[i];
    const Layer& src = w.layers[static_cast<std::size_t>(e.src)];
    const Layer& dst = w.layers[static_cast<std::size_t>(e.dst)];
    const bool consumer = e.dst < end;  // it pays the copies beyond those sent
    double most = 0;
    for (const Choice& c : b.setup.choices[static_cast<std::size_t>(consumer ? e.dst : e.src)])
      most = std::max(most, consumer ? stage_copies_cycles(src, dst, e.input, c, was) -
                                           stage_copies_cycles(src, dst, e.input, c, now)
                                     : stage_output_cycles(src, c, dst, e.input) * (was - now));
    saved += most;
  }
  return saved;
}

void StagePricer::reprice(std::vector<double> c) {
  // A range's solves stand where it pays no edge whose copies change. Elsewhere each choice
  // costs at most most_saved less: what was proven, less that, still bounds it.
  const auto forget = [&](auto& solves) {
    for (auto it = solves.begin(); it != solves.end();)
      it = reads_copies(it->first[0], it->first[1], c) ? solves.erase(it) : std::next(it);
  };
  forget(exact);
  forget(resident_fits);
  for (auto& [key, least] : proven) least -= most_saved(key[0], key[1], key[2], c);
  copies = std::move(c);
  for (auto& g : grown) g.clear();
  for (std::size_t units = 0; units < bands.size(); ++units) {
    auto& b = bands[units];
    if (!b || !b->failure.empty()) continue;
    if (!b->tabulated) {
      b.reset();  // its bound, rebuilt on first use
      continue;
    }
    b->bound = chain_bounds(b->setup, static_cast<int>(units));
    dearest_outputs(*b);
  }
  // Each bound kept bounds the longer ranges again, with the new slack (a copy: learn keeps).
  for (const auto& [key, least] : std::map(proven))
    if (least > 0) learn(key[0], key[1], key[2], least);
}

double StagePricer::output_cycles(std::size_t i, const Choice& c) const {
  const LayerEdge& e = w.edges[i];
  return stage_output_cycles(w.layers[static_cast<std::size_t>(e.src)], c,
                             w.layers[static_cast<std::size_t>(e.dst)], e.input) *
         (copies.empty() ? 1 : copies[i]);
}

double StagePricer::copies_cycles(std::size_t i, const Choice& c) const {
  const LayerEdge& e = w.edges[i];
  return stage_copies_cycles(w.layers[static_cast<std::size_t>(e.src)],
                             w.layers[static_cast<std::size_t>(e.dst)], e.input, c,
                             copies.empty() ? 1 : copies[i]);
}

double StagePricer::stage_input_cycles(const Layer& producer, const Layer& layer, int input,
                                       const Choice& c, int units) const {
  const double share = input_share(layer, input, c);
  double cycles = share / hw.link_bytes_per_cycle;  // its ejection channel
  if (hw.mesh())  // all its PEs' shares over the band's boundary links
    cycles = std::max(cycles, share * c.nodes() / (hw.topology.cols * hw.link_bytes_per_cycle));
  if (producer.legal.empty())  // one PE (a Reshape, a Transpose) sends all of them
    cycles = std::max(cycles, share * c.nodes() / hw.link_bytes_per_cycle);
  return cycles +
         (hw.router_pipeline_cycles + hw.link_latency_cycles) * stage_input_hops(hw, units);
}

double StagePricer::stage_output_cycles(const Layer& producer, const Choice& c,
                                        const Layer& consumer, int input) const {
  const auto bytes = static_cast<double>(consumer.inputs[static_cast<std::size_t>(input)].bytes);
  const int senders = producer.legal.empty() ? 1 : c.nodes();   // one PE: a Reshape, a Transpose
  double cycles = bytes / (senders * hw.link_bytes_per_cycle);  // their injection channels
  if (hw.mesh()) cycles = std::max(cycles, bytes / (hw.topology.cols * hw.link_bytes_per_cycle));
  return cycles;
}

double StagePricer::stage_copies_cycles(const Layer& producer, const Layer& layer, int input,
                                        const Choice& c, double paid) const {
  const double share = input_share(layer, input, c);
  const double sent =
      paid * static_cast<double>(layer.inputs[static_cast<std::size_t>(input)].bytes);
  const double copies = std::max(0.0, share * c.nodes() - sent);
  if (producer.legal.empty())  // one PE (a Reshape, a Transpose) sends all of them
    return copies / hw.link_bytes_per_cycle;
  if (hw.mesh()) return copies / (hw.topology.cols * hw.link_bytes_per_cycle);
  return std::max(0.0, share - sent / c.nodes()) / hw.link_bytes_per_cycle;  // its ejection
}

std::vector<double> StagePricer::chain_bounds(const PartitionSetup& setup, int units) const {
  const Problem& p = setup.problem;
  const int n = p.num_layers();
  const auto N = static_cast<std::size_t>(n) + 1;
  // next[l]: the edges from l − 1 to l summed (empty: none, or not usable for the bound).
  if (!tables_nonnegative(p)) return std::vector<double>(N * N, -kInf);
  std::vector<std::vector<double>> next(static_cast<std::size_t>(n));
  for (const Problem::Edge& e : p.edges) {
    if (!e.tabulated() || e.v != e.u + 1) continue;
    const std::size_t size =
        p.node[static_cast<std::size_t>(e.u)].size() * static_cast<std::size_t>(e.nv);
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
    // What its consumers pay of the stage inputs (stage_setup).
    for (std::size_t i = 0; i < w.edges.size(); ++i)
      if (const LayerEdge& e = w.edges[i]; e.src < first && e.dst >= first) {
        auto& costs = node[static_cast<std::size_t>(e.dst - first)];
        const auto& choices = setup.choices[static_cast<std::size_t>(e.dst)];
        const Layer& src = w.layers[static_cast<std::size_t>(e.src)];
        const Layer& dst = w.layers[static_cast<std::size_t>(e.dst)];
        for (std::size_t c = 0; c < costs.size(); ++c)
          costs[c] += consumer_pays(e, first)
                          ? stage_input_cycles(src, dst, e.input, choices[c], units)
                          : copies_cycles(i, choices[c]);
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
  // And what its producers pay at least for edges to later stages (stage_setup), each at its
  // producer's cheapest choice: [first, end) pays those from [first, end − 1) to [end, n).
  std::vector<std::vector<std::pair<int, double>>> outputs(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < w.edges.size(); ++i) {
    const LayerEdge& e = w.edges[i];
    double least = kInf;
    for (const Choice& c : setup.choices[static_cast<std::size_t>(e.src)])
      least = std::min(least, output_cycles(i, c));
    if (least > 0 && least < kInf)
      outputs[static_cast<std::size_t>(e.src)].push_back({e.dst, least});
  }
  for (int end = 2; end <= n; ++end) {
    double paid = 0;
    for (int u = end - 2; u >= 0; --u) {
      for (const auto& [dst, least] : outputs[static_cast<std::size_t>(u)])
        if (dst >= end) paid += least;
      bound[static_cast<std::size_t>(u) * N + static_cast<std::size_t>(end)] += paid;
    }
  }
  return bound;
}

PartitionSetup StagePricer::stage_setup(int first, int end, int units) {
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
  // Edges to and from other stages, each added to the layer of this stage that pays it
  // (crossing_payer), for each of its choices.
  for (std::size_t i = 0; i < w.edges.size(); ++i) {
    const LayerEdge& e = w.edges[i];
    if (e.dst >= first && e.dst < end && e.src < first) {
      const Layer& src = w.layers[static_cast<std::size_t>(e.src)];
      const Layer& dst = w.layers[static_cast<std::size_t>(e.dst)];
      const auto v = static_cast<std::size_t>(e.dst - first);
      const bool pays = consumer_pays(e, first);
      for (std::size_t c = 0; c < p.node[v].size(); ++c)
        p.node[v][c] += pays ? stage_input_cycles(src, dst, e.input, s.choices[v][c], units)
                             : copies_cycles(i, s.choices[v][c]);
    } else if (e.src >= first && e.dst >= end && producer_pays(e, end)) {
      const auto u = static_cast<std::size_t>(e.src - first);
      for (std::size_t c = 0; c < p.node[u].size(); ++c)
        p.node[u][c] += output_cycles(i, s.choices[u][c]);
    }
  }
  return s;
}

StagePricer::Solved StagePricer::solve(int first, int end, int units, double cutoff) {
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
      resident_fits[key] = fit_resident(s, r);
    exact.emplace(key, r);
  }
  if (o.priced_progress) o.priced_progress(priced);
  return {std::move(s), std::move(r)};
}

double StagePricer::lower_bound(int first, int end, int units) {
  const Band& b = band(units);
  if (!b.failure.empty() || end > b.next_unfit[static_cast<std::size_t>(first)]) return kInf;
  const std::size_t at =
      static_cast<std::size_t>(first) * (w.layers.size() + 1) + static_cast<std::size_t>(end);
  const auto& known = grown[static_cast<std::size_t>(units)];
  return std::max(b.bound[at], known.empty() ? 0 : known[at]) * (1 - 1e-9);
}

void StagePricer::learn(int first, int end, int units, double least) {
  double& kept = proven[{first, end, units}];
  kept = std::max(kept, least);
  const Band& b = tabulated(units);
  if (!o.bound_by_shorter || !b.grows) return;
  auto& known = grown[static_cast<std::size_t>(units)];
  const std::size_t n = w.layers.size() + 1;
  if (known.empty()) known.assign(n * n, 0.0);
  // [first, end) pays its producers' edges into [end, e), which [first, e) does not (it pays
  // their edge tables, ≥ 0): at most `slack`, each at its producer's dearest choice. With the
  // rest, never negative, only added, [first, e) costs at least `least` − slack.
  std::vector<double> into(n, 0.0);  // by consumer
  for (std::size_t i = 0; i < w.edges.size(); ++i) {
    const LayerEdge& e = w.edges[i];
    if (e.src >= first && e.dst >= end && producer_pays(e, end))
      into[static_cast<std::size_t>(e.dst)] += b.dearest_output[i];
  }
  double* row = &known[static_cast<std::size_t>(first) * n];
  double slack = 0;
  for (auto e = static_cast<std::size_t>(end); e < n; ++e) {
    if (e > static_cast<std::size_t>(end)) slack += into[e - 1];
    row[e] = std::max(row[e], least - slack);
  }
}

StagePrice StagePricer::cost(int first, int end, int units, double cutoff) {
  const Band& b = tabulated(units);
  if (!b.failure.empty()) return kInf;
  // A layer that fits none of its choices: solve_pipeline's refusal says so for the even
  // split's band, the widest every stage can have.
  if (end > b.next_unfit[static_cast<std::size_t>(first)]) return kInf;
  try {
    Solved st = solve(first, end, units, cutoff);
    // What is proven of this range: a bound above the cutoff, or an optimum (with resident
    // weights the unconstrained one, which no fitting assignment beats), or what the search for
    // a fitting assignment proved (a Lagrangian bound; that none fits).
    double least = st.result.above_cutoff || st.result.optimal ? st.result.cost : -kInf;
    if (const auto fit = resident_fits.find({first, end, units}); fit != resident_fits.end())
      least = fit->second.infeasible ? kInf : std::max(least, fit->second.lower);
    if (least > 0) learn(first, end, units, least);
    if (st.result.above_cutoff) return {st.result.cost, true};
    if (o.resident_weights) {
      const double bytes = stage_bytes(st.setup, st.result.choice);
      if (bytes > static_cast<double>(hw.sram_bytes)) {
        if (why.empty())
          why = "layers " + w.layers[static_cast<std::size_t>(first)].name + " .. " +
                w.layers[static_cast<std::size_t>(end - 1)].name + " on " +
                counted(units, hw.mesh() ? "mesh row" : "crossbar port") + " hold " +
                std::to_string(static_cast<std::int64_t>(bytes)) +
                " bytes per PE (weights of every layer, activations of the largest), the SRAM " +
                std::to_string(hw.sram_bytes) +
                " (raise pe.sram_bytes, use fewer --stages, or leave out --resident-weights)";
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

}  // namespace nocflow::optimizer
