// SPDX-License-Identifier: MIT
#pragma once
// The k cheapest assignments of a partition problem (solver/problem.h), for ranking plans
// against the simulator (`nocflow validate --rank`).
//
// Lawler–Murty partitioning over the exact `dp` solver: the cheapest assignment x of a
// subspace S splits S \ {x} into disjoint subspaces S_1..S_L, where S_i fixes the first i−1
// layers (in a fixed layer order) to x's choices and forbids x's choice of the i-th. Each S_i
// is solved exactly on a restricted copy of the problem; the cheapest open subspace gives the
// next assignment. Every subspace holds only choices within the memory limit, so every
// assignment returned is feasible.
//
// Contract: at most k distinct assignments, in non-decreasing cost (evaluate()), whose costs
// are the k smallest of the whole space (fewer when the space holds fewer). Among equal costs
// the order is deterministic but unspecified. Exact as long as `dp` is: a subproblem that does
// not reduce goes to ilp, exact unless its time limit stops it. InputError as dp (a layer that
// fits nowhere).
#include <vector>

#include "optimizer/solver/problem.h"

namespace nocflow::optimizer {

struct RankedAssignment {
  std::vector<int> choice;  ///< per layer, an index into the problem's choices
  double cost = 0;          ///< evaluate(problem, choice), cycles for a tabulated plan
};

std::vector<RankedAssignment> k_best(const Problem& problem, int k);

}  // namespace nocflow::optimizer
