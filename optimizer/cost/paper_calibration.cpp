// SPDX-License-Identifier: MIT
#include "optimizer/cost/paper_calibration.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "noc/base/error.h"
#include "noc/base/names.h"
#include "optimizer/io/yaml_file.h"

namespace nocflow::optimizer {

PaperCalibration fit_paper_calibration(const std::vector<CalibrationPoint>& points) {
  // Weighted least squares for y = a x + b with weights 1 / y^2 (relative error).
  double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  int n = 0;
  for (const auto& p : points) {
    if (!p.usable()) continue;
    const double w = 1.0 / (p.simulated_cycles * p.simulated_cycles);
    sw += w;
    sx += w * p.volume_hops;
    sy += w * p.simulated_cycles;
    sxx += w * p.volume_hops * p.volume_hops;
    sxy += w * p.volume_hops * p.simulated_cycles;
    ++n;
  }
  if (n < 2)
    throw InputError("calibration needs at least two microbenchmarks that the paper model gives a "
                     "volume and the simulator timed (not NONE, HALO, HALO_2D or GROUP_GATHER, nor "
                     "a case skipped for having no choice pair); got " + std::to_string(n));
  const double det = sw * sxx - sx * sx;
  double a = det != 0 ? (sw * sxy - sx * sy) / det : 0;
  double b = det != 0 ? (sy - a * sx) / sw : 0;
  if (b < 0 || a <= 0) {  // no negative latency: fit the slope alone
    b = 0;
    a = sxy / sxx;
  }
  if (a <= 0) throw InputError("calibration: the microbenchmarks give no positive bandwidth");
  return {1.0 / a, b};
}

namespace {

/// "file:line:col: " of a node.
std::string at(const std::string& file, const YAML::Node& n) {
  return file + ":" + std::to_string(n.Mark().line + 1) + ":" +
         std::to_string(n.Mark().column + 1) + ": ";
}

/// Every key of the map `n` is one of `known`.
void check_keys(const std::string& file, const YAML::Node& n, const std::string& prefix,
                const std::vector<std::string>& known) {
  for (const auto& kv : n) {
    const std::string key = kv.first.as<std::string>();
    if (std::find(known.begin(), known.end(), key) == known.end())
      throw InputError(at(file, kv.first) + prefix + unknown_name_message("key", key, known));
  }
}

}  // namespace

PaperCalibration read_paper_calibration(const std::string& file) {
  const YAML::Node root = load_yaml_file(file, "calibration file");
  if (!root.IsMap())
    throw InputError(file + ": a calibration file is a map with keys paper, linkload, fitted_for");
  check_keys(file, root, "",
             {"paper", "linkload", "fitted_for"});  // fitted_for: sim::calibration_notes
  const YAML::Node paper = root["paper"];
  if (!paper || !paper.IsMap()) throw InputError(file + ": expected a 'paper' section");
  check_keys(file, paper, "paper: ", {"bnoc_bytes_per_cycle", "latency_cycles"});
  auto number = [&](const char* key, double min, const char* rule) {
    const YAML::Node n = paper[key];
    if (!n) throw InputError(at(file, paper) + "paper." + key + ": missing (" + rule + ")");
    double v = 0;
    if (!n.IsScalar() || !YAML::convert<double>::decode(n, v) || !std::isfinite(v) || v < min)
      throw InputError(at(file, n) + "paper." + key + ": expected " + rule);
    return v;
  };
  const double bnoc = number("bnoc_bytes_per_cycle", 1e-9, "a number >= 1e-9");
  const double latency = number("latency_cycles", 0, "a number >= 0");
  if (latency > 1e9)  // a fitted latency is tens of cycles; this much is a broken file
    throw InputError(at(file, paper["latency_cycles"]) +
                     "paper.latency_cycles: expected at most 1e9");
  return {bnoc, latency};
}

std::string paper_calibration_yaml(const PaperCalibration& c, const std::string& comment) {
  std::ostringstream out;
  out.precision(10);
  out << "# nocflow paper-model calibration: T = V * h_avg / bnoc + latency (cycles)\n"
      << "# load with: nocflow optimize --calibration FILE\n";
  std::istringstream lines(comment);
  for (std::string line; std::getline(lines, line);) out << "# " << line << "\n";
  out << "paper:\n  bnoc_bytes_per_cycle: " << c.bnoc_bytes_per_cycle << "\n  latency_cycles: " << c.latency_cycles
      << "\n";
  return out.str();
}

}  // namespace nocflow::optimizer

namespace nocflow::optimizer {

std::string linkload_calibration_yaml(const std::map<std::string, double>& router_slowdown) {
  std::ostringstream out;
  out.precision(10);
  out << "linkload:\n"
         "  # router contention s per machine (optimizer/README.md, \"Router contention\"): where a\n"
         "  # router-to-router link is busier than every PE channel (or as busy, shared by >= 2\n"
         "  # sources), an edge takes\n"
         "  # max(longest route + busiest channel, midpoint route + L_R * (1 + s * U^2 * m / (m + B))),\n"
         "  # U = mean router-link load / busiest (L_R), m the mean message and B the VC buffer in flits\n"
      << "  router_contention:" << (router_slowdown.empty() ? " {}" : "") << "\n";
  for (const auto& [topology, s] : router_slowdown) out << "    \"" << topology << "\": " << s << "\n";
  return out.str();
}

std::optional<double> read_router_slowdown(const std::string& file,
                                           const noc::TopologySpec& topology,
                                           std::string* missing) {
  const YAML::Node root = load_yaml_file(file, "calibration file");
  const YAML::Node linkload = root["linkload"];
  if (!linkload) return std::nullopt;
  if (!linkload.IsMap())
    throw InputError(at(file, linkload) + "linkload: expected a map with router_contention");
  check_keys(file, linkload, "linkload: ", {"router_contention", "router_slowdown"});
  const YAML::Node table = linkload["router_contention"];
  if (!table && linkload["router_slowdown"])
    throw InputError(file + ": linkload.router_slowdown is the earlier form of router contention (1 + s * m / (m + B), "
                            "no overlap), whose s does not carry over; run nocflow validate --calibrate again");
  if (!table || !table.IsMap()) throw InputError(file + ": linkload.router_contention: expected a map of machine: number");
  const std::string name = topology.name();
  std::string known;
  for (const auto& entry : table) known += (known.empty() ? "" : ", ") + entry.first.as<std::string>();
  const YAML::Node n = table[name];
  if (!n) {
    const std::string why = file + ": linkload.router_contention has no entry for '" + name +
                            "' (it has: " + (known.empty() ? "none" : known) +
                            "); run nocflow validate --calibrate on this machine";
    if (!missing) throw InputError(why);
    *missing = why;
    return std::nullopt;
  }
  double v = 0;
  if (!n.IsScalar() || !YAML::convert<double>::decode(n, v) || !std::isfinite(v) || v < 0)
    throw InputError(at(file, n) + "linkload.router_contention." + name +
                     ": expected a number >= 0");
  return v;
}

void apply_calibration_file(const std::string& file, HwDesc& hw) {
  read_paper_calibration(file).apply(hw);
  hw.router_slowdown_missing.clear();
  hw.router_slowdown = read_router_slowdown(file, hw.topology, &hw.router_slowdown_missing);
}

}  // namespace nocflow::optimizer
