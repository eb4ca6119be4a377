// SPDX-License-Identifier: MIT
#pragma once
// Partition choices (seed 000 §2.2): a factor per dimension BATCH, OUTP, OFMP_H, OFMP_W, INPP;
// the choice uses p = product of the factors nodes.
//
// Enumeration contract: every factor divides its dimension (N, K, H, W of the output view,
// and the reduction size for INPP; a relayout's only those in Layer::factors), or, with
// `balanced`, is also a divisor of P no larger than the dimension (its blocks then differ by
// one: placement.h, block_range; relayouts keep their list), dimensions the
// operator cannot split keep factor 1, and
// p ≤ P (p = P with `exact`). Order is deterministic: lexicographic over (BATCH, OUTP, OFMP_H,
// OFMP_W, INPP) factors, ascending.
#include <array>
#include <string>
#include <vector>

#include "optimizer/partition/part_dim.h"
#include "optimizer/partition/workload.h"

namespace nocflow::optimizer {

struct Choice {
  std::array<int, 5> f{1, 1, 1, 1, 1};  ///< indexed by PartDim
  /// PLACE=ROWS: every row of nodes starts at the mesh's left edge instead of continuing the
  /// snake (placement.h, rule 3). Offered by `--placement search` (optimize, simulate, sweep).
  bool rows_placement = false;

  int factor(PartDim d) const { return f[static_cast<std::size_t>(d)]; }
  int& factor(PartDim d) { return f[static_cast<std::size_t>(d)]; }
  int nodes() const { return f[0] * f[1] * f[2] * f[3] * f[4]; }
  bool operator==(const Choice& o) const { return f == o.f && rows_placement == o.rows_placement; }
  bool operator!=(const Choice& o) const { return !(*this == o); }
  /// "OUTP=4,OFMP_H=4" (factors > 1 in enum order), "SINGLE" when p = 1; ",PLACE=ROWS" appended
  /// for the rows placement.
  std::string str() const;
};

/// Parses str()'s format; throws InputError naming `what` on a malformed string.
Choice parse_choice(const std::string& text, const std::string& what);

struct ChoiceOptions {
  int max_nodes = 1;   ///< P
  bool exact = false;  ///< only choices with p = P (a layer that cannot be split keeps its one)
  bool balanced = false;  ///< also factors that do not divide their dimension (partition.splits)
};

/// Every choice of `layer` (see the contract above). May be empty (with `exact`).
std::vector<Choice> enumerate_choices(const Layer& layer, const ChoiceOptions& options);

/// Ascending divisors of n (n ≥ 1).
std::vector<std::int64_t> divisors(std::int64_t n);

/// The dimension size a factor of `d` splits (and divides, unless `balanced`).
std::int64_t dim_size(const Layer& layer, PartDim d);

/// Into how many parts of the largest block's size factor f of `d` cuts its dimension:
/// size / ⌈size / f⌉, exactly f when f divides the size (balanced blocks: placement.h).
double effective_parts(const Layer& layer, const Choice& choice, PartDim d);

/// The largest node's part of `total`, a quantity spread evenly over the layer's output
/// elements and reduction: ⌈total × Π_d ⌈size_d / f_d⌉ / size_d⌉, which is ⌈total / p⌉ when
/// every factor divides its dimension.
std::int64_t largest_node_part(std::int64_t total, const Layer& layer, const Choice& choice);
/// largest_node_part over the dimensions `dims` only, those that split the quantity (a weight's
/// OUTP and INPP): ⌈total × Π_{d in dims} ⌈size_d / f_d⌉ / size_d⌉.
std::int64_t largest_node_part(std::int64_t total, const Layer& layer, const Choice& choice,
                               PartDimSet dims);

}  // namespace nocflow::optimizer
