// SPDX-License-Identifier: MIT
#pragma once
// The whole hardware description: clock, data width, NoC, PE and energy. One HwSpec is loaded
// per run by sim/config/hw_loader and is read-only afterwards.
#include <cstdint>
#include <string>

#include "noc/spec.h"

namespace nocflow::sim {

struct ClockSpec {
  double frequency_ghz = 0;
};

struct DataSpec {
  int width_bytes = 0;  ///< bytes per activation/weight element
  /// An ONNX model's floating-point tensors: "file" (their data type's size) or "width"
  /// (width_bytes each).
  std::string onnx_floats;
  /// What load_network gives an ONNX model's floats: width_bytes under "width", else 0.
  int onnx_float_bytes() const { return onnx_floats == "width" ? width_bytes : 0; }
};

struct PeSpec {
  std::int64_t macs_per_cycle = 0;
  std::int64_t adds_per_cycle = 0;
  std::int64_t sram_bytes = 0;
  std::int64_t sram_bytes_per_cycle = 0;
  int array_rows = 0;  ///< 0: no array shape, MAC rate only
  int array_cols = 0;
};

struct EnergySpec {
  double mac_pj = 0;
  double sram_pj_per_byte = 0;
  double hop_pj_per_byte = 0;
};

/// How plans become messages (sim/lower): the collective schedules.
struct LoweringSpec {
  std::string all_gather = "direct";  ///< "direct", "ring" or "auto" (lowering.all_gather)
};

/// Which partition choices the optimizer enumerates (optimizer/partition/choice.h).
struct PartitionSpec {
  std::string splits = "divisors";  ///< "divisors" or "balanced" (partition.splits)
};

struct RunSpec {
  std::int64_t watchdog_cycles = 0;
};

struct HwSpec {
  std::string name;
  /// The config file when it sets no key (empty, or comments only; hw_notes says so).
  std::string file_setting_no_key;
  ClockSpec clock;
  DataSpec data;
  noc::TopologySpec topology;
  noc::RouterSpec router;
  noc::LinkSpec link;
  noc::NiSpec ni;
  PeSpec pe;
  EnergySpec energy;
  LoweringSpec lowering;
  PartitionSpec partition;
  RunSpec run;

  noc::NocSpec noc() const { return {topology, router, link, ni, run.watchdog_cycles}; }
};

}  // namespace nocflow::sim
