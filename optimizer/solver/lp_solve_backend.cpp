// SPDX-License-Identifier: MIT
// The lp_solve backend: the only file that includes lp_lib.h (it defines hundreds of macros).
#include <lpsolve/lp_lib.h>

#include <cctype>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>

#include "noc/base/error.h"
#include "optimizer/solver/lp_model.h"

namespace nocflow::optimizer {
namespace {

struct LpDeleter {
  void operator()(lprec* lp) const { delete_lp(lp); }
};
using LpHandle = std::unique_ptr<lprec, LpDeleter>;

/// lp_solve's own timeout is not checked inside long simplex runs; this abort callback, polled
/// throughout, enforces the wall-clock limit.
int __WINAPI past_deadline(lprec*, void* handle) {
  const auto* end = static_cast<const std::chrono::steady_clock::time_point*>(handle);
  return std::chrono::steady_clock::now() > *end ? TRUE : FALSE;
}

/// lp_solve's model writers hand the text over piece by piece; this keeps it.
int __WINAPI append_text(void* handle, char* text) {
  *static_cast<std::string*>(handle) += text;
  return TRUE;
}

/// Writes the model to `file` (FILE.mps, any case: free MPS; else LP format). lp_solve's own
/// file writers do not report a failed write (a full disk), so the text is written here.
void export_model(lprec* lp, const std::string& file) {
  bool mps = file.size() >= 4;
  for (std::size_t i = 0; mps && i < 4; ++i)
    mps = std::tolower(static_cast<unsigned char>(file[file.size() - 4 + i])) == ".mps"[i];
  const std::string what = std::string(mps ? "MPS" : "LP") + " model";
  std::string text;
  if (!(mps ? MPS_writefileex(lp, MPSFREE, &text, append_text)
            : write_lpex(lp, &text, append_text)))
    throw InputError(file + ": cannot write the " + what);
  errno = 0;
  std::ofstream out(file, std::ios::binary);
  out << text;
  out.close();
  if (!out)
    throw InputError(file + ": cannot write the " + what +
                     (errno ? ": " + std::string(std::strerror(errno)) : ""));
}

/// Records the objective of the first optimal LP relaxation (the root of branch and bound).
void __WINAPI on_message(lprec* lp, void* handle, int message) {
  auto* s = static_cast<LpSolution*>(handle);
  if (message == MSG_LPOPTIMAL && !s->has_root_relaxation) {
    s->root_relaxation = get_working_objective(lp);
    s->has_root_relaxation = true;
  }
}

int sense_code(LpSense s) {
  switch (s) {
    case LpSense::Le: return LE;
    case LpSense::Ge: return GE;
    case LpSense::Eq: return EQ;
  }
  return EQ;
}

}  // namespace

LpSolution solve_lp(const LpModel& model, const LpOptions& o) {
  const auto t0 = std::chrono::steady_clock::now();
  const int n = static_cast<int>(model.vars().size());
  const int m = static_cast<int>(model.rows().size());
  // Column by column: lp_solve stores columns, and adding rows one at a time moves memory
  // quadratically on large models.
  LpHandle lp(make_lp(m, 0));
  if (!lp) throw std::runtime_error("lp_solve: cannot create a model");
  set_verbose(lp.get(), NEUTRAL);
  std::vector<std::vector<std::pair<int, double>>> cols_of(static_cast<std::size_t>(n));
  for (int r = 0; r < m; ++r) {
    const LpRow& row = model.rows()[static_cast<std::size_t>(r)];
    set_constr_type(lp.get(), r + 1, sense_code(row.sense));
    set_rh(lp.get(), r + 1, row.rhs);
    for (std::size_t k = 0; k < row.vars.size(); ++k)
      cols_of[static_cast<std::size_t>(row.vars[k])].push_back({r + 1, row.coefs[k]});
  }
  std::vector<int> rownos;
  std::vector<double> vals;
  resize_lp(lp.get(), m, n);
  for (int j = 0; j < n; ++j) {
    rownos.assign(1, 0);
    vals.assign(1, model.vars()[static_cast<std::size_t>(j)].objective);
    for (const auto& [r, v] : cols_of[static_cast<std::size_t>(j)]) rownos.push_back(r), vals.push_back(v);
    add_columnex(lp.get(), static_cast<int>(rownos.size()), vals.data(), rownos.data());
    cols_of[static_cast<std::size_t>(j)].clear();
    cols_of[static_cast<std::size_t>(j)].shrink_to_fit();
  }
  const bool names = !o.export_lp.empty();
  for (int j = 0; j < n; ++j) {
    const LpVar& v = model.vars()[static_cast<std::size_t>(j)];
    set_bounds(lp.get(), j + 1, v.lower, v.upper);
    if (v.integer && !o.relax) set_int(lp.get(), j + 1, TRUE);
    if (names) set_col_name(lp.get(), j + 1, const_cast<char*>(v.name.c_str()));
  }
  if (names) {
    for (std::size_t i = 0; i < model.rows().size(); ++i)
      set_row_name(lp.get(), static_cast<int>(i) + 1, const_cast<char*>(model.rows()[i].name.c_str()));
    export_model(lp.get(), o.export_lp);
  }
  set_minim(lp.get());
  set_timeout(lp.get(), static_cast<long>(std::ceil(std::max(1.0, o.time_limit_s))));
  LpSolution s;
  put_msgfunc(lp.get(), on_message, &s, MSG_LPOPTIMAL);
  const auto deadline = t0 + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                 std::chrono::duration<double>(o.time_limit_s));
  put_abortfunc(lp.get(), past_deadline, const_cast<std::chrono::steady_clock::time_point*>(&deadline));
  const int ret = solve(lp.get());
  switch (ret) {
    case OPTIMAL: case PRESOLVED: s.status = LpStatus::Optimal; break;
    case SUBOPTIMAL: s.status = LpStatus::Suboptimal; break;
    case INFEASIBLE: s.status = LpStatus::Infeasible; break;
    default:  // time limit or abort: an incumbent, if any, is a feasible solution
      s.status = get_solutioncount(lp.get()) > 0 ? LpStatus::Suboptimal : LpStatus::NoSolution;
      break;
  }
  if (s.status == LpStatus::Optimal || s.status == LpStatus::Suboptimal) {
    s.objective = get_objective(lp.get());
    s.values.resize(static_cast<std::size_t>(n));
    get_variables(lp.get(), s.values.data());
  }
  s.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return s;
}

}  // namespace nocflow::optimizer
