// SPDX-License-Identifier: MIT
#pragma once
// `simulate --dump-programs DIR`: every PE's program (DIR/pe_N.txt, system/program.h's format)
// and the layer and edge names in the plan's order (DIR/names.txt), for `simulate --programs`.
#include <string>
#include <vector>

#include "sim/system/program.h"

namespace nocflow::sim {

/// Before any output is written: creates `dir` and refuses one that holds an earlier dump for
/// more than `pes` PEs (`--programs` would trip over its extra files). InputError otherwise.
void prepare_program_dump(const std::string& dir, int pes);

/// Writes DIR/pe_N.txt for every PE of `set` and DIR/names.txt.
void write_program_dump(const std::string& dir, const ProgramSet& set,
                        const std::vector<std::string>& edge_names);

}  // namespace nocflow::sim
