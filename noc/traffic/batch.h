// SPDX-License-Identifier: MIT
#pragma once
// A batch of messages replayed on the NoC: the traffic of one redistribution (or any list of
// transfers) without the PEs around it, to measure what an analytic formula predicts for it.
//
// Each message is queued at its source NI at its start cycle, in list order, and cut into
// flits and packets by cut_message (network.h), as the system's message layer cuts them:
// ⌈bytes / link width⌉ flits (at least one), packets of at most ni.max_packet_flits. A message
// is delivered the cycle its last tail reaches the destination's reassembly queue and usable
// the cycle after, so the batch takes (last delivery + 1 − first start) cycles: the figure
// `nocflow simulate` and `nocflow validate` report for an edge.
//
// Message files: one message per line, `src dst bytes [start_cycle]` (nodes numbered as in
// links.csv; start 0 when omitted); blank lines and text after '#' are ignored.
#include <cstdint>
#include <istream>
#include <string>
#include <vector>

#include "noc/network/network.h"
#include "noc/traffic/traffic.h"

namespace nocflow::noc {

struct BatchMessage {
  int src = 0;
  int dst = 0;
  std::int64_t bytes = 0;
  Cycle start = 0;
};

/// Parses a message file. Throws InputError naming `name` and the line for anything malformed:
/// a missing or non-numeric field, a node outside [0, nodes), a message to its own source (it
/// never enters the NoC), bytes < 1, a negative start, trailing fields; and for a file with no
/// message.
/// With `spec`, also a message the NI could never send (cut_message: larger than the source
/// queue). With `machine`, a comment line `# machine: NAME` (validate --dump-messages writes the
/// topology it ran on, e.g. `mesh 4x4`) sets *machine to NAME; left as it was without one.
std::vector<BatchMessage> read_messages(std::istream& in, const std::string& name, int nodes,
                                        const NocSpec* spec = nullptr, std::string* machine = nullptr);

struct BatchResult {
  Cycle cycles = 0;                 ///< first start to the cycle after the last delivery
  std::vector<Cycle> delivered;     ///< per message: the cycle its last tail arrived
  std::vector<std::int64_t> flits;  ///< per message
  std::int64_t packets = 0;
  std::int64_t router_steps = 0;  ///< router evaluations done (idle ones skipped)
  std::vector<LinkLoad> links;    ///< flits per link; utilisation over `cycles`
};

/// Replays `messages` on `net` (reset first) until every one is delivered and the network has
/// drained; checks conservation (every flit ejected once, credits back). `advance` runs the
/// network to a cycle, as in run_traffic.
BatchResult run_batch(Network& net, const std::vector<BatchMessage>& messages,
                      const Advance& advance);

}  // namespace nocflow::noc
