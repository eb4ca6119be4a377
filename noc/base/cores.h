// SPDX-License-Identifier: MIT
#pragma once
// How many cores this process may use, for sizing thread pools and parallel jobs.
#include <sched.h>

#include <algorithm>
#include <thread>

namespace nocflow {

/// The cores this process may run on: its CPU affinity (taskset, mpirun's binding of a rank to
/// a core, a batch system's cpuset), else the machine's hardware threads; at least 1.
inline int usable_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
  return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

}  // namespace nocflow
