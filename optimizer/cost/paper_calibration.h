// SPDX-License-Identifier: MIT
#pragma once
// The paper model's free parameters, fitted to cycle-level microbenchmarks by
// `nocflow validate --calibrate` and loaded by `nocflow optimize --calibration FILE`:
//   T = V * h_avg / B_NoC + L   (L only when V > 0)
// The file is YAML: {paper: {bnoc_bytes_per_cycle: B, latency_cycles: L}} plus what it was fitted on,
// and linkload's router contention per machine: {linkload: {router_contention: {"mesh 8x8": s, ...}}}.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "optimizer/cost/hw_desc.h"

namespace nocflow::optimizer {

struct PaperCalibration {
  double bnoc_bytes_per_cycle = 0;
  double latency_cycles = 0;

  void apply(HwDesc& hw) const {
    hw.bnoc_bytes_per_cycle = bnoc_bytes_per_cycle;
    hw.paper_latency_cycles = latency_cycles;
  }
};

/// One microbenchmark: x = V * h_avg (bytes), y = simulated cycles.
struct CalibrationPoint {
  double volume_hops = 0;
  double simulated_cycles = 0;
  /// Whether the fit uses it: paper gives it a volume and the simulator timed it.
  bool usable() const { return volume_hops > 0 && simulated_cycles > 0; }
};

/// Minimises the squared relative error sum((x / B + L - y) / y)^2 over the points with x, y > 0,
/// with B > 0 and L >= 0 (L = 0 when the free fit would make it negative). Throws InputError
/// with fewer than two usable points.
PaperCalibration fit_paper_calibration(const std::vector<CalibrationPoint>& points);

/// Throws InputError naming the file and key for a missing file, bad YAML or bad values.
PaperCalibration read_paper_calibration(const std::string& file);
std::string paper_calibration_yaml(const PaperCalibration& c, const std::string& comment);

/// The linkload section: router contention s by topology name.
std::string linkload_calibration_yaml(const std::map<std::string, double>& router_slowdown);
/// The router contention s `file` gives for `topology`; nullopt when the file has no linkload
/// section. Throws InputError when a value is not >= 0, the file has the earlier
/// `router_slowdown` form, or the section lacks that topology (with `missing`: sets it to the
/// message instead and returns nullopt).
std::optional<double> read_router_slowdown(const std::string& file,
                                           const noc::TopologySpec& topology,
                                           std::string* missing = nullptr);
/// Both: the paper model's B_NoC and latency, and linkload's router contention when the file has
/// a linkload section (`optimize --calibration`, `validate --rank --calibration`). A file
/// without an entry for this machine sets hw.router_slowdown_missing: the linkload model then
/// refuses to run. Unknown keys are errors with their line.
void apply_calibration_file(const std::string& file, HwDesc& hw);

}  // namespace nocflow::optimizer
