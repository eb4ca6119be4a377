// SPDX-License-Identifier: MIT
// A sweep's running order and time left (sweep.h: point_weight, SweepPace, seconds_left,
// heaviest_first).
#include <algorithm>
#include <functional>
#include <queue>
#include <vector>

#include "sim/sweep/sweep.h"

namespace nocflow::sim {

double point_weight(const SweepPoint& point) {
  const auto pes = static_cast<double>(point.hw.topology.num_nodes());
  return pes * pes;
}

void SweepPace::finished(const SweepPoint& point, double seconds) {
  for (Sum* sum : {&all_, &solvers_[point.solver]}) {
    sum->seconds += seconds;
    sum->weight += point_weight(point);
  }
}

double SweepPace::seconds(const SweepPoint& point) const {
  const auto solver = solvers_.find(point.solver);
  const auto running = running_.find(point.solver);
  return std::max((solver != solvers_.end() ? solver->second : all_).pace(),
                  running != running_.end() ? running->second : 0.0) *
         point_weight(point);
}

void SweepPace::run(const SweepPoint& point, double seconds) {
  double& slowest = running_[point.solver];
  slowest = std::max(slowest, seconds / point_weight(point));
}

double seconds_left(std::vector<double> running, const std::vector<double>& queued, int workers) {
  // Min-heap of the times the workers come free; the running points hold some of them.
  std::priority_queue<double, std::vector<double>, std::greater<>> free_at;
  for (double r : running) free_at.push(r);
  for (int w = static_cast<int>(running.size()); w < workers; ++w) free_at.push(0);
  double end = 0;
  for (double r : running) end = std::max(end, r);
  for (double q : queued) {
    const double start = free_at.top();
    free_at.pop();
    free_at.push(start + q);
    end = std::max(end, start + q);
  }
  return end;
}

std::vector<const SweepPoint*> heaviest_first(std::vector<const SweepPoint*> points) {
  std::stable_sort(points.begin(), points.end(), [](const SweepPoint* a, const SweepPoint* b) {
    return point_weight(*a) > point_weight(*b);
  });
  return points;
}

}  // namespace nocflow::sim
