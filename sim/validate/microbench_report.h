// SPDX-License-Identifier: MIT
#pragma once
// What `nocflow validate` writes and prints of its microbenchmarks (microbench.h): a row of
// validation.csv per case, summary.csv and the error tables, the paper fit (calibration.yaml)
// and each case's sends (messages/). sim/README.md documents the files' columns.
#include <map>
#include <ostream>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "sim/output/output_file.h"
#include "sim/validate/microbench.h"

namespace nocflow::sim {

/// A case is near saturation when its busiest link carried at least this many flits per cycle
/// over the redistribution's span (1 is a link's capacity).
inline constexpr double kNearSaturation = 0.8;

/// DIR/validation.csv as the cases come in, and their errors tallied for the summary.
class ValidationReport {
 public:
  explicit ValidationReport(const std::string& dir);
  /// A case run (a row, and its errors tallied) or skipped (counted for every model).
  void add(const BenchResult& r);
  /// Writes the rows added since the last flush to validation.csv at once (an interrupted run
  /// keeps whole machines' rows, never part of one's).
  void flush() {
    csv_ << rows_.str() << std::flush;
    rows_.str("");
  }
  /// Closes validation.csv, writes DIR/summary.csv and prints each model's error per type for
  /// `types`: all cases and below saturation, where the simulated time goes, what bounds the edge.
  void finish(std::ostream& out, const std::vector<std::string>& types);
  /// The cases run, in the order added.
  const std::vector<BenchResult>& results() const { return results_; }

 private:
  /// linkload's and calibrated linkload's verdict against kTargetMape and kTargetMax per type,
  /// and the case of the largest error.
  void print_target(std::ostream& out, const std::vector<std::string>& types);

  std::string dir_;
  OutputFile csv_;
  std::ostringstream rows_;  ///< rows not yet written
  std::map<std::pair<std::string, std::string>, ErrorStats> by_type_;          ///< (type, model)
  std::map<std::tuple<std::string, std::string, bool>, ErrorStats> by_bound_;  ///< (type, model, router-bound)
  DecompositionSummary decomposition_;                                         ///< below saturation
  std::vector<BenchResult> results_;
};

/// --calibrate: fits paper's B_NoC and latency to `results` (run on `machines`' topologies with
/// the routers and links of `base`, loaded from `hw_file`), writes DIR/calibration.yaml with each
/// machine's router contention `slowdowns` and prints paper's error per type before and after.
void write_calibration(const std::string& dir, const std::string& hw_file, const HwSpec& base,
                       const std::vector<std::string>& types, const std::vector<BenchResult>& results,
                       const std::map<std::string, double>& slowdowns, std::ostream& out);

/// --dump-messages: DIR/messages/<topology>_<type>_<bytes>.txt, the case's sends as a `traffic
/// --messages` file, and DIR/messages/<topology>.yaml, the machine `hw` it ran on.
void write_messages(const std::string& dir, const HwSpec& hw, const BenchResult& r);

}  // namespace nocflow::sim
