// SPDX-License-Identifier: MIT
#pragma once
// A solver-neutral mixed-integer linear model (variables, constraints, objective to minimise)
// and the interface of the backend that solves it (lp_solve_backend.cpp, the one file that
// includes lp_solve's header).
#include <string>
#include <vector>

namespace nocflow::optimizer {

struct LpVar {
  std::string name;
  double lower = 0;
  double upper = 1;
  double objective = 0;
  bool integer = false;
};

enum class LpSense { Le, Ge, Eq };

struct LpRow {
  std::string name;
  std::vector<int> vars;
  std::vector<double> coefs;
  LpSense sense = LpSense::Eq;
  double rhs = 0;
};

class LpModel {
 public:
  int add_var(LpVar v) {
    vars_.push_back(std::move(v));
    return static_cast<int>(vars_.size() - 1);
  }
  void add_row(LpRow r) { rows_.push_back(std::move(r)); }
  const std::vector<LpVar>& vars() const { return vars_; }
  const std::vector<LpRow>& rows() const { return rows_; }

 private:
  std::vector<LpVar> vars_;
  std::vector<LpRow> rows_;
};

enum class LpStatus { Optimal, Suboptimal, Infeasible, NoSolution, Error };

struct LpSolution {
  LpStatus status = LpStatus::Error;
  double objective = 0;
  std::vector<double> values;  ///< per variable
  double seconds = 0;
  /// Objective of the first LP relaxation lp_solve solved (the branch-and-bound root, before
  /// any branching); NaN if it reported none.
  double root_relaxation = 0;
  bool has_root_relaxation = false;
};

struct LpOptions {
  double time_limit_s = 60;
  bool relax = false;        ///< treat every integer variable as continuous
  std::string export_lp;     ///< write the model before solving (a .mps file: free MPS, else LP
                             ///< format); "" none
};

/// Solves with lp_solve. Throws InputError if the export file cannot be written.
LpSolution solve_lp(const LpModel& model, const LpOptions& options);

}  // namespace nocflow::optimizer
