// SPDX-License-Identifier: MIT
// `nocflow inspect`: per-layer table of a network (front end, issue 4).
#include "sim/cli/command.h"

namespace nocflow::sim::cli {

void add_inspect_command(CLI::App& app, Action& action) {}

}  // namespace nocflow::sim::cli
