// SPDX-License-Identifier: MIT
#pragma once
// Running a sweep: every point solved (optimizer) and replayed (cycle-level system) in its own
// child process, `jobs` at a time, shared among MPI ranks when launched under mpirun (each rank
// claims the next point, heaviest first, whenever one of its jobs is free).
//
// Output folder: sweep.yaml (the spec, verbatim), config.resolved.yaml (the base config),
// results.csv (one row per point, in point order; written at the end). While running, each
// rank appends finished rows to results.partial-R.csv, so an interrupted sweep loses only the
// points in flight; --resume skips every point already in results.csv or a partial file whose
// status is ok or infeasible (failed points run again).
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "sim/sweep/spec.h"

namespace nocflow::sim {

/// The processes sharing a sweep: one (size 1) or the ranks of an MPI job (sim/sweep/mpi.h).
struct Cluster {
  int rank = 0, size = 1;
  /// Every rank's string, in rank order, on rank 0 (empty elsewhere).
  std::function<std::vector<std::string>(const std::string&)> gather = [](const std::string& s) {
    return std::vector<std::string>{s};
  };
  /// Rank 0's string, on every rank.
  std::function<std::string(const std::string&)> broadcast = [](const std::string& s) { return s; };
  /// The next value of a counter the ranks share, from 0: each value goes to exactly one rank.
  /// A rank claims the next point to run whenever one of its jobs is free, so that ranks whose
  /// points run faster take more of them.
  std::function<std::size_t()> claim;
  /// How many values claim() has given out, on every rank (for progress). Called about once a
  /// second while this rank waits for its points: under MPI that also lets rank 0 serve the
  /// others' claims (sim/sweep/mpi_module.cpp).
  std::function<std::size_t()> claimed;

  /// One process: a counter of its own. A cluster runs one sweep (its counter is not reset).
  Cluster() {
    auto next = std::make_shared<std::size_t>(0);
    claim = [next] { return (*next)++; };
    claimed = [next] { return *next; };
  }
};

struct SweepOptions {
  std::string out;
  int jobs = 1;
  bool resume = false;
  bool quiet = false;  ///< no per-point lines or progress bar
};

/// A point's expected share of a sweep's time, relative to the others of its solver: its PEs
/// squared (the optimizer's edge tables and the simulation both grow about so: mesh_sizes.yaml's
/// points took 0.3, 3.8 and 62 s for resnet50's dp on 4x4, 8x8 and 16x16). The sweep runs its
/// points heaviest first, so that a big point does not start last and run alone, and its time
/// left weighs the points still to run by this (SweepPace).
double point_weight(const SweepPoint& point);

/// A sweep's pace so far, for its time left: the seconds its finished points took per unit of
/// point_weight, per solver (dp took up to 48x greedy's time on the same mesh: mobilenet_v2 on
/// 16x16), and over every solver for a point whose solver has no finished point yet; never
/// faster than a running point of that solver has already gone (its seconds so far per weight).
class SweepPace {
 public:
  void finished(const SweepPoint& point, double seconds);
  /// Seconds `point` should take at this pace (0 before any point finished or ran).
  double seconds(const SweepPoint& point) const;
  /// What the running points have taken so far, for seconds(): `run(point, seconds)` for each,
  /// after forget_running().
  void run(const SweepPoint& point, double seconds);
  void forget_running() { running_.clear(); }

 private:
  struct Sum {
    double seconds = 0, weight = 0;
    double pace() const { return weight > 0 ? seconds / weight : 0; }
  };
  Sum all_;
  std::map<std::string, Sum> solvers_;
  std::map<std::string, double> running_;  ///< per solver: the slowest running point's pace
};

/// Seconds until the last point ends when `workers` run them: the running points' seconds still
/// to go, each on a worker of its own, then the queued ones in order, each on the worker free
/// first. A running point cannot be shared: one long point and one short one queued take the
/// long one's time, not their mean over two workers (which showed "~0s left" with 4 s to go).
double seconds_left(std::vector<double> running, const std::vector<double>& queued, int workers);

/// `points` in the order to run them: heaviest first (point_weight), ties in point order.
std::vector<const SweepPoint*> heaviest_first(std::vector<const SweepPoint*> points);

/// The columns of results.csv after the point and axis columns.
const std::vector<std::string>& sweep_result_columns();

/// Runs the points this rank owns; returns the exit code (0, or 3 when a point failed a check).
int run_sweep(const SweepSpec& spec, const std::vector<SweepPoint>& points, const SweepOptions& options,
              const Cluster& cluster);

/// One point, in this process: solve, replay, and the CSV fields of sweep_result_columns()
/// after `status`. `threads` for tabulating the cost model (0: one per core it may use,
/// usable_cores). Elaborates SystemC: call in a child.
std::vector<std::string> run_sweep_point(const SweepPoint& point, int threads = 0);

}  // namespace nocflow::sim
