// SPDX-License-Identifier: MIT
#include "sim/system/program.h"

namespace nocflow::sim {

const char* step_name(StepKind k) {
  switch (k) {
    case StepKind::Compute: return "compute";
    case StepKind::Reduce: return "reduce";
    case StepKind::Send: return "send";
    case StepKind::Recv: return "recv";
    case StepKind::Barrier: return "barrier";
  }
  return "?";
}

void write_program(std::ostream& out, const ProgramSet& set, int pe,
                   const std::vector<std::string>& edge_names) {
  out << "# PE " << pe << ": " << set.pe[pe].size() << " steps\n";
  for (const Step& s : set.pe[pe]) {
    out << step_name(s.kind);
    if (s.layer >= 0 && s.layer < static_cast<int>(set.layer_names.size()))
      out << "  layer=" << set.layer_names[s.layer];
    switch (s.kind) {
      case StepKind::Compute:
      case StepKind::Reduce: out << "  cycles=" << s.cycles; break;
      case StepKind::Send: out << "  to=PE" << s.peer << "  bytes=" << s.bytes << "  tag=" << s.tag; break;
      case StepKind::Recv: out << "  from=PE" << s.peer << "  bytes=" << s.bytes << "  tag=" << s.tag; break;
      case StepKind::Barrier: out << "  id=" << s.tag; break;
    }
    if (s.edge >= 0 && s.edge < static_cast<int>(edge_names.size()))
      out << "  edge=" << edge_names[s.edge];
    out << "\n";
  }
}

}  // namespace nocflow::sim
