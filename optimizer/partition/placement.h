// SPDX-License-Identifier: MIT
#pragma once
// Placement: which PE runs each node of a choice's node grid.
//
// The rule (deterministic, mesh-aware):
//  1. Grid nodes are numbered in mixed radix with the dimensions that exchange the most data
//     varying fastest: INPP (partial sums reduced in a ring every time), then OFMP_W and OFMP_H
//     (halo neighbours), then OUTP, then BATCH (independent). index =
//     ((((b·fK + k)·fH + h)·fW + w)·fC + c).
//  2. Index i goes to the i-th PE of a boustrophedon ("snake") walk of the mesh: row 0 left to
//     right, row 1 right to left, ... so consecutive indices are always one hop apart and a
//     group of g consecutive indices spans at most ⌈g/cols⌉+1 rows. On a crossbar, PE i.
//  3. PLACE=ROWS (`optimize --placement search` offers it; the solver picks): a choice whose
//     rows of nodes fill an odd number m of mesh rows, and that has more than one row of nodes,
//     starts every row of nodes again at the left. A row of nodes is the OFMP_W·INPP
//     consecutive indices of one OFMP_H slice, or, where those do not fill whole mesh rows, the
//     indices of one OUTP slice, else of one BATCH slice (rows_of_nodes). So node (h, w) of a
//     2-D spatial split sits m mesh rows straight below node (h−1, w), and the members of an
//     OUTP group (one node from each OUTP slice) line up in a column. The snake mirrors every
//     other row of nodes when m is odd (OFMP_H=8,OFMP_W=8 on 8×8: vertical halo neighbours 2-8
//     hops apart instead of 1; OUTP=16,OFMP_H=16 on 16×16: every OUTP group split between
//     columns c and 15−c) but keeps them nearer the layers around it; which is better depends
//     on the plan (optimizer/README.md, "Placement"). With m even the two rules coincide, so
//     only odd m is offered.
// Every choice starts at the snake's first PE, so two layers with the same grid get the same
// PEs (OUTP f → INPP f aligned: node k of the producer and node k of the consumer coincide).
#include <vector>

#include "optimizer/partition/box.h"
#include "optimizer/partition/choice.h"

namespace nocflow::optimizer {

/// What placement needs to know of the machine.
struct PeGrid {
  bool mesh = true;
  int rows = 1;
  int cols = 1;  ///< crossbar: number of PEs, rows = 1
  int num_pes() const { return rows * cols; }
  /// Hops between two PEs (Manhattan on a mesh, 1 on a crossbar, 0 for the same PE).
  int distance(int a, int b) const;
};

/// Coordinates of one grid node, indexed by PartDim.
using GridCoord = std::array<int, 5>;

/// Mixed-radix number of a grid node (rule 1) and its inverse.
int grid_index(const Choice& c, const GridCoord& g);
GridCoord grid_coord(const Choice& c, int index);

/// The PE of the i-th snake position.
int snake_pe(const PeGrid& grid, int i);

/// `members` sorted into a mesh-friendly ring: by mesh row, each row walked in the snake's
/// direction (left to right on even rows), so consecutive members are neighbours wherever the
/// group allows. On a crossbar, ascending. The order of the simulator's ring all-gathers.
std::vector<int> ring_order(const PeGrid& grid, std::vector<int> members);

struct Placement {
  std::vector<int> pe;  ///< PE of grid node i (grid_index order)
};

/// Throws InputError if the choice needs more nodes than there are PEs, or has PLACE=ROWS where
/// rule 3 does not apply.
Placement place(const Choice& c, const PeGrid& grid);

/// Nodes in one row of nodes (rule 3): the first of OFMP_W·INPP, ×OFMP_H, ×OUTP, ×BATCH that
/// is a multiple of the mesh's width; 0 if none is, or on a crossbar.
int rows_of_nodes(const Choice& c, const PeGrid& grid);

/// Rule 3 applies: a mesh whose rows of nodes fill an odd number of mesh rows, and more than
/// one row of nodes.
bool rows_placement_applies(const Choice& c, const PeGrid& grid);

/// `choices` with, after each choice rule 3 applies to, its PLACE=ROWS twin.
std::vector<Choice> with_rows_placements(const std::vector<Choice>& choices, const PeGrid& grid);

/// Balanced blocks: a factor f (1 ≤ f ≤ size) cuts [0, size) into the f blocks
/// [⌊i·size/f⌋, ⌊(i+1)·size/f⌋), whose sizes differ by at most one: size / f each when f divides
/// size, else ⌈size/f⌉ and ⌊size/f⌋ (7 rows in 4: 1, 2, 2, 2; `partition.splits: balanced`).
inline Range block_range(std::int64_t size, std::int64_t f, std::int64_t i) {
  return {i * size / f, (i + 1) * size / f};
}
/// The block holding element x: the largest i with ⌊i·size/f⌋ ≤ x.
inline std::int64_t block_holding(std::int64_t size, std::int64_t f, std::int64_t x) {
  return ((x + 1) * f - 1) / size;
}

/// The output block grid node `g` owns (INPP coordinate ignored: partial sums cover the block).
Box output_block(const Layer& l, const Choice& c, const GridCoord& g);
/// The reduction (INPP) slice of grid node `g`.
Range reduction_slice(const Layer& l, const Choice& c, const GridCoord& g);

}  // namespace nocflow::optimizer
