// SPDX-License-Identifier: MIT
#pragma once
// A partition choice from its factors, e.g. make({{PartDim::Outp, 4}}); the rest stay 1.
#include <initializer_list>
#include <utility>

#include "optimizer/partition/choice.h"

namespace nocflow::optimizer {

inline Choice make(std::initializer_list<std::pair<PartDim, int>> f) {
  Choice c;
  for (auto [d, v] : f) c.factor(d) = v;
  return c;
}

}  // namespace nocflow::optimizer
