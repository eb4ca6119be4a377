// SPDX-License-Identifier: MIT
#pragma once
// Isolated microbenchmarks of the redistributions the analytic models distinguish (issue 7).
//
// A case is (topology, type, tensor bytes). Its network has two layers, a 1x1 convolution
// producing a 2-byte C x H x W tensor of the requested size and a consumer convolution (3x3,
// pad 1, for the halo case; 1x1 otherwise). Among the choice pairs using every PE (then, if
// none fits, any), the first in enumeration order that the paper model's Type function calls
// the wanted type is replayed in barrier mode, so the edge runs alone between two barriers;
// for HALO, the first pair splitting H or W the same way on both sides (paper: NONE; exact: the
// halo rows). A case with no such pair is skipped and reported. Each case runs in its own
// child process.
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
