// SPDX-License-Identifier: MIT
#pragma once
// What a PE executes: a straight-line program of steps, produced by lowering a plan (or built by
// hand in tests). Steps run in order; each finishes before the next starts:
//   Compute  busy for `cycles` (MACs on the array, SRAM traffic included by the lowering)
//   Reduce   busy for `cycles` on the adders (partial sums)
//   Send     hand a message of `bytes` to `peer` to the network interface; does not wait for it
//   Recv     wait until the message (`peer` -> this PE, `tag`) has fully arrived
//   Barrier  wait until every PE has reached its barrier with the same `tag`
// Messages are matched by (source, destination, tag); a tag names one transfer.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

namespace nocflow::sim {

enum class StepKind : std::uint8_t { Compute, Reduce, Send, Recv, Barrier };

struct Step {
  StepKind kind = StepKind::Compute;
  int layer = -1;             ///< the layer this step belongs to, for statistics and traces
  int peer = -1;              ///< Send: destination PE; Recv: source PE
  std::int64_t bytes = 0;     ///< Send/Recv: message size
  std::int64_t cycles = 0;    ///< Compute/Reduce: duration
  std::int64_t tag = 0;       ///< Send/Recv: message tag; Barrier: barrier id
  int edge = -1;              ///< Send/Recv/Reduce: the layer edge (or reduction) it serves
};

using Program = std::vector<Step>;

/// What matches a Send to its Recv: (source, destination, tag).
struct MessageKey {
  int src = 0, dst = 0;
  std::int64_t tag = 0;
  bool operator==(const MessageKey& o) const {
    return src == o.src && dst == o.dst && tag == o.tag;
  }
};
struct MessageKeyHash {
  std::size_t operator()(const MessageKey& k) const {
    return std::hash<std::int64_t>()(k.tag * 1000003 + k.src * 65599 + k.dst);
  }
};

/// Per-PE programs plus the names of the layers their steps refer to.
struct ProgramSet {
  std::vector<Program> pe;
  std::vector<std::string> layer_names;
  std::int64_t next_tag = 1;

  explicit ProgramSet(int num_pes = 0) : pe(num_pes) {}
  std::int64_t new_tag() { return next_tag++; }

  void compute(int p, int layer, std::int64_t cycles) { pe[p].push_back({StepKind::Compute, layer, -1, 0, cycles, 0}); }
  void reduce(int p, int layer, std::int64_t cycles, int edge = -1) {
    pe[p].push_back({StepKind::Reduce, layer, -1, 0, cycles, 0, edge});
  }
  void send(int from, int to, int layer, std::int64_t bytes, std::int64_t tag, int edge = -1) {
    pe[from].push_back({StepKind::Send, layer, to, bytes, 0, tag, edge});
  }
  void recv(int at, int from, int layer, std::int64_t bytes, std::int64_t tag, int edge = -1) {
    pe[at].push_back({StepKind::Recv, layer, from, bytes, 0, tag, edge});
  }
  /// A matched pair: Send on `from`, Recv on `to`, one fresh tag.
  void transfer(int from, int to, int layer, std::int64_t bytes) {
    const std::int64_t tag = new_tag();
    send(from, to, layer, bytes, tag);
    recv(to, from, layer, bytes, tag);
  }
  void barrier_all(std::int64_t id) {
    for (auto& prog : pe) prog.push_back({StepKind::Barrier, -1, -1, 0, 0, id, -1});
  }
};

const char* step_name(StepKind k);

/// Human-readable listing of one PE's program (for --dump-programs), one step per line:
/// `send  layer=L  to=PEn  bytes=B  tag=T  edge=E` (recv: `from=PEn`). `edge_names[i]` names
/// Step::edge i (sends, receives and adds of an edge end with `edge=NAME`; none when empty).
void write_program(std::ostream& out, const ProgramSet& set, int pe,
                   const std::vector<std::string>& edge_names = {});

/// The names file of a dump (DIR/names.txt): the layer and edge names some step uses, in the
/// set's numbering (the plan's order), one per line as `layer NAME` or `edge NAME`.
void write_names(std::ostream& out, const ProgramSet& set,
                 const std::vector<std::string>& edge_names);

/// Programs read back from what write_program wrote, with the edge names their steps carry
/// (Step::edge indexes `edge_names`, ProgramSet::layer_names the layers). Both are numbered in
/// the order of DIR/names.txt where it exists (so a replay lists layers and edges as the plan
/// did; names no step uses are dropped), then in order of first appearance, PE by PE.
struct ProgramFiles {
  ProgramSet programs;
  std::vector<std::string> edge_names;
  std::vector<std::string> notes;  ///< what was read and not used (names.txt's unused names)
};

/// Reads DIR/names.txt if present and DIR/pe_0.txt ... DIR/pe_{pes-1}.txt (blank lines and `#`
/// comments skipped; keys in any order) and checks what would otherwise hang or fail a run: every
/// send has exactly one receive on its peer with the same tag and bytes and the other way round, no
/// PE sends to itself, every PE passes the same barriers 1, 2, 3, ... in order, and no PEs wait
/// for each other in a cycle (receives before the sends they wait on). Throws InputError naming
/// the file and line (for a cycle, each of its steps). `check_send`, if given, throws InputError
/// for a message size the NoC cannot send: its message then gets the send's file and line.
ProgramFiles read_programs(const std::string& dir, int pes,
                           const std::function<void(std::int64_t bytes)>& check_send = {});

/// N when `filename` is a program file's name, pe_N.txt (N written without leading zeros);
/// -1 otherwise.
int program_file_pe(const std::string& filename);

}  // namespace nocflow::sim
