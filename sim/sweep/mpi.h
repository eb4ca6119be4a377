// SPDX-License-Identifier: MIT
#pragma once
// A sweep under MPI. The MPI calls live in a module (libnocflow_mpi.so, next to the nocflow
// executable) loaded only when the process was started by an MPI launcher, so that ordinary
// runs neither load nor initialise MPI.
#include "sim/sweep/sweep.h"

namespace nocflow::sim {

/// True when an MPI launcher (mpirun, srun) started this process.
bool launched_under_mpi();

/// This process's rank as its MPI launcher set it in the environment (before MPI starts); 0
/// when not launched under MPI.
int launcher_rank();

/// Loads the module and initialises MPI; the returned cluster's functions are collective.
/// Throws InputError when the module is missing. MPI is finalised at exit.
Cluster mpi_cluster();

}  // namespace nocflow::sim
