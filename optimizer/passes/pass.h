// SPDX-License-Identifier: MIT
#pragma once
// Graph passes. Contract: a pass receives a shape-inferred graph, rewrites it in place, keeps it
// a valid DAG whose outputs compute the same values, and says whether it changed anything. The
// pass manager re-runs shape inference after a pass that changed the graph.
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "optimizer/graph/graph.h"

namespace nocflow::optimizer {

class Pass {
 public:
  virtual ~Pass() = default;
  virtual std::string_view name() const = 0;
  virtual std::string_view description() const = 0;
  /// Returns true if the graph changed.
  virtual bool run(Graph& graph) = 0;
};

/// Moves `from`'s uses and its place among the outputs to `to` (Graph::replace_all_uses), for a
/// pass that found them one value. Where `to` thereby becomes an output it was not, `from` goes
/// and `to`, an operator, takes its name, so that every output keeps its name (an output Dropout
/// of `r`: `r` becomes `logits`); otherwise `from` stays, dead, for DCE.
void forward_value(Graph& g, NodeId from, NodeId to);

/// Passes by name; throws InputError listing the known names for an unknown one.
std::unique_ptr<Pass> make_pass(std::string_view name);
std::vector<std::string> pass_names();
/// The default pipeline, in order: identity, constfold, algebra, cse, dce, bnfold, fuse.
std::vector<std::string> default_pass_names();

// Factories (one file each in optimizer/passes/).
std::unique_ptr<Pass> make_identity_elimination();
std::unique_ptr<Pass> make_constant_folding();
std::unique_ptr<Pass> make_algebra();
std::unique_ptr<Pass> make_cse();
std::unique_ptr<Pass> make_dce();
std::unique_ptr<Pass> make_batchnorm_folding();
std::unique_ptr<Pass> make_fusion();

}  // namespace nocflow::optimizer
