// SPDX-License-Identifier: MIT
#pragma once
// The functions libnocflow_mpi.so hands to nocflow (sim/sweep/mpi.cpp loads it with dlopen):
// plain function pointers, so that nocflow itself neither links nor includes MPI.
#include <cstdint>
#include <string>
#include <vector>

namespace nocflow::sim {

struct MpiTable {
  int rank = 0, size = 1;
  std::vector<std::string> (*gather)(const std::string&) = nullptr;  ///< see Cluster::gather
  std::string (*broadcast)(const std::string&) = nullptr;            ///< see Cluster::broadcast
  std::int64_t (*claim)() = nullptr;                                 ///< see Cluster::claim
  std::int64_t (*claimed)() = nullptr;                               ///< see Cluster::claimed
  void (*finalize)() = nullptr;
};

}  // namespace nocflow::sim

/// Initialises MPI and fills the table; returns 0 on success, 1 when MPI_Init fails, 2 when the
/// counter's window cannot be allocated. Collective.
extern "C" int nocflow_mpi_open(nocflow::sim::MpiTable* table);
