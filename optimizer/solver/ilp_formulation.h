// SPDX-License-Identifier: MIT
#pragma once
// The two ILP formulations of the partition problem, over every edge of the layer graph.
//  x[l,i] ∈ {0,1}: layer l takes choice i;  Σ_i x[l,i] = 1 (seed 16).
//  flow (default): y[e,i,j] ∈ [0,1] continuous, Σ_j y[e,i,j] = x[u,i], Σ_i y[e,i,j] = x[v,j]:
//    y is the joint distribution of the two ends, exact once x is integral, and far tighter
//    than McCormick (its LP relaxation is integral on trees).
//  mccormick (the seed's, 000 §3): y[e,i,j] ∈ {0,1}, y ≤ x[u,i], y ≤ x[v,j],
//    y ≥ x[u,i] + x[v,j] − 1, plus Σ_i p(i)·x[l,i] ≤ P (seed 17).
//  Optional memory rows: Σ_i mem[l,i]·x[l,i] ≤ limit.
// Objective: Σ cost(l,i)·x[l,i] + Σ cost(e,i,j)·y[e,i,j] (seed 21).
#include <string>
#include <vector>

#include "optimizer/solver/lp_model.h"
#include "optimizer/solver/problem.h"

namespace nocflow::optimizer {

struct IlpModel {
  LpModel lp;
  std::vector<std::vector<int>> x;  ///< [layer][choice] variable index
};

/// Throws InputError for an unknown formulation name. `labels`, when given, numbers each
/// layer's choices in variable names (x_l_LABEL, y_e_LABEL_LABEL): a restricted problem's
/// variables keep the original choice indices.
IlpModel build_ilp(const Problem& problem, const std::string& formulation,
                   const std::vector<std::vector<int>>& labels = {});
std::vector<std::string> formulation_names();

}  // namespace nocflow::optimizer
