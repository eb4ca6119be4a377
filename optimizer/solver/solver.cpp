// SPDX-License-Identifier: MIT
#include "optimizer/solver/solver.h"

#include "noc/base/error.h"
#include "noc/base/names.h"

namespace nocflow::optimizer {

std::vector<std::string> solver_names() {
  return {"greedy", "greedy-layout", "dp", "dp-local", "ilp"};
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
