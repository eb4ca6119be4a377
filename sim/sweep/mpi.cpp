// SPDX-License-Identifier: MIT
#include "sim/sweep/mpi.h"

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>

#include "noc/base/error.h"
#include "sim/sweep/mpi_table.h"

namespace nocflow::sim {
namespace {

void (*g_finalize)() = nullptr;

}  // namespace

bool launched_under_mpi() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"})
    if (std::getenv(v)) return true;
  return false;
}

int launcher_rank() {
  for (const char* v : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"})
    if (const char* r = std::getenv(v)) return std::atoi(r);
  return 0;
}

Cluster mpi_cluster() {
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  const std::string module = (exe.parent_path() / "libnocflow_mpi.so").string();
  void* handle = ::dlopen(module.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (!handle)
    throw InputError("started under MPI, but " + module + " cannot be loaded (" + ::dlerror() +
                     "); build nocflow with libopenmpi-dev installed");
  auto open = reinterpret_cast<decltype(&nocflow_mpi_open)>(::dlsym(handle, "nocflow_mpi_open"));
  if (!open) throw InputError(module + ": no nocflow_mpi_open");
  MpiTable t;
  if (const int failed = open(&t))
    throw CheckError(failed == 1 ? "MPI_Init failed"
                                 : "MPI_Win_allocate failed (the ranks' shared point counter)");
  g_finalize = t.finalize;
  std::atexit([] { g_finalize(); });
  Cluster c;
  c.rank = t.rank;
  c.size = t.size;
  c.gather = t.gather;
  c.broadcast = t.broadcast;
  c.claim = [claim = t.claim] { return static_cast<std::size_t>(claim()); };
  c.claimed = [claimed = t.claimed] { return static_cast<std::size_t>(claimed()); };
  return c;
}

}  // namespace nocflow::sim
