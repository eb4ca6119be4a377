// SPDX-License-Identifier: MIT
#pragma once
// What a sweep reads besides its points' results: the files a --resume and the ranks of an MPI
// sweep compare (sim/sweep/sweep.cpp).
#include <filesystem>
#include <string>
#include <vector>

#include "sim/sweep/spec.h"

namespace nocflow::sim {

/// A file's bytes.
std::string file_text(const std::filesystem::path& file);

/// What the points read besides the spec, as --resume compares it: each network file's size and
/// FNV-1a digest, one line per file as the spec names it (so that a resume from another folder
/// compares the same lines; the base config is compared as config.resolved.yaml).
std::string network_digests(const SweepSpec& spec, const std::vector<SweepPoint>& points);

/// sweep_inputs, of a machine (resolved YAML) and network digests already read.
std::string inputs_text(const SweepSpec& spec, const std::string& config,
                        const std::string& networks);

/// What a sweep's points are made of, as one rank reads them: "# nocflow " and the build
/// (nocflow_build: version and commit) on the first line, the spec's text, the machine it
/// resolves to and its network files' digests. Under MPI every rank reads its own; where one's
/// differ from rank 0's, every rank stops before any point runs, and the error names that rank
/// and the builds, or the first line that differs.
std::string sweep_inputs(const SweepSpec& spec, const std::vector<SweepPoint>& points);

/// The build a sweep_inputs text names on its first line: "nocflow 0.1.0 (commit ...)".
std::string inputs_build(const std::string& inputs);

/// The first line where `now` differs from `then` ("line N: 'x' then, 'y' now", the names
/// given), for the --resume and rank refusals; "" when none does.
std::string first_difference(const std::string& then, const std::string& now,
                             const std::string& then_name = "then",
                             const std::string& now_name = "now", int first_line = 1);

/// Whether two spec texts say the same: comments, layout and quoting aside (YAML's parse of
/// each, emitted the same way). A text that does not parse equals only itself.
bool same_yaml(const std::string& a, const std::string& b);

}  // namespace nocflow::sim
