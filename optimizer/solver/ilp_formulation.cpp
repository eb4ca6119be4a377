// SPDX-License-Identifier: MIT
#include "optimizer/solver/ilp_formulation.h"

#include "noc/base/error.h"
#include "noc/base/names.h"

namespace nocflow::optimizer {

std::vector<std::string> formulation_names() { return {"flow", "mccormick"}; }

IlpModel build_ilp(const Problem& p, const std::string& formulation,
                   const std::vector<std::vector<int>>& labels) {
  const bool flow = formulation == "flow";
  if (!flow && formulation != "mccormick")
    throw InputError(unknown_name_message("ILP formulation", formulation, formulation_names()));
  auto label = [&](int l, std::size_t i) {
    return std::to_string(labels.empty() ? static_cast<int>(i)
                                         : labels[static_cast<std::size_t>(l)][i]);
  };
  IlpModel m;
  LpModel& lp = m.lp;
  m.x.resize(static_cast<std::size_t>(p.num_layers()));
  for (int l = 0; l < p.num_layers(); ++l) {
    LpRow one{"one_" + std::to_string(l), {}, {}, LpSense::Eq, 1};
    for (int i = 0; i < p.num_choices(l); ++i) {
      const int x =
          lp.add_var({"x_" + std::to_string(l) + "_" + label(l, static_cast<std::size_t>(i)), 0, 1,
                      p.node[static_cast<std::size_t>(l)][static_cast<std::size_t>(i)], true});
      m.x[static_cast<std::size_t>(l)].push_back(x);
      one.vars.push_back(x);
      one.coefs.push_back(1);
    }
    lp.add_row(std::move(one));
    if (!flow && !p.pes.empty() && p.max_pes > 0) {
      LpRow nodes{"nodes_" + std::to_string(l), m.x[static_cast<std::size_t>(l)], {}, LpSense::Le,
                  static_cast<double>(p.max_pes)};
      for (int pe : p.pes[static_cast<std::size_t>(l)]) nodes.coefs.push_back(pe);
      lp.add_row(std::move(nodes));
    }
    if (p.memory_limit > 0 && !p.memory.empty()) {
      LpRow mem{"mem_" + std::to_string(l), m.x[static_cast<std::size_t>(l)],
                p.memory[static_cast<std::size_t>(l)], LpSense::Le, p.memory_limit};
      lp.add_row(std::move(mem));
    }
  }
  for (std::size_t e = 0; e < p.edges.size(); ++e) {
    const auto& edge = p.edges[e];
    const auto& xu = m.x[static_cast<std::size_t>(edge.u)];
    const auto& xv = m.x[static_cast<std::size_t>(edge.v)];
    const std::string tag = std::to_string(e) + "_";
    std::vector<LpRow> out_rows, in_rows;
    if (flow) {
      for (std::size_t i = 0; i < xu.size(); ++i)
        out_rows.push_back({"fu_" + tag + label(edge.u, i), {xu[i]}, {-1}, LpSense::Eq, 0});
      for (std::size_t j = 0; j < xv.size(); ++j)
        in_rows.push_back({"fv_" + tag + label(edge.v, j), {xv[j]}, {-1}, LpSense::Eq, 0});
    }
    for (std::size_t i = 0; i < xu.size(); ++i)
      for (std::size_t j = 0; j < xv.size(); ++j) {
        const int y = lp.add_var({"y_" + tag + label(edge.u, i) + "_" + label(edge.v, j), 0, 1,
                                  edge.at(static_cast<int>(i), static_cast<int>(j)), !flow});
        if (flow) {
          out_rows[i].vars.push_back(y), out_rows[i].coefs.push_back(1);
          in_rows[j].vars.push_back(y), in_rows[j].coefs.push_back(1);
        } else {
          const std::string id = tag + label(edge.u, i) + "_" + label(edge.v, j);
          lp.add_row({"mu_" + id, {y, xu[i]}, {1, -1}, LpSense::Le, 0});
          lp.add_row({"mv_" + id, {y, xv[j]}, {1, -1}, LpSense::Le, 0});
          lp.add_row({"mb_" + id, {y, xu[i], xv[j]}, {1, -1, -1}, LpSense::Ge, -1});
        }
      }
    for (auto& r : out_rows) lp.add_row(std::move(r));
    for (auto& r : in_rows) lp.add_row(std::move(r));
  }
  return m;
}

}  // namespace nocflow::optimizer
