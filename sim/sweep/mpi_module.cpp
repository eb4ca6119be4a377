// SPDX-License-Identifier: MIT
// libnocflow_mpi.so: the few collectives a sweep needs, behind a plain function table
// (sim/sweep/mpi.cpp loads it with dlopen). Strings travel as bytes; lengths first.
#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

namespace {

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

void finalize() {
  int done = 0;
  MPI_Finalized(&done);
  if (!done) MPI_Finalize();
}

}  // namespace

/// Initialises MPI; fills rank, size and the collectives. Returns 0 on success.
extern "C" int nocflow_mpi_open(int* rank, int* size, std::vector<std::string> (**gather_fn)(const std::string&),
                                std::string (**broadcast_fn)(const std::string&), void (**finalize_fn)()) {
  int argc = 0;
  char** argv = nullptr;
  if (MPI_Init(&argc, &argv) != MPI_SUCCESS) return 1;
  MPI_Comm_rank(MPI_COMM_WORLD, rank);
  MPI_Comm_size(MPI_COMM_WORLD, size);
  *gather_fn = gather;
  *broadcast_fn = broadcast;
  *finalize_fn = finalize;
  return 0;
}
