// SPDX-License-Identifier: MIT
#pragma once
// Runs a list of passes in order, round after round, until a whole round changes nothing (a
// fixpoint), recording the node count before and after every pass.
#include <string>
#include <vector>

#include "optimizer/passes/pass.h"

namespace nocflow::optimizer {

struct PassStat {
  int round = 0;
  std::string pass;
  std::size_t nodes_before = 0;
  std::size_t nodes_after = 0;
  bool changed = false;
  double millis = 0;
};

/// "default" → default_pass_names(); "none" or "" → no passes; else a comma-separated list.
/// Throws InputError for an unknown pass name, or "default" or "none" in a list.
std::vector<std::string> parse_pass_list(const std::string& spec);
/// parse_pass_list for the --passes option: its errors start "--passes: ".
std::vector<std::string> parse_passes_option(const std::string& spec);
/// `spec` written one way, as plans record it: "default", "none", or its passes joined by commas
/// ("dce,cse" for " dce, cse"). "default" stays a word: with --train it leaves bnfold out, where a
/// list naming bnfold is refused. Throws as parse_pass_list.
std::string canonical_pass_list(const std::string& spec);

class PassManager {
 public:
  explicit PassManager(const std::vector<std::string>& names, int max_rounds = 16);
  /// Runs to a fixpoint; throws std::logic_error if `max_rounds` rounds still change the graph.
  std::vector<PassStat> run(Graph& graph);

 private:
  std::vector<std::unique_ptr<Pass>> passes_;
  int max_rounds_;
};

struct TrainingOptions;

/// The passes of `spec` ("default", "none" or a list) on a forward graph, to a fixpoint. With
/// `train`, the training graph instead: the passes but fuse, autodiff (optimizer/passes/
/// autodiff.h), then fuse if listed. bnfold is inference only: "default" leaves it out, a list
/// naming it is refused. Autodiff appears in the stats as pass "autodiff". A training graph read
/// back from a file (its name ends in ".train") gets the passes as a training graph would, and
/// `train` is refused for it.
std::vector<PassStat> run_passes(Graph& graph, const std::string& spec,
                                 const TrainingOptions* train = nullptr);

/// A table of the stats: round, pass, nodes before → after, removed, time.
std::string format_pass_stats(const std::vector<PassStat>& stats);

}  // namespace nocflow::optimizer
