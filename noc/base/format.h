// SPDX-License-Identifier: MIT
#pragma once
// Numbers as text for reports and progress lines.
#include <iomanip>
#include <sstream>
#include <string>

namespace nocflow {

/// `v` with `digits` digits after the point: fixed(2.345) == "2.3", fixed(2.345, 2) == "2.35".
inline std::string fixed(double v, int digits = 1) {
  std::ostringstream o;
  o << std::fixed << std::setprecision(digits) << v;
  return o.str();
}

}  // namespace nocflow
