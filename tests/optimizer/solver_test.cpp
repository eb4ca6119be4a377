// SPDX-License-Identifier: MIT
// Solvers on random small instances: brute force = dp = ilp flow = ilp McCormick, pruning
// never changes the optimum, greedy is never better (issue 5, acceptance 2).
#include "optimizer/solver/solver.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>

#include "noc/base/error.h"
#include "optimizer/solver/elimination.h"
#include "optimizer/solver/ilp_formulation.h"
#include "optimizer/solver/tree_bound.h"
#include "tests/optimizer/random_problem.h"
#include "tests/scratch.h"

namespace nocflow::optimizer {
namespace {

TEST(Solvers, RandomInstancesAllExactSolversAgree) {
  std::mt19937 rng(12345);
  const auto dp = make_solver("dp"), ilp = make_solver("ilp"), greedy = make_solver("greedy"),
             layout = make_solver("greedy-layout"), local = make_solver("dp-local");
  SolveOptions flow, mcc;
  mcc.formulation = "mccormick";
  for (int n = 0; n < 240; ++n) {
    std::uniform_int_distribution<int> size(1, 6);
    const Problem p = random_problem(rng, size(rng), 8, n % 2 == 0);
    const double best = evaluate(p, brute_force(p));
    const double tol = 1e-9 * std::max(1.0, best);
    EXPECT_NEAR(dp->solve(p, flow).cost, best, tol) << "instance " << n;
    EXPECT_NEAR(local->solve(p, flow).cost, best, tol) << "instance " << n;  // one window
    const SolveResult f = ilp->solve(p, flow);
    EXPECT_NEAR(f.cost, best, tol) << "instance " << n;
    EXPECT_TRUE(f.ilp && f.ilp->optimal);
    EXPECT_LE(f.ilp->lp_relaxation, best + tol);
    EXPECT_NEAR(ilp->solve(p, mcc).cost, best, tol) << "instance " << n;
    EXPECT_GE(greedy->solve(p, flow).cost, best - tol);
    EXPECT_GE(layout->solve(p, flow).cost, best - tol);
    // Dominance pruning keeps the optimum.
    const PrunedProblem pruned = prune_dominated(p);
    EXPECT_NEAR(evaluate(pruned.problem, brute_force(pruned.problem)), best, tol)
        << "instance " << n;
  }
}

TEST(Solvers, PruningDropsDominatedChoices) {
  Problem p;
  p.names = {"a", "b"};
  p.node = {{1, 2, 1}, {0, 0}};
  p.edges.push_back({0, 1, 2, {1, 1, 1, 2, 1, 1}});  // choice 1 of a: worse everywhere than 0
  const PrunedProblem r = prune_dominated(p);
  EXPECT_EQ(r.kept[0], (std::vector<int>{0}));  // 2 duplicates 0 (ties: smaller index stays)
  // Against a's only remaining choice, b's two choices cost the same: the smaller index stays.
  EXPECT_EQ(r.kept[1], (std::vector<int>{0}));
  EXPECT_DOUBLE_EQ(evaluate(r.problem, {0, 0}), evaluate(p, brute_force(p)));
}

// Plain greedy reads layer costs only, so setup_partition skips the edge tables and their
// pruning for it (Solver::edge_tables): its choices must be the same either way, on problems
// with ties and a memory limit, where pruning drops tied choices.
TEST(Solvers, GreedyChoosesTheSameWithoutEdgeTablesOrPruning) {
  const auto greedy = make_solver("greedy");
  EXPECT_EQ(greedy->edge_tables(), EdgeTables::None);
  EXPECT_EQ(make_solver("greedy-layout")->edge_tables(), EdgeTables::Rows);
  for (const char* exact : {"dp", "dp-local", "ilp"})
    EXPECT_EQ(make_solver(exact)->edge_tables(), EdgeTables::Full);
  std::mt19937 rng(4242);
  int tied_choices_pruned = 0;
  for (int n = 0; n < 400; ++n) {
    std::uniform_int_distribution<int> size(1, 6), mem(1, 4), cost(0, 2);
    Problem p = random_problem(rng, size(rng), 8, n % 2 == 0);
    p.memory_limit = 3;  // some choices do not fit; the first of each layer always does
    for (int l = 0; l < p.num_layers(); ++l) {
      auto& m = p.memory.emplace_back();
      for (int i = 0; i < p.num_choices(l); ++i) m.push_back(i == 0 ? 1 : mem(rng));
      for (double& c : p.node[static_cast<std::size_t>(l)]) c = cost(rng);  // many ties
    }
    const PrunedProblem pruned = prune_dominated(p);
    const SolveResult on_pruned = greedy->solve(pruned.problem, {});
    Problem bare = p;
    bare.edges.clear();
    const std::vector<int> without = greedy->solve(bare, {}).choice;
    for (int l = 0; l < p.num_layers(); ++l) {
      const auto u = static_cast<std::size_t>(l);
      const int pick = without[u];
      EXPECT_EQ(pruned.kept[u][static_cast<std::size_t>(on_pruned.choice[u])], pick)
          << "instance " << n << ", layer " << l;
      // Pruning dropped a fitting choice that ties with greedy's on layer cost?
      const auto& cost_of = p.node[u];
      const auto& kept = pruned.kept[u];
      for (int i = 0; i < p.num_choices(l); ++i)
        tied_choices_pruned +=
            i != pick && p.fits(l, i) &&
            cost_of[static_cast<std::size_t>(i)] == cost_of[static_cast<std::size_t>(pick)] &&
            !std::binary_search(kept.begin(), kept.end(), i);
    }
    EXPECT_DOUBLE_EQ(evaluate(p, without), evaluate(pruned.problem, on_pruned.choice))
        << "instance " << n;
  }
  EXPECT_GT(tied_choices_pruned, 20);  // the case the argument is about was exercised
}

// greedy-layout reads one row per edge (EdgeTables::Rows): on a problem whose edges compute
// their rows on demand it must pick what it picks from the tables, at the same cost, asking
// for each edge's row once; evaluate() prices such a problem as the tables do, and pruning
// refuses it.
TEST(Solvers, GreedyLayoutOnRowsOnDemandChoosesAsOnTables) {
  const auto layout = make_solver("greedy-layout");
  std::mt19937 rng(2025);
  for (int n = 0; n < 200; ++n) {
    std::uniform_int_distribution<int> size(1, 7);
    const Problem tables = random_problem(rng, size(rng), 8, n % 3 == 0);
    Problem rows = tables;
    auto asked = std::make_shared<int>(0);
    for (auto& e : rows.edges) {
      e.row = [full = e, asked](int i) {
        ++*asked;
        return edge_row(full, i);
      };
      e.cost.clear();
    }
    const SolveResult from_tables = layout->solve(tables, {});
    const SolveResult from_rows = layout->solve(rows, {});
    EXPECT_EQ(from_rows.choice, from_tables.choice) << "instance " << n;
    EXPECT_EQ(from_rows.cost, from_tables.cost) << "instance " << n;
    EXPECT_EQ(from_tables.cost, evaluate(tables, from_tables.choice)) << "instance " << n;
    EXPECT_EQ(*asked, static_cast<int>(tables.edges.size())) << "instance " << n;
    EXPECT_EQ(evaluate(rows, from_rows.choice), evaluate(tables, from_rows.choice))
        << "instance " << n;
    if (!rows.edges.empty()) {
      EXPECT_THROW(prune_dominated(rows), std::logic_error);
    }
  }
}

// The ILP models themselves, solved by lp_solve alone: IlpSolver keeps the tree bound's
// assignment when the MILP is no better, which would hide a wrong model (an empty McCormick
// lower bound makes its optimum the cheapest layer costs alone).
TEST(Solvers, BothIlpFormulationsReachTheOptimumOnTheirOwn) {
  std::mt19937 rng(99);
  for (int n = 0; n < 40; ++n) {
    const Problem p = random_problem(rng, 2 + n % 4, 5, n % 2 == 0);
    const std::vector<int> best_choice = brute_force(p);
    const double best = evaluate(p, best_choice);
    for (const char* formulation : {"flow", "mccormick"}) {
      const IlpModel m = build_ilp(p, formulation);
      const LpSolution sol = solve_lp(m.lp, {10, false, ""});
      ASSERT_EQ(sol.status, LpStatus::Optimal) << formulation << ", instance " << n;
      EXPECT_NEAR(sol.objective, best, 1e-6 * std::max(1.0, best)) << formulation << ", instance " << n;
      // Its x is an assignment (one choice per layer) that costs its objective.
      std::vector<int> choice(p.node.size(), -1);
      for (std::size_t l = 0; l < m.x.size(); ++l)
        for (std::size_t i = 0; i < m.x[l].size(); ++i)
          if (sol.values[static_cast<std::size_t>(m.x[l][i])] > 0.5) {
            EXPECT_EQ(choice[l], -1) << formulation << ": layer " << l << " takes two choices";
            choice[l] = static_cast<int>(i);
          }
      ASSERT_EQ(std::count(choice.begin(), choice.end(), -1), 0) << formulation;
      EXPECT_NEAR(evaluate(p, choice), best, 1e-6 * std::max(1.0, best)) << formulation;
    }
  }
}

TEST(Solvers, LpRelaxationReportedFromTheRootMatchesASeparateSolve) {
  std::mt19937 rng(7);
  for (int n = 0; n < 10; ++n) {
    const Problem p = random_problem(rng, 5, 6, false);
    const IlpModel m = build_ilp(p, "mccormick");
    const LpSolution full = solve_lp(m.lp, {10, false, ""});
    const LpSolution relaxed = solve_lp(m.lp, {10, true, ""});
    ASSERT_TRUE(full.has_root_relaxation);
    EXPECT_NEAR(full.root_relaxation, relaxed.objective, 1e-6);
  }
}

TEST(Solvers, DpSolvesGraphsThatNodeEliminationCannotReduceByBucketElimination) {
  // Dense random graphs (each pair joined with probability 0.7, parallel edges sometimes, a
  // memory limit every third instance): no layer may be left with two neighbours, so the rest
  // goes to bucket elimination, which must find the brute-force optimum.
  std::mt19937 rng(99);
  int bucket = 0;
  for (int n = 0; n < 120; ++n) {
    std::uniform_int_distribution<int> layers(4, 7), choices(1, 5), coin(0, 9);
    std::uniform_real_distribution<double> cost(0, 40);
    Problem p;
    for (int l = layers(rng); l > 0; --l) {
      p.names.push_back("l" + std::to_string(p.names.size()));
      p.node.emplace_back();
      for (int i = choices(rng); i > 0; --i) p.node.back().push_back(cost(rng));
    }
    for (int u = 0; u < p.num_layers(); ++u)
      for (int v = u + 1; v < p.num_layers(); ++v)
        for (int k = 0; k < (coin(rng) < 7) + (coin(rng) == 0); ++k) {
          Problem::Edge e{coin(rng) < 5 ? u : v, coin(rng) < 5 ? v : u, 0, {}};
          if (e.u == e.v) e.v = e.u == u ? v : u;
          e.nv = p.num_choices(e.v);
          for (int i = 0; i < p.num_choices(e.u) * e.nv; ++i) e.cost.push_back(cost(rng));
          p.edges.push_back(std::move(e));
        }
    if (n % 3 == 0) {
      p.memory_limit = 1;
      for (int l = 0; l < p.num_layers(); ++l) {
        auto& m = p.memory.emplace_back();
        for (int i = 0; i < p.num_choices(l); ++i) m.push_back(i == 0 || coin(rng) < 5 ? 1 : 2);
      }
    }
    const auto elim = solve_by_elimination(p);
    ASSERT_TRUE(elim.has_value()) << "instance " << n;
    bucket += elim->factor_layers > 0;
    const double best = evaluate(p, brute_force(p));
    EXPECT_NEAR(evaluate(p, elim->choice), best, 1e-9 * best) << "instance " << n;
  }
  EXPECT_GT(bucket, 60);  // most instances really reach bucket elimination
}

TEST(Solvers, DpFallsBackToIlpOnlyWhenBucketEliminationTablesGetTooLarge) {
  // K5 with 18 choices: tables of 18^4 entries, solved exactly by dp itself.
  std::mt19937 rng(3);
  const Problem k5 = complete_graph(rng, 5, 18);
  const auto elim = solve_by_elimination(k5);
  ASSERT_TRUE(elim.has_value());
  EXPECT_EQ(elim->factor_layers, 5);
  EXPECT_EQ(elim->largest_table, 18 * 18 * 18 * 18);
  const SolveResult r = make_solver("dp")->solve(k5, {});
  ASSERT_FALSE(r.notes.empty());
  EXPECT_NE(r.notes[0].find("bucket elimination of the other 5 layers"), std::string::npos)
      << r.notes[0];
  EXPECT_NEAR(r.cost, make_solver("ilp")->solve(k5, {}).cost, 1e-9 * r.cost);
  // K6 with 30 choices needs a table of 30^5 > 2^24 entries. Every cost equal, so bound
  // pruning can drop no choice (all are optimal): ilp takes over and dp says so.
  Problem k6 = complete_graph(rng, 6, 30);
  for (auto& e : k6.edges) std::fill(e.cost.begin(), e.cost.end(), 1.0);
  for (auto& costs : k6.node) std::fill(costs.begin(), costs.end(), 1.0);
  EliminationNeeds needs;
  EXPECT_FALSE(solve_by_elimination(k6, &needs).has_value());
  EXPECT_EQ(needs.largest_table, 30 * 30 * 30 * 30 * 30);
  const SolveResult f = make_solver("dp")->solve(k6, {});
  ASSERT_EQ(f.notes.size(), 2u);
  EXPECT_NE(f.notes[0].find("bound pruning first, 180 of 180 choices can be optimal"),
            std::string::npos)
      << f.notes[0];
  EXPECT_NE(f.notes[1].find("what the bound leaves does not reduce: the best elimination order "
                            "found needs a table of 24300000 entries"),
            std::string::npos)
      << f.notes[1];
  ASSERT_TRUE(f.ilp.has_value());
  EXPECT_EQ(f.ilp->choices, 180);  // the whole problem's, as ilp itself counts them
  EXPECT_NE(f.notes[1].find("(limits 16777216, 67108864 and 10000000000): solved by ilp"),
            std::string::npos)
      << f.notes[1];
  EXPECT_EQ(f.cost, make_solver("ilp")->solve(k6, {}).cost);
}

TEST(Solvers, DpPrunesByBoundBeforeALongBucketElimination) {
  // K5 with 30 choices: bucket elimination takes 30^5 > 10^7 additions, so dp first drops the
  // choices no optimum can take, then eliminates on the rest; the optimum is the one bucket
  // elimination of the whole problem finds. K5 with 18 choices (18^5 additions) is eliminated
  // whole, as above.
  std::mt19937 rng(5);
  for (int n = 0; n < 4; ++n) {
    const Problem k5 = complete_graph(rng, 5, 30);
    const auto whole = solve_by_elimination(k5);
    ASSERT_TRUE(whole.has_value());
    EXPECT_EQ(whole->factor_layers, 5);
    EliminationNeeds needs;
    EXPECT_FALSE(solve_by_elimination(k5, &needs, 1e7).has_value());
    EXPECT_EQ(needs.additions, 30.0 * 30 * 30 * 30 * 30 + 30 * 30 * 30 * 30 + 30 * 30 * 30 +
                                   30 * 30 + 30);
    const SolveResult r = make_solver("dp")->solve(k5, {});
    ASSERT_EQ(r.notes.size(), 2u);
    EXPECT_NE(r.notes[0].find("bucket elimination would take 25137930 additions: bound pruning "
                              "first"),
              std::string::npos)
        << r.notes[0];
    EXPECT_TRUE(r.optimal);
    const double best = evaluate(k5, whole->choice);
    EXPECT_NEAR(r.cost, best, 1e-12 * best) << "instance " << n;
    EXPECT_EQ(r.cost, evaluate(k5, r.choice));
  }
}

TEST(Solvers, ACutoffStopsOnlyWhereNoAssignmentIsWithinIt) {
  // dp and ilp with a cutoff: below the optimum they may stop with a lower bound above the
  // cutoff; otherwise (and always at or above the optimum) they return the optimum.
  std::mt19937 rng(21);
  int stopped = 0;
  for (int n = 0; n < 60; ++n) {
    const Problem p = n % 3 == 2 ? complete_graph(rng, 4, 10)
                                 : random_problem(rng, 2 + n % 5, 8, n % 2 == 0);
    const double best = make_solver("dp")->solve(p, {}).cost;
    const double tol = 1e-9 * std::max(1.0, best);
    for (const std::string name : {"dp", "ilp"})
      for (const double share : {0.5, 0.9, 1.0, 1.5}) {
        SolveOptions o;
        o.cutoff = share * best;
        const SolveResult r = make_solver(name)->solve(p, o);
        const std::string where = name + " instance " + std::to_string(n) + " cutoff " +
                                  std::to_string(share) + " x the optimum";
        if (r.above_cutoff) {
          ++stopped;
          EXPECT_LT(share, 1.0) << where;
          EXPECT_GT(r.cost, o.cutoff) << where;
          EXPECT_LE(r.cost, best + tol) << where;
          EXPECT_TRUE(r.choice.empty()) << where;
          EXPECT_FALSE(r.optimal) << where;
        } else {
          EXPECT_NEAR(r.cost, best, tol) << where;
          EXPECT_EQ(r.cost, evaluate(p, r.choice)) << where;
        }
      }
  }
  EXPECT_GT(stopped, 180);  // most of the 240 solves with a cutoff below the optimum
}

TEST(Solvers, DpLocalImprovesOnGreedyLayoutWindowByWindowOnLongLadders) {
  // A training graph's shape: forward layers 0..n-1 in a chain, backward layers n..2n-1 in a
  // chain the other way, each forward layer joined to its backward twin (index order stays
  // topological). 2n = 300 layers: dp-local's windows of 64 see only part of it at a time.
  std::mt19937 rng(21);
  std::uniform_real_distribution<double> cost(0, 40);
  std::uniform_int_distribution<int> coin(0, 4);
  const int n = 150;
  for (int instance = 0; instance < 4; ++instance) {
    Problem p;
    for (int l = 0; l < 2 * n; ++l) {
      p.names.push_back("l" + std::to_string(l));
      p.node.emplace_back();
      for (int i = 0; i < 4; ++i) p.node.back().push_back(cost(rng));
    }
    auto join = [&](int u, int v) {
      Problem::Edge e{u, v, 4, {}};
      for (int i = 0; i < 16; ++i) e.cost.push_back(coin(rng) ? 0.0 : cost(rng));
      p.edges.push_back(std::move(e));
    };
    for (int l = 0; l + 1 < n; ++l) join(l, l + 1), join(2 * n - 2 - l, 2 * n - 1 - l);
    for (int l = 0; l < n; ++l) join(l, 2 * n - 1 - l);
    if (instance % 2) {  // a memory limit that rules out choice 3 everywhere
      p.memory_limit = 1;
      p.memory.assign(static_cast<std::size_t>(2 * n), {1, 1, 1, 2});
    }
    const SolveResult exact = make_solver("dp")->solve(p, {});
    const SolveResult layout = make_solver("greedy-layout")->solve(p, {});
    const SolveResult local = make_solver("dp-local")->solve(p, {});
    EXPECT_DOUBLE_EQ(local.cost, evaluate(p, local.choice));
    EXPECT_LT(local.cost, layout.cost) << instance;
    EXPECT_GE(local.cost, exact.cost - 1e-9 * exact.cost) << instance;
    // Windows help where they can: within 3 % of the optimum, far under greedy-layout's gap.
    EXPECT_LT(local.cost, exact.cost * 1.03) << instance << ": greedy-layout " << layout.cost;
    for (int l = 0; l < 2 * n; ++l)
      EXPECT_TRUE(p.fits(l, local.choice[static_cast<std::size_t>(l)]));
    ASSERT_FALSE(local.notes.empty());
    EXPECT_NE(local.notes[0].find("not proven overall"), std::string::npos) << local.notes[0];
  }
}

TEST(Solvers, MemoryLimitIsEnforcedOrNamesTheLayer) {
  Problem p;
  p.names = {"small", "big"};
  p.node = {{1, 5}, {1, 5}};
  p.memory = {{10, 1}, {10, 1}};
  p.memory_limit = 5;  // only choice 1 fits
  p.edges.push_back({0, 1, 2, {0, 0, 0, 0}});
  for (const std::string name : {"greedy", "greedy-layout", "dp", "ilp"})
    EXPECT_EQ(make_solver(name)->solve(p, {}).choice, (std::vector<int>{1, 1})) << name;
  p.memory[1] = {10, 10};
  try {
    make_solver("ilp")->solve(p, {});
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("layer 'big'"), std::string::npos) << e.what();
  }
}

// Naming only the first layer that does not fit made the user raise the limit once per layer.
TEST(Solvers, MemoryRefusalAlsoGivesTheLimitTheWholeNetworkNeedsAndItsLayer) {
  Problem p;
  p.names = {"fits", "scores", "scaled", "softmax"};
  p.node = {{1, 1}, {1, 1}, {1, 1}, {1, 1}};
  p.memory = {{10, 4}, {20, 12}, {9, 30}, {16, 18}};  // least: 4, 12, 9, 16
  p.memory_limit = 5;
  try {
    check_memory_feasible(p);
    FAIL();
  } catch (const MemoryInfeasible& e) {
    EXPECT_EQ(std::string(e.what()),
              "layer 'scores' does not fit in PE memory: its smallest per-PE footprint (weights, "
              "input and output share) is 12 bytes, the limit (pe.sram_bytes) is 5 bytes; the "
              "network needs at least 16 bytes per PE (layer 'softmax'); raise pe.sram_bytes or "
              "use more PEs");
  }
  p.memory_limit = 16;  // that one raise is enough
  EXPECT_NO_THROW(check_memory_feasible(p));
}

TEST(Solvers, UnknownNamesListTheKnownOnes) {
  try {
    make_solver("annealing");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("greedy, greedy-layout, dp, dp-local, ilp"),
              std::string::npos);
  }
  EXPECT_THROW(build_ilp({}, "big-m"), InputError);
}

TEST(Solvers, ExportLpWritesTheModelInLpOrMpsFormat) {
  std::mt19937 rng(5);
  const Problem p = random_problem(rng, 3, 3, true);
  for (const std::string name : {"solver_export.lp", "solver_export.mps", "solver_export.MPS"}) {
    const auto file = testing::fresh_path(name);
    SolveOptions o;
    o.export_lp = file.string();
    make_solver("ilp")->solve(p, o);
    std::ifstream in(file);
    ASSERT_TRUE(in) << file << " was not written";
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    // One binary x_i_c per layer and choice that can be optimal (named by its index in the
    // problem), one "exactly one choice" row per layer.
    const BoundPruning bound = prune_by_bound(p);
    int dropped = 0;
    for (int i = 0; i < p.num_layers(); ++i) {
      EXPECT_NE(text.find("one_" + std::to_string(i)), std::string::npos) << name << " " << i;
      const auto& kept = bound.kept[static_cast<std::size_t>(i)];
      for (int c = 0; c < p.num_choices(i); ++c) {
        const bool in = std::find(kept.begin(), kept.end(), c) != kept.end();
        dropped += !in;
        EXPECT_EQ(text.find("x_" + std::to_string(i) + "_" + std::to_string(c) + " ") !=
                      std::string::npos,
                  in)
            << name << " " << i << " " << c;
      }
    }
    EXPECT_GT(dropped, 0);  // names are the problem's indices, not the restricted model's
    const bool mps = name.find(".lp") == std::string::npos;
    // MPS: its sections, and the x columns between integer markers; LP: no MPS sections.
    for (const char* section : {"\nROWS", "\nCOLUMNS", "\nRHS", "\nENDATA"})
      EXPECT_EQ(text.find(section) != std::string::npos, mps) << name << " " << section;
    EXPECT_EQ(text.find("'INTORG'") != std::string::npos, mps) << name;
  }
}

}  // namespace
}  // namespace nocflow::optimizer
