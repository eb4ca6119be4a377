// SPDX-License-Identifier: MIT
#include "sim/validate/rank.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <limits>
#include <map>
#include <sstream>

#include "noc/base/error.h"
#include "noc/base/format.h"
#include "noc/base/progress.h"
#include "noc/router/symmetry.h"
#include "optimizer/cost/paper_calibration.h"
#include "optimizer/plan/partition_setup.h"
#include "optimizer/plan/plan.h"
#include "optimizer/solver/kbest.h"
#include "sim/lower/priced_inputs.h"
#include "sim/lower/workload_setup.h"
#include "sim/output/output_file.h"
#include "sim/run/child_process.h"
#include "sim/run/replay.h"

namespace nocflow::sim {
namespace {

namespace opt = nocflow::optimizer;
using Clock = std::chrono::steady_clock;

/// 1 + the number of strictly smaller values: the cheapest is 1, ties share the smaller rank.
std::vector<int> ranks(const std::vector<double>& v) {
  std::vector<int> r;
  for (double x : v) r.push_back(1 + static_cast<int>(std::count_if(v.begin(), v.end(), [&](double y) { return y < x; })));
  return r;
}

double spread_pct(const std::vector<double>& v) {
  const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  return *lo > 0 ? 100 * (*hi - *lo) / *lo : 0;
}

/// Plans are the same when every layer takes the same choice: placement and lowering follow
/// from the choices, whatever the model predicted.
using PlanKey = std::vector<std::array<int, 5>>;
PlanKey key_of(const opt::Plan& plan) {
  PlanKey k;
  for (const auto& l : plan.layers) k.push_back(l.choice.f);
  return k;
}

}  // namespace

double RankedPlan::simulated_mean_cycles() const {
  if (placement_cycles.empty()) return static_cast<double>(simulated_cycles);
  double sum = 0;
  for (std::int64_t c : placement_cycles) sum += static_cast<double>(c);
  return sum / static_cast<double>(placement_cycles.size());
}

opt::Plan placed_image(const opt::Plan& plan, const std::vector<int>& node) {
  opt::Plan image = plan;
  for (opt::PlanLayer& l : image.layers)
    for (int& pe : l.pes) pe = node.at(static_cast<std::size_t>(pe));
  return image;
}

double RankedPlan::relative_error() const {
  return simulated_cycles > 0 ? (predicted_cycles - static_cast<double>(simulated_cycles)) / static_cast<double>(simulated_cycles) : 0;
}

double kendall_tau_b(const std::vector<double>& x, const std::vector<double>& y) {
  const std::size_t n = std::min(x.size(), y.size());
  if (n < 2) return std::numeric_limits<double>::quiet_NaN();
  auto sign = [](double d) { return (d > 0) - (d < 0); };
  long long s = 0, tied_x = 0, tied_y = 0;
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = i + 1; j < n; ++j) {
      const int dx = sign(x[i] - x[j]), dy = sign(y[i] - y[j]);
      s += dx * dy;
      tied_x += dx == 0;
      tied_y += dy == 0;
    }
  const long long pairs = static_cast<long long>(n * (n - 1) / 2);
  const double denominator = std::sqrt(static_cast<double>(pairs - tied_x) * static_cast<double>(pairs - tied_y));
  return denominator > 0 ? static_cast<double>(s) / denominator : std::numeric_limits<double>::quiet_NaN();
}

ResolvedPairs resolved_pairs(const std::vector<double>& predicted,
                             const std::vector<std::vector<double>>& images) {
  auto sign = [](double d) { return (d > 0) - (d < 0); };
  ResolvedPairs r;
  const std::size_t n = predicted.size();
  for (std::size_t a = 0; a < n; ++a)
    for (std::size_t b = a + 1; b < n; ++b) {
      ++r.pairs;
      int order = 0;  // the images' common order, 0 while none is known
      bool alike = !images.empty();
      for (const std::vector<double>& image : images) {
        const int s = sign(image.at(a) - image.at(b));
        alike = alike && s != 0 && (order == 0 || s == order);
        order = s;
      }
      if (!alike) continue;
      ++r.resolved;
      const int p = sign(predicted[a] - predicted[b]);
      r.concordant += p == order;
      r.discordant += p == -order;
    }
  return r;
}

namespace {

/// Partition strategies: which choices a layer may take. A spread of plans, from the model's
/// optimum ("any") to constrained ones that are clearly worse, so that a ranking has distances
/// to resolve.
struct Strategy {
  const char* name;
  bool (*allows)(const opt::Choice& c, int pes);
};
bool only(const opt::Choice& c, std::initializer_list<opt::PartDim> dims) {
  for (opt::PartDim d : opt::kAllPartDims)
    if (c.factor(d) > 1 && std::find(dims.begin(), dims.end(), d) == dims.end()) return false;
  return true;
}
const Strategy kStrategies[] = {
    {"any", [](const opt::Choice&, int) { return true; }},
    {"OUTP only", [](const opt::Choice& c, int) { return only(c, {opt::PartDim::Outp}); }},
    {"OFMP only", [](const opt::Choice& c, int) { return only(c, {opt::PartDim::OfmpH, opt::PartDim::OfmpW}); }},
    {"OFMP_H only", [](const opt::Choice& c, int) { return only(c, {opt::PartDim::OfmpH}); }},
    {"OFMP_W only", [](const opt::Choice& c, int) { return only(c, {opt::PartDim::OfmpW}); }},
    {"INPP only", [](const opt::Choice& c, int) { return only(c, {opt::PartDim::Inpp}); }},
    {"OUTP and INPP", [](const opt::Choice& c, int) { return only(c, {opt::PartDim::Outp, opt::PartDim::Inpp}); }},
    {"no INPP", [](const opt::Choice& c, int) { return c.factor(opt::PartDim::Inpp) == 1; }},
    {"all PEs", [](const opt::Choice& c, int pes) { return c.nodes() == pes; }},
    {"at most P/4 PEs", [](const opt::Choice& c, int pes) { return 4 * c.nodes() <= pes; }},
    {"at most P/16 PEs", [](const opt::Choice& c, int pes) { return 16 * c.nodes() <= pes; }},
};

}  // namespace

RankReport rank_plans(const HwSpec& spec, const opt::Graph& graph, const RankOptions& o,
                      std::ostream& progress) {
  RankReport report;
  report.mode = o.mode == ExecMode::Barrier ? "barrier" : "dataflow";
  report.calibration = o.calibration;
  const opt::Workload workload = opt::build_workload(graph);
  opt::HwDesc hw = hw_desc_of(spec);
  if (!o.calibration.empty()) opt::apply_calibration_file(o.calibration, hw);  // notes: the caller's
  report.network = o.network;

  // 1. Per model: its k best plans, and its best plan under each strategy.
  std::vector<opt::Plan> plans;                  // distinct, by plan_id
  std::vector<std::string> first_seen;           // "paper k-best 3" per plan_id
  std::map<PlanKey, int> ids;
  for (const std::string& name : o.models) {
    const auto t0 = Clock::now();
    const auto model = opt::make_cost_model(name, hw);
    // SRAM limit on, as `simulate` solves: lowering rejects a plan that does not fit. Unpruned,
    // because a strategy may exclude the choice that dominated another.
    const opt::PartitionSetup setup = opt::setup_partition(graph, hw, *model, {false, true, false});
    const auto t1 = Clock::now();
    const std::size_t first_row = report.plans.size();  // this model's rows start here
    std::string same_as;  // when add() finds the plan in the set already: that row's label
    auto add = [&](const std::vector<int>& choice, const std::string& set, const std::string& label, int k) {
      opt::Plan plan = opt::make_plan(setup, choice, hw, *model, set == "kbest" ? "dp k-best" : "dp " + label);
      // As optimize records, for simulate --plan.
      record_priced_inputs(plan, spec, graph, o.passes);
      plan.calibration = o.calibration;
      const auto known = ids.find(key_of(plan));
      if (known != ids.end())  // a strategy whose best plan another strategy already gave: one row
        for (std::size_t i = first_row; i < report.plans.size(); ++i)
          if (report.plans[i].set == set && report.plans[i].plan_id == known->second) {
            same_as = report.plans[i].label;
            return false;
          }
      RankedPlan r;
      r.model = name;
      r.set = set;
      r.label = label;
      r.k = k;
      r.predicted_cycles = plan.total_cycles();
      r.predicted_compute_cycles = plan.compute_cycles;
      r.predicted_redistribution_cycles = plan.redistribution_cycles;
      const auto [it, added] = ids.emplace(key_of(plan), static_cast<int>(plans.size()));
      r.plan_id = it->second;
      if (added) {
        plans.push_back(std::move(plan));
        first_seen.push_back(name + " " + label);
      }
      report.plans.push_back(r);
      return true;
    };
    // Over every choice: pruning keeps the optimum, not the k best (a plan through a choice
    // that another dominates, by a little or by a tie, may well be among them).
    const auto best = opt::k_best(setup.problem, o.k);
    for (std::size_t i = 0; i < best.size(); ++i)
      add(best[i].choice, "kbest", "k-best " + std::to_string(i + 1), static_cast<int>(i));
    ModelRanking m;
    m.model = name;
    m.plans = static_cast<int>(best.size());
    std::ostringstream notes;
    int strategy_index = 0;
    for (const Strategy& st : kStrategies) {
      if (!o.strategies) break;
      std::vector<std::vector<int>> kept(setup.choices.size());
      int open_layers = 0;  // layers with no choice of the strategy that fits the SRAM keep all
      for (std::size_t l = 0; l < setup.choices.size(); ++l) {
        const int layer = static_cast<int>(l);
        for (std::size_t i = 0; i < setup.choices[l].size(); ++i)
          if (st.allows(setup.choices[l][i], hw.num_pes()) && setup.problem.fits(layer, static_cast<int>(i)))
            kept[l].push_back(static_cast<int>(i));
        if (kept[l].empty()) {
          ++open_layers;
          for (std::size_t i = 0; i < setup.choices[l].size(); ++i) kept[l].push_back(static_cast<int>(i));
        }
      }
      try {
        const opt::Problem restricted = opt::restrict_problem(setup.problem, kept);
        const opt::SolveResult r = opt::make_solver("dp")->solve(restricted, {60, "flow", "", false});
        std::vector<int> choice(kept.size());
        for (std::size_t l = 0; l < kept.size(); ++l)
          choice[l] = kept[l][static_cast<std::size_t>(r.choice[l])];
        if (add(choice, "strategy", std::string("strategy ") + st.name, strategy_index))
          ++strategy_index;
        else
          notes << "; " << st.name << ": the plan of " << same_as;
        if (open_layers)
          notes << "; " << st.name << ": " << open_layers
                << (open_layers == 1 ? " layer keeps" : " layers keep") << " all choices";
      } catch (const InputError& e) {  // e.g. nothing fits the SRAM under this strategy
        notes << "; " << st.name << " skipped (" << e.what() << ")";
      }
    }
    m.optimize_seconds = seconds_since(t0);
    std::size_t choices = 0;
    for (const auto& c : setup.choices) choices += c.size();
    progress << "  " << name << ": " << choices << " choices, set-up "
             << fixed(std::chrono::duration<double>(t1 - t0).count(), 1) << " s, "
             << best.size() << " best plans (predicted "
             << fixed(best.empty() ? 0 : best.front().cost, 0) << " .. " << fixed(best.empty() ? 0 : best.back().cost, 0)
             << " cycles) and " << strategy_index << " strategy plans in " << fixed(seconds_since(t1), 1) << " s"
             << notes.str() << std::endl;
    report.models.push_back(m);
  }

  // 2. Replay every distinct plan once, and each k-best plan on the other images of its placement,
  // in child processes, o.jobs at a time.
  std::vector<noc::Symmetry> images =
      noc::routing_symmetries(noc::Topology::build(spec.topology), *noc::make_routing(spec.router.routing));
  if (static_cast<std::size_t>(o.placements) > images.size())
    std::cout << "  note: this machine and routing have only " << images.size()
              << " equivalent placements (identity included): each k-best plan replays on those, "
                 "not on "
              << o.placements << " (--placements" << (o.placements == RankOptions{}.placements ? ", its default" : "")
              << ")" << std::endl;
  images.resize(std::min(images.size(), static_cast<std::size_t>(std::max(1, o.placements))));
  for (const noc::Symmetry& s : images) report.placements.push_back(s.name);
  struct Job {
    std::size_t id, image;
  };
  std::vector<Job> jobs;
  for (std::size_t id = 0; id < plans.size(); ++id) jobs.push_back({id, 0});
  std::vector<bool> in_kbest(plans.size(), false);
  for (const RankedPlan& r : report.plans)
    if (r.set == "kbest") in_kbest[static_cast<std::size_t>(r.plan_id)] = true;
  for (std::size_t image = 1; image < images.size(); ++image)
    for (std::size_t id = 0; id < plans.size(); ++id)
      if (in_kbest[id]) jobs.push_back({id, image});
  const auto t_sim = Clock::now();
  std::vector<std::vector<ReplayOutcome>> outcome(plans.size(), std::vector<ReplayOutcome>(images.size()));
  std::size_t finished = 0;
  auto name_of = [&](const Job& j) {
    return first_seen[j.id] + (j.image ? " (" + images[j.image].name + ")" : std::string());
  };
  auto interrupt_note = [&] {  // the tables need every replay: nothing is written before
    set_interrupt_note("nocflow validate --rank: interrupted after " + std::to_string(finished) + " of " +
                       std::to_string(jobs.size()) + " replays; nothing written\n");
  };
  const InterruptNoteScope note_scope;
  interrupt_note();
  run_in_children(
      jobs.size(), o.jobs,
      [&](std::size_t i) {
        const Job& j = jobs[i];
        return replay(spec, workload, j.image ? placed_image(plans[j.id], images[j.image].node) : plans[j.id], o.mode)
            .serialize();
      },
      [&](std::size_t i, const ChildResult& r) {
        const Job& j = jobs[i];
        if (r.kind == ChildResult::Kind::InputError) throw InputError(name_of(j) + ": " + r.text);
        if (r.kind != ChildResult::Kind::Ok) throw CheckError(name_of(j) + ": " + r.text);
        ReplayOutcome& out = outcome[j.id][j.image];
        out = ReplayOutcome::deserialize(r.text);
        progress << "  [" << ++finished << "/" << jobs.size() << "] " << name_of(j) << ": simulated "
                 << out.total_cycles << " cycles, predicted " << fixed(plans[j.id].total_cycles(), 0)
                 << " cycles (" << fixed(out.wall_seconds, 1) << " s simulation)" << std::endl;
        interrupt_note();
      });
  set_interrupt_note("");
  for (RankedPlan& r : report.plans) {
    const auto id = static_cast<std::size_t>(r.plan_id);
    r.simulated_cycles = outcome[id][0].total_cycles;
    r.simulated_compute_cycles = outcome[id][0].compute_cycles;
    r.simulated_communication_cycles = outcome[id][0].communication_cycles;
    if (in_kbest[id])  // every row of the plan, whatever its set: the rows of one plan agree
      for (const ReplayOutcome& out : outcome[id]) r.placement_cycles.push_back(out.total_cycles);
  }
  report.replays = static_cast<int>(plans.size());
  report.image_replays = static_cast<int>(jobs.size() - plans.size());
  if (o.mode == ExecMode::Barrier)  // so that simulate --plan replays as ranked
    for (opt::Plan& p : plans) p.replay_mode = "barrier";
  report.distinct = std::move(plans);
  report.simulate_seconds = seconds_since(t_sim);

  // 3. Per model: ranks, τ, regret, error of the predicted-best plan.
  std::int64_t best_simulated = std::numeric_limits<std::int64_t>::max();
  for (const auto& out : outcome) best_simulated = std::min(best_simulated, out[0].total_cycles);
  for (ModelRanking& m : report.models) {
    // Rows are distinct within a (model, set): add() keeps one row per plan.
    auto collect = [&](const std::string& set) {
      std::vector<RankedPlan*> mine;
      for (RankedPlan& r : report.plans)
        if (r.model == m.model && r.set == set) mine.push_back(&r);
      return mine;
    };
    auto values = [](const std::vector<RankedPlan*>& rows, bool simulated) {
      std::vector<double> v;
      for (const RankedPlan* r : rows) v.push_back(simulated ? static_cast<double>(r->simulated_cycles) : r->predicted_cycles);
      return v;
    };
    const auto strategy = collect("strategy");
    m.strategy_plans = static_cast<int>(strategy.size());
    m.strategy_kendall_tau = kendall_tau_b(values(strategy, false), values(strategy, true));
    if (!strategy.empty()) m.strategy_predicted_spread_pct = spread_pct(values(strategy, false));
    {
      const auto pr = ranks(values(strategy, false)), sr = ranks(values(strategy, true));
      for (std::size_t i = 0; i < strategy.size(); ++i) strategy[i]->predicted_rank = pr[i], strategy[i]->simulated_rank = sr[i];
    }
    const auto mine = collect("kbest");
    const double nan = std::numeric_limits<double>::quiet_NaN();
    m.self_kendall_tau = m.placement_spread_pct = m.mean_kendall_tau = nan;
    if (mine.empty()) continue;
    const std::vector<double> predicted = values(mine, false), simulated = values(mine, true);
    const auto pr = ranks(predicted), sr = ranks(simulated);
    for (std::size_t i = 0; i < mine.size(); ++i) mine[i]->predicted_rank = pr[i], mine[i]->simulated_rank = sr[i];
    m.kendall_tau = kendall_tau_b(predicted, simulated);
    // The plan the model would pick: its cheapest prediction (ties: the first found).
    const RankedPlan& pick = *mine[static_cast<std::size_t>(std::min_element(predicted.begin(), predicted.end()) - predicted.begin())];
    m.regret_pct = 100.0 * static_cast<double>(pick.simulated_cycles - best_simulated) / static_cast<double>(best_simulated);
    m.best_plan_error_pct = 100 * pick.relative_error();
    m.predicted_spread_pct = spread_pct(predicted);
    m.simulated_spread_pct = spread_pct(simulated);
    const auto [lo, hi] = std::minmax_element(mine.begin(), mine.end(), [](const RankedPlan* a, const RankedPlan* b) {
      return a->relative_error() < b->relative_error();
    });
    m.error_range_pct = 100 * ((*hi)->relative_error() - (*lo)->relative_error());
    // The simulator against itself on equivalent placements, and the model against their mean.
    const std::size_t n_images = report.placements.size();
    auto on_image = [&](std::size_t image) {
      std::vector<double> v;
      for (const RankedPlan* r : mine) v.push_back(static_cast<double>(r->placement_cycles[image]));
      return v;
    };
    double tau_sum = 0, spread_sum = 0;
    int tau_pairs = 0;
    for (std::size_t a = 0; a < n_images; ++a)
      for (std::size_t b = a + 1; b < n_images; ++b)
        if (const double t = kendall_tau_b(on_image(a), on_image(b)); !std::isnan(t)) tau_sum += t, ++tau_pairs;
    std::vector<double> mean;
    for (const RankedPlan* r : mine) {
      spread_sum += spread_pct(std::vector<double>(r->placement_cycles.begin(), r->placement_cycles.end()));
      mean.push_back(r->simulated_mean_cycles());
    }
    m.self_kendall_tau = tau_pairs ? tau_sum / tau_pairs : nan;
    m.placement_spread_pct = n_images > 1 ? spread_sum / static_cast<double>(mine.size()) : nan;
    m.mean_kendall_tau = n_images > 1 ? kendall_tau_b(predicted, mean) : nan;
    std::vector<std::vector<double>> images;
    for (std::size_t i = 0; i < n_images; ++i) images.push_back(on_image(i));
    m.resolved = resolved_pairs(predicted, images);
  }
  return report;
}

}  // namespace nocflow::sim
