// SPDX-License-Identifier: MIT
// libnocflow_mpi.so: the few MPI calls a sweep needs, behind a plain function table
// (sim/sweep/mpi_table.h). Strings travel as bytes, lengths first; the points are claimed from
// a counter in rank 0's window.
#include <mpi.h>

#include "sim/sweep/mpi_table.h"

namespace {

// The window of the sweep's one counter, held by rank 0: MPI's state is the process's, and so
// is this (a process runs one sweep).
MPI_Win g_window = MPI_WIN_NULL;

std::vector<std::string> gather(const std::string& s) {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int length = static_cast<int>(s.size());
  std::vector<int> lengths(static_cast<std::size_t>(size)), offsets(static_cast<std::size_t>(size));
  MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  int total = 0;
  for (int r = 0; r < size; ++r) {
    offsets[static_cast<std::size_t>(r)] = total;
    total += lengths[static_cast<std::size_t>(r)];
  }
  std::string all(rank == 0 ? static_cast<std::size_t>(total) : 0, '\0');
  MPI_Gatherv(s.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR, 0, MPI_COMM_WORLD);
  std::vector<std::string> out;
  if (rank == 0)
    for (int r = 0; r < size; ++r)
      out.push_back(all.substr(static_cast<std::size_t>(offsets[static_cast<std::size_t>(r)]),
                               static_cast<std::size_t>(lengths[static_cast<std::size_t>(r)])));
  return out;
}

std::string broadcast(const std::string& s) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int length = static_cast<int>(s.size());
  MPI_Bcast(&length, 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::string out = rank == 0 ? s : std::string(static_cast<std::size_t>(length), '\0');
  MPI_Bcast(out.data(), length, MPI_CHAR, 0, MPI_COMM_WORLD);
  return out;
}

/// The counter's value before this rank's atomic increment.
std::int64_t claim() {
  const std::int64_t one = 1;
  std::int64_t before = 0;
  MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, g_window);
  MPI_Fetch_and_op(&one, &before, MPI_INT64_T, 0, 0, MPI_SUM, g_window);
  MPI_Win_unlock(0, g_window);
  return before;
}

/// The counter's value. Without an asynchronous progress thread, another node's claim on rank
/// 0's counter (over TCP) may complete only while rank 0 is inside MPI: this call is a visit.
std::int64_t claimed() {
  std::int64_t value = 0;
  MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, g_window);
  MPI_Fetch_and_op(nullptr, &value, MPI_INT64_T, 0, 0, MPI_NO_OP, g_window);
  MPI_Win_unlock(0, g_window);
  return value;
}

void finalize() {
  int done = 0;
  MPI_Finalized(&done);
  if (done) return;
  if (g_window != MPI_WIN_NULL) MPI_Win_free(&g_window);
  MPI_Finalize();
}

}  // namespace

extern "C" int nocflow_mpi_open(nocflow::sim::MpiTable* t) {
  int argc = 0;
  char** argv = nullptr;
  if (MPI_Init(&argc, &argv) != MPI_SUCCESS) return 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &t->rank);
  MPI_Comm_size(MPI_COMM_WORLD, &t->size);
  std::int64_t* counter = nullptr;
  const MPI_Aint bytes = t->rank == 0 ? sizeof(std::int64_t) : 0;
  if (MPI_Win_allocate(bytes, sizeof(std::int64_t), MPI_INFO_NULL, MPI_COMM_WORLD, &counter,
                       &g_window) != MPI_SUCCESS) {
    MPI_Finalize();
    return 2;
  }
  if (t->rank == 0) {  // zeroed before any rank claims (the barrier)
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, g_window);
    *counter = 0;
    MPI_Win_unlock(0, g_window);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  t->gather = gather;
  t->broadcast = broadcast;
  t->claim = claim;
  t->claimed = claimed;
  t->finalize = finalize;
  return 0;
}
