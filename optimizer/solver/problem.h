// SPDX-License-Identifier: MIT
#pragma once
// The solver-neutral partition problem: pick one choice per layer to minimise the sum of layer
// costs and edge costs (seed 000 formula 21, over every graph edge), optionally with a per-PE
// memory limit. Tables only: solvers never see layers, choices or cost models.
#include <functional>
#include <string>
#include <vector>

#include "noc/base/error.h"

namespace nocflow::optimizer {

/// How much of the edge costs a solver reads (Solver::edge_tables), so how much
/// setup_partition computes (SetupOptions::edge_tables).
enum class EdgeTables {
  None,  ///< layer costs only (greedy): the problem has no edges
  Rows,  ///< one row per edge, its decided producer's (greedy-layout): computed on demand
  Full,  ///< every entry (dp, dp-local, ilp): tabulated (and dominance-pruned)
};

struct Problem {
  struct Edge {
    int u = 0, v = 0;           ///< layers (u's choice indexes rows, v's columns)
    int nv = 0;                 ///< choices of v
    std::vector<double> cost;   ///< row-major |C_u| × |C_v|; empty when `row` computes rows
    /// EdgeTables::Rows: row(i) computes row i (nv costs) from the cost model, which must
    /// outlive the problem; only edge_row() and evaluate() call it.
    std::function<std::vector<double>(int)> row{};
    /// Instead of `cost`: the same table owned by another problem, which must outlive this one
    /// (a pipeline stage's sub-problem reads its band's tables without copying them).
    const double* shared = nullptr;
    const double* table() const { return shared ? shared : cost.data(); }
    double at(int i, int j) const { return table()[static_cast<std::size_t>(i) * nv + j]; }
    bool tabulated() const { return !row; }
  };
  std::vector<std::string> names;              ///< per layer
  std::vector<std::vector<double>> node;       ///< [layer][choice] cost
  std::vector<Edge> edges;
  std::vector<std::vector<double>> memory;     ///< [layer][choice] bytes per PE; may be empty
  double memory_limit = 0;                     ///< bytes per PE; 0: no limit
  std::vector<std::vector<int>> pes;           ///< [layer][choice] p(c); may be empty
  int max_pes = 0;                             ///< P (seed formula 17)

  int num_layers() const { return static_cast<int>(node.size()); }
  int num_choices(int layer) const { return static_cast<int>(node[static_cast<std::size_t>(layer)].size()); }
  /// True if the memory limit allows choice i of layer l.
  bool fits(int l, int i) const {
    return memory_limit <= 0 || memory.empty() ||
           memory[static_cast<std::size_t>(l)][static_cast<std::size_t>(i)] <= memory_limit;
  }
};

/// Row i of an edge (its costs against every choice of v): from the table, or computed.
std::vector<double> edge_row(const Problem::Edge& e, int i);

/// Total cost of an assignment; +inf if it breaks the memory limit. Computes one row of each
/// edge that is not tabulated, or, with `rows` (one per edge), takes it from there: a row
/// computed already (the producer's row in `choice`) is used, an empty one computed and kept.
double evaluate(const Problem& p, const std::vector<int>& choice,
                std::vector<std::vector<double>>* rows = nullptr);

/// Calls f on every assignment of p in turn (tests; p small).
void for_each_assignment(const Problem& p, const std::function<void(const std::vector<int>&)>& f);

/// Exhaustive search (tests; throws std::length_error beyond 10^7 assignments).
std::vector<int> brute_force(const Problem& p);

/// A layer none of whose choices fits the memory limit (an InputError; its own type so that a
/// command can say how to lift the limit).
class MemoryInfeasible : public InputError {
 public:
  using InputError::InputError;
};

/// Throws MemoryInfeasible naming the first layer none of whose choices fits the memory limit,
/// with the smallest footprint and the limit, and the limit every layer fits (the largest
/// smallest footprint, with its layer).
void check_memory_feasible(const Problem& p);

/// Dominance pruning: choice b of a layer is dropped when a kept choice a is no worse on the
/// layer cost, on memory and on every entry of every incident edge (ties: the smaller index
/// stays). Repeated until nothing changes. Never changes the optimum value. Needs every edge
/// tabulated (throws std::logic_error otherwise), as does restrict_problem.
struct PrunedProblem {
  Problem problem;
  std::vector<std::vector<int>> kept;  ///< [layer] original indices of the kept choices
};
PrunedProblem prune_dominated(const Problem& p);

/// A sub-problem restricted to `kept` choices (original indices, ascending).
Problem restrict_problem(const Problem& p, const std::vector<std::vector<int>>& kept);
/// An assignment of restrict_problem(p, kept) in p's choice indices.
std::vector<int> unrestricted(const std::vector<int>& choice,
                              const std::vector<std::vector<int>>& kept);

}  // namespace nocflow::optimizer
