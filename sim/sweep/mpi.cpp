// SPDX-License-Identifier: MIT
#include "sim/sweep/mpi.h"

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>

#include "noc/base/error.h"

namespace nocflow::sim {
namespace {

using GatherFn = std::vector<std::string> (*)(const std::string&);
using BroadcastFn = std::string (*)(const std::string&);
using FinalizeFn = void (*)();
using OpenFn = int (*)(int*, int*, GatherFn*, BroadcastFn*, FinalizeFn*);

FinalizeFn g_finalize = nullptr;

}  // namespace

bool launched_under_mpi() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"})
    if (std::getenv(v)) return true;
  return false;
}

Cluster mpi_cluster() {
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  const std::string module = (exe.parent_path() / "libnocflow_mpi.so").string();
  void* handle = ::dlopen(module.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (!handle)
    throw InputError("started under MPI, but " + module + " cannot be loaded (" + ::dlerror() +
                     "); build nocflow with libopenmpi-dev installed");
  auto open = reinterpret_cast<OpenFn>(::dlsym(handle, "nocflow_mpi_open"));
  if (!open) throw InputError(module + ": no nocflow_mpi_open");
  Cluster c;
  GatherFn gather = nullptr;
  BroadcastFn broadcast = nullptr;
  if (open(&c.rank, &c.size, &gather, &broadcast, &g_finalize) != 0) throw CheckError("MPI_Init failed");
  std::atexit([] { g_finalize(); });
  c.gather = gather;
  c.broadcast = broadcast;
  return c;
}

}  // namespace nocflow::sim
