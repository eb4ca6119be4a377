// SPDX-License-Identifier: MIT
#include "optimizer/partition/choice.h"

#include <algorithm>
#include <utility>

#include "noc/base/error.h"
#include "noc/base/format.h"

namespace nocflow::optimizer {

std::string Choice::str() const {
  std::string out;
  for (PartDim d : kAllPartDims)
    if (factor(d) > 1)
      out += (out.empty() ? "" : ",") + std::string(to_string(d)) + "=" + std::to_string(factor(d));
  if (out.empty()) out = "SINGLE";
  return rows_placement ? out + ",PLACE=ROWS" : out;
}

Choice parse_choice(const std::string& text, const std::string& what) {
  Choice c;
  if (text == "SINGLE") return c;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    const std::string item = text.substr(start, comma - start);
    const std::size_t eq = item.find('=');
    bool ok = false;
    if (item == "PLACE=ROWS" || item == "PLACE=SNAKE") {
      c.rows_placement = item == "PLACE=ROWS";
      ok = true;
    } else if (eq != std::string::npos) {
      for (PartDim d : kAllPartDims) {
        if (item.substr(0, eq) != to_string(d)) continue;
        try {
          std::size_t used = 0;
          const int v = std::stoi(item.substr(eq + 1), &used);
          ok = v >= 1 && used == item.size() - eq - 1 && is_decimal_integer(item.substr(eq + 1));
          c.factor(d) = v;
        } catch (const std::exception&) {
          ok = false;
        }
      }
    }
    if (!ok)
      throw InputError(what + ": bad partition choice '" + text +
                       "' (expected e.g. OUTP=4,OFMP_H=2 or OFMP_H=8,OFMP_W=8,PLACE=ROWS)");
    start = comma + 1;
  }
  return c;
}

std::vector<std::int64_t> divisors(std::int64_t n) {
  std::vector<std::int64_t> small, large;
  for (std::int64_t i = 1; i * i <= n; ++i) {
    if (n % i) continue;
    small.push_back(i);
    if (i != n / i) large.push_back(n / i);
  }
  small.insert(small.end(), large.rbegin(), large.rend());
  return small;
}

std::int64_t dim_size(const Layer& l, PartDim d) {
  switch (d) {
    case PartDim::Batch: return l.out[kN];
    case PartDim::Outp: return l.out[kC];
    case PartDim::OfmpH: return l.out[kH];
    case PartDim::OfmpW: return l.out[kW];
    case PartDim::Inpp: return l.reduction;
  }
  return 1;
}

namespace {
/// The size of `d` and of its largest balanced block under `c` (placement.h, block_range).
std::pair<std::int64_t, std::int64_t> size_and_largest_block(const Layer& l, const Choice& c,
                                                             PartDim d) {
  const std::int64_t size = std::max<std::int64_t>(1, dim_size(l, d)), f = c.factor(d);
  return {size, (size + f - 1) / f};
}
}  // namespace

double effective_parts(const Layer& l, const Choice& c, PartDim d) {
  if (c.factor(d) <= 1) return 1;
  const auto [size, largest] = size_and_largest_block(l, c, d);
  return static_cast<double>(size) / static_cast<double>(largest);
}

std::int64_t largest_node_part(std::int64_t total, const Layer& l, const Choice& c) {
  return largest_node_part(
      total, l, c, {PartDim::Batch, PartDim::Outp, PartDim::OfmpH, PartDim::OfmpW, PartDim::Inpp});
}

std::int64_t largest_node_part(std::int64_t total, const Layer& l, const Choice& c,
                               PartDimSet dims) {
  // Exact integers: Π ⌈size / f⌉ and Π size stay below 2^63 for any real layer, and their
  // product with the total is taken in 128 bits.
  __extension__ using Wide = __int128;
  Wide num = total, den = 1;
  for (PartDim d : kAllPartDims) {
    if (c.factor(d) <= 1 || !dims.contains(d)) continue;
    const auto [size, largest] = size_and_largest_block(l, c, d);
    num *= largest;
    den *= size;
  }
  return static_cast<std::int64_t>((num + den - 1) / den);
}

std::vector<Choice> enumerate_choices(const Layer& layer, const ChoiceOptions& o) {
  std::array<std::vector<std::int64_t>, 5> options;
  for (PartDim d : kAllPartDims) {
    auto& opt = options[static_cast<std::size_t>(d)];
    if (layer.legal.contains(d)) {
      const auto& only = layer.factors[static_cast<std::size_t>(d)];
      const std::int64_t size = std::max<std::int64_t>(1, dim_size(layer, d));
      std::vector<std::int64_t> factors = only.empty() ? divisors(size) : only;
      if (o.balanced && only.empty()) {
        for (std::int64_t v : divisors(o.max_nodes))
          if (v <= size) factors.push_back(v);
        std::sort(factors.begin(), factors.end());
        factors.erase(std::unique(factors.begin(), factors.end()), factors.end());
      }
      for (std::int64_t v : factors)
        if (v <= o.max_nodes) opt.push_back(v);
    } else {
      opt.push_back(1);
    }
  }
  std::vector<Choice> out;
  Choice c;
  // Depth-first over the five dimensions, pruning once the product exceeds P.
  auto recurse = [&](auto&& self, std::size_t dim, std::int64_t product) -> void {
    if (dim == 5) {
      if (!o.exact || product == o.max_nodes || layer.legal.empty()) out.push_back(c);
      return;
    }
    for (std::int64_t v : options[dim]) {
      if (product * v > o.max_nodes) break;
      c.f[dim] = static_cast<int>(v);
      self(self, dim + 1, product * v);
    }
    c.f[dim] = 1;
  };
  recurse(recurse, 0, 1);
  return out;
}

}  // namespace nocflow::optimizer
