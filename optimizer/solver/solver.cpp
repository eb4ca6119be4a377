// SPDX-License-Identifier: MIT
#include "optimizer/solver/solver.h"

#include "noc/base/error.h"
#include "noc/base/format.h"
#include "noc/base/names.h"

namespace nocflow::optimizer {

std::vector<std::string> solver_names() {
  return {"greedy", "greedy-layout", "dp", "dp-local", "ilp"};
}

SolveResult stopped_at_cutoff(const std::string& solver, double lower, int rounds,
                              const SolveOptions& o, std::chrono::steady_clock::time_point t0) {
  SolveResult r;
  r.solver = solver;
  r.above_cutoff = true;
  r.cost = lower;
  r.notes.push_back("no assignment costs under " + fixed(lower, 1) + " cycles, above the cutoff " +
                    fixed(o.cutoff, 1) + ": stopped after " + std::to_string(rounds) +
                    " rounds of bound pruning");
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

std::unique_ptr<Solver> make_solver(const std::string& name) {
  if (name == "greedy") return make_greedy_solver(false);
  if (name == "greedy-layout") return make_greedy_solver(true);
  if (name == "dp") return make_dp_solver();
  if (name == "dp-local") return make_local_dp_solver();
  if (name == "ilp") return make_ilp_solver();
  throw InputError(unknown_name_message("solver", name, solver_names()));
}

}  // namespace nocflow::optimizer
