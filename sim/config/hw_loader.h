// SPDX-License-Identifier: MIT
#pragma once
// The one place where hardware YAML is read. Everything after this works on HwSpec.
//
// Order of precedence for each parameter: --set override > key in the file > router preset
// (router.* keys only) > declared default. Any error (missing file, YAML syntax, unknown key,
// wrong type, out of range, inconsistent keys) throws InputError with one message naming
// file:line:col (or the --set argument) and the key path.
#include <optional>
#include <string>
#include <vector>

#include "sim/config/hw_spec.h"

namespace nocflow::sim {

/// Load `file` and apply overrides of the form "key.path=value" (the --set arguments).
/// An empty `file` means "declared defaults only".
HwSpec load_hw_config(const std::string& file, const std::vector<std::string>& overrides = {});

/// Every parameter with its resolved value, as YAML that load_hw_config reads back unchanged.
std::string resolved_yaml(const HwSpec& spec);

/// The Markdown config reference (configs/README.md).
std::string reference_markdown();

/// One line: "mesh 8x8 (64 PEs), router lookahead (2-cycle pipeline): 4 VCs x 8 flits, xy,
/// 32 B/flit, link 1 cycle, NI 8 channels, 1.0 GHz, 256 MACs/cycle/PE (16x16 array),
/// 1 MiB SRAM/PE" (the pipeline as the stage keys make it, whatever the preset)
std::string one_line_summary(const HwSpec& spec);
/// Its start: "mesh 8x8 (64 PEs)", "crossbar 16 ports (16 PEs)".
std::string topology_summary(const HwSpec& spec);
/// The same without the topology: "router lookahead ... SRAM/PE" (the routing is left out when
/// `with_routing` is false, as a crossbar's is).
std::string components_summary(const HwSpec& spec, bool with_routing = true);
/// Notes on a config that loads but may not mean what it says: a file that sets no key, an
/// array shape whose MACs differ from pe.macs_per_cycle. Printed by config --check, optimize,
/// simulate, traffic and validate.
std::vector<std::string> hw_notes(const HwSpec& spec);

}  // namespace nocflow::sim
