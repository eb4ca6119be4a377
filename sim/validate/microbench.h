// SPDX-License-Identifier: MIT
#pragma once
// Isolated microbenchmarks of the redistributions the analytic models distinguish (issue 7).
//
// A case is (topology, type, tensor bytes). Its network has two layers, a 1x1 convolution
// producing a 2-byte C x H x W tensor of the requested size and a consumer convolution (3x3,
// pad 1, for the halo case; 1x1 otherwise). The pair of choices replayed: among the pairs
// (using every PE if any qualifies) that the paper model's Type function calls the wanted type
// and that split the fewest dimensions, the one whose exact transfer list moves the most bytes
// (for NONE the fewest; ties: enumeration order). So each type gets its textbook pattern (OUTP -> OFMP: every strip
// gathers all channels; OFMP_H -> OFMP_W: all-to-all) rather than a degenerate one (OUTP f ->
// INPP f, which the seed calls an all-gather, moves nothing when aligned). HALO: the same
// single spatial split on both sides with a 3x3 consumer (paper: NONE; exact: the halo rows).
// The pair runs in barrier mode, so the edge is alone between two barriers, in its own child
// process. A case with no such pair is skipped and reported.
#include <cstdint>
#include <string>
#include <vector>

#include "sim/config/hw_spec.h"

namespace nocflow::sim {

struct BenchCase {
  std::string topology;  ///< "mesh 4x4", "crossbar 16"
  std::string type;      ///< NONE, LOCAL, ALL_GATHER, SCATTER, ALL_TO_ALL, ALL_REDUCE, HALO
  std::int64_t tensor_bytes = 0;
};

struct BenchResult {
  BenchCase bench;
  bool run = false;            ///< false: no choice pair of that type at this size
  std::string producer, consumer;  ///< the choices
  std::int64_t bytes_moved = 0;    ///< exact transfer list
  double paper_cycles = 0, linkload_cycles = 0;
  std::int64_t simulated_cycles = 0;
  double max_link_utilisation = 0;  ///< busiest link's flits per cycle during the edge
};

/// The type names, in the seed's order, plus HALO.
const std::vector<std::string>& bench_types();

/// One case on `hw` (whose topology is the one to test). Runs the simulation in a child.
BenchResult run_bench(const HwSpec& hw, const BenchCase& bench);

}  // namespace nocflow::sim
