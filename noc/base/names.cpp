// SPDX-License-Identifier: MIT
#include "noc/base/names.h"

#include <algorithm>
#include <numeric>

namespace nocflow {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), std::size_t{0});
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::string closest_name(std::string_view name, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t best_distance = std::max<std::size_t>(2, name.size() / 3) + 1;
  for (const auto& c : candidates) {
    const std::size_t d = edit_distance(name, c);
    if (d < best_distance) {
      best_distance = d;
      best = c;
    }
  }
  return best;
}

std::string join(const std::vector<std::string>& items, std::string_view sep) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i) out += sep;
    out += items[i];
  }
  return out;
}

std::string unknown_name_message(std::string_view what, std::string_view name,
                                 const std::vector<std::string>& known) {
  std::string msg = "unknown " + std::string(what) + " '" + std::string(name) + "'";
  if (auto guess = closest_name(name, known); !guess.empty()) msg += "; did you mean '" + guess + "'?";
  msg += " (known: " + join(known) + ")";
  return msg;
}

}  // namespace nocflow
