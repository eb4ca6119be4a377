// SPDX-License-Identifier: MIT
#pragma once
// Which nocflow made a result: the version and the commit it was built from.
#include <string>

namespace nocflow::sim {

/// "0.1.0 (commit 63fff83d8a1b)": the version and the git commit the build was made from
/// (scripts/cmake/NocflowBuildId.cmake, run at every build), "+modified-" and a digest of the
/// changes after the commit when tracked files differed from it, "unknown" outside a git
/// checkout. `nocflow version` prints it, summary.json records it, MPI ranks must run the same
/// one (a sweep's inputs hold it), and a sweep's inputs.txt names the one that started it
/// (`--resume` by another build runs, with a note).
std::string nocflow_build();

}  // namespace nocflow::sim
