// SPDX-License-Identifier: MIT
// `nocflow optimize`: partition every layer across the PEs (issue 5).
#include "sim/cli/command.h"

namespace nocflow::sim::cli {

void add_optimize_command(CLI::App& app, Action& action) {}

}  // namespace nocflow::sim::cli
