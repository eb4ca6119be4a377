// SPDX-License-Identifier: MIT
#pragma once
// A sweep's results files: results.csv (one row per point, in point order) and each rank's
// results.partial-R.csv (rows appended as its points finish), what --resume reads of them, and
// rank 0's writing of the rows every rank gathered to it.
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "sim/sweep/spec.h"

namespace nocflow::sim {

/// Fields as one CSV line (quoted where they need it), and back.
std::string csv_line(const std::vector<std::string>& fields);
std::vector<std::string> parse_csv_line(const std::string& line);

/// results.csv's first line: the point, the spec's axes, then sweep_result_columns().
std::string results_header(const SweepSpec& spec);

/// Rank R's partial file's name, and whether a file is one.
std::string partial_name(int rank);
bool is_partial_file(const std::filesystem::path& file);

/// Rows already in `dir` (results.csv and partial files) with a status that needs no rerun,
/// by point key. A file whose header differs from this spec's is an error.
std::map<std::string, std::string> finished_rows(const std::filesystem::path& dir,
                                                 const std::string& expected_header);

/// Where a rank's gathered text (its new rows, a line each) has its error, after a '!' at a
/// line's start ('I' or 'C', then the message), or npos.
std::size_t error_at(const std::string& text);

/// Rank 0: `out`/results.csv, the rows `finished` before and every rank's new ones (`all`,
/// their errors left out), in point order; the partial files go, and a line says so with the
/// `seconds` the sweep took. Returns how many points failed.
int write_results(const SweepSpec& spec, const std::vector<SweepPoint>& points,
                  const std::map<std::string, std::string>& finished,
                  const std::vector<std::string>& all, const std::string& head,
                  const std::string& out, double seconds);

}  // namespace nocflow::sim
