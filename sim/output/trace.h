// SPDX-License-Identifier: MIT
#pragma once
// Traces of a run. Chrome trace JSON (opens in https://ui.perfetto.dev or chrome://tracing):
// process "PEs" with a track per PE carrying compute / reduce / send / recv / barrier spans,
// and process "links" with a flit counter per link per sampling window. VCD (opens in GTKWave):
// one integer signal per PE holding its state, one per link with flits per window.
#include <ostream>
#include <string>
#include <vector>

#include "sim/system/system.h"

namespace nocflow::sim {

/// Every span becomes one complete event; `clock_ghz` converts cycles to microseconds.
/// Returns the number of span events written (equals run.spans.size()).
std::size_t write_chrome_trace(std::ostream& out, const RunResult& run,
                               const std::vector<std::string>& layer_names, double clock_ghz,
                               noc::Cycle window);

/// PE states: 0 idle, 1 compute, 2 reduce, 3 send, 4 recv, 5 barrier; links: flits per
/// `window` cycles. Times in picoseconds at `clock_ghz` (as trace.json's microseconds), the
/// header's comments say both.
void write_vcd(std::ostream& out, const RunResult& run, int num_pes, noc::Cycle window,
               double clock_ghz);

/// The traces asked for (`chrome`: trace.json, `vcd`: trace.vcd) into folder `out`, with a note
/// on the console when trace.json passes 1 GiB; their names, each led by ", ".
std::string write_traces(const std::string& out, bool chrome, bool vcd, const RunResult& run,
                         const std::vector<std::string>& layer_names, int num_pes, double clock_ghz,
                         noc::Cycle window);

}  // namespace nocflow::sim
