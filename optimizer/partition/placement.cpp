// SPDX-License-Identifier: MIT
#include "optimizer/partition/placement.h"

#include <algorithm>
#include <cstdlib>

#include "noc/base/error.h"

namespace nocflow::optimizer {
namespace {

// Mixed-radix order, slowest first (rule 1 of placement.h).
constexpr PartDim kOrder[5] = {PartDim::Batch, PartDim::Outp, PartDim::OfmpH, PartDim::OfmpW,
                               PartDim::Inpp};

}  // namespace

int rows_of_nodes(const Choice& c, const PeGrid& grid) {
  if (!grid.mesh) return 0;
  // The nodes sharing every coordinate but OFMP_W and INPP, else but OFMP_H too, else OUTP.
  int nodes = c.factor(PartDim::OfmpW) * c.factor(PartDim::Inpp);
  for (PartDim outer : {PartDim::OfmpH, PartDim::Outp, PartDim::Batch}) {
    if (nodes % grid.cols == 0) return nodes;
    nodes *= c.factor(outer);
  }
  return nodes % grid.cols == 0 ? nodes : 0;
}

int PeGrid::distance(int a, int b) const {
  if (a == b) return 0;
  if (!mesh) return 1;
  return std::abs(a % cols - b % cols) + std::abs(a / cols - b / cols);
}

int grid_index(const Choice& c, const GridCoord& g) {
  int i = 0;
  for (PartDim d : kOrder) i = i * c.factor(d) + g[static_cast<std::size_t>(d)];
  return i;
}

GridCoord grid_coord(const Choice& c, int index) {
  GridCoord g{};
  for (int k = 4; k >= 0; --k) {
    const auto d = static_cast<std::size_t>(kOrder[k]);
    g[d] = index % c.f[d];
    index /= c.f[d];
  }
  return g;
}

int snake_pe(const PeGrid& grid, int i) {
  if (!grid.mesh) return i;
  const int row = i / grid.cols, col = i % grid.cols;
  return row * grid.cols + (row % 2 == 0 ? col : grid.cols - 1 - col);
}

std::vector<int> ring_order(const PeGrid& grid, std::vector<int> members) {
  auto key = [&](int pe) {
    if (!grid.mesh) return std::pair{0, pe};
    const int row = pe / grid.cols, col = pe % grid.cols;
    return std::pair{row, row % 2 == 0 ? col : -col};
  };
  std::sort(members.begin(), members.end(), [&](int a, int b) { return key(a) < key(b); });
  return members;
}

Placement place(const Choice& c, const PeGrid& grid) {
  const int p = c.nodes();
  if (p > grid.num_pes())
    throw InputError("choice " + c.str() + " needs " + std::to_string(p) + " PEs, the machine has " +
                     std::to_string(grid.num_pes()));
  if (c.rows_placement && !rows_placement_applies(c, grid))
    throw InputError(
        "choice " + c.str() +
        ": PLACE=ROWS needs a mesh and rows of nodes (the OFMP_W·INPP nodes of one OFMP_H slice, "
        "else the nodes of one OUTP slice, else of one BATCH slice, whichever first fills whole "
        "mesh rows) that fill an odd number of the mesh's " +
        std::to_string(grid.cols) + "-PE rows, and more than one such row");
  Placement out;
  out.pe.resize(static_cast<std::size_t>(p));
  const int row_nodes = c.rows_placement ? rows_of_nodes(c, grid) : 0;
  for (int i = 0; i < p; ++i) {
    const int row = i / grid.cols, col = i % grid.cols;
    // Rule 3: within a row of nodes the mesh rows still alternate, starting left to right.
    out.pe[static_cast<std::size_t>(i)] =
        c.rows_placement
            ? row * grid.cols + (i % row_nodes / grid.cols % 2 == 0 ? col : grid.cols - 1 - col)
            : snake_pe(grid, i);
  }
  return out;
}

bool rows_placement_applies(const Choice& c, const PeGrid& grid) {
  const int row_nodes = rows_of_nodes(c, grid);
  return row_nodes > 0 && row_nodes < c.nodes() && row_nodes / grid.cols % 2 == 1;
}

std::vector<Choice> with_rows_placements(const std::vector<Choice>& choices, const PeGrid& grid) {
  std::vector<Choice> out;
  for (const Choice& c : choices) {
    out.push_back(c);
    if (c.rows_placement || !rows_placement_applies(c, grid)) continue;
    out.push_back(c);
    out.back().rows_placement = true;
  }
  return out;
}

Box output_block(const Layer& l, const Choice& c, const GridCoord& g) {
  Box b;
  b.r[kN] = block_range(l.out[kN], c.factor(PartDim::Batch), g[0]);
  b.r[kC] = block_range(l.out[kC], c.factor(PartDim::Outp), g[1]);
  b.r[kH] = block_range(l.out[kH], c.factor(PartDim::OfmpH), g[2]);
  b.r[kW] = block_range(l.out[kW], c.factor(PartDim::OfmpW), g[3]);
  return b;
}

Range reduction_slice(const Layer& l, const Choice& c, const GridCoord& g) {
  return block_range(l.reduction, c.factor(PartDim::Inpp), g[4]);
}

}  // namespace nocflow::optimizer
