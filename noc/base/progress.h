// SPDX-License-Identifier: MIT
#pragma once
// Progress lines at most every 2 s of wall time: the one clock of every long run's progress
// (simulate's cycles, traffic, tabulation, pipeline stage solves), however many callbacks share it.
#include <chrono>

namespace nocflow {

/// Wall seconds since t0 (a steady_clock time point: progress lines, run times).
inline double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

class ProgressThrottle {
 public:
  /// Seconds since construction (or restart) if a line is due now (and then none for 2 s), else −1.
  double due() {
    const auto now = Clock::now();
    if (now - last_ < std::chrono::seconds(2)) return -1;
    last_ = now;
    return std::chrono::duration<double>(now - started_).count();
  }
  /// Starts the clock again: the first line is due 2 s from now.
  void restart() { started_ = last_ = Clock::now(); }

 private:
  using Clock = std::chrono::steady_clock;
  Clock::time_point started_ = Clock::now(), last_ = started_;
};

}  // namespace nocflow
