// SPDX-License-Identifier: MIT
#pragma once
// The five partition dimensions of the seed (000 §2.2) and which tensor axis each one splits.
// Convention for an operator's output tensor, by rank:
//   4-D N×C×H×W: BATCH→N, OUTP→C, OFMP_H→H, OFMP_W→W
//   3-D N×S×D (tokens): BATCH→N, OFMP_H→S, OUTP→D
//   2-D N×F: BATCH→N, OUTP→F
//   r-D, r ≥ 5: BATCH→the leading r − 3 axes flattened (box.h, view4; output_axis names the
//        first), OUTP, OFMP_H, OFMP_W→the last three
// INPP splits the reduction (input-channel / inner) dimension of an operator, not an output
// axis, so its partial results must be reduced.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace nocflow::optimizer {

enum class PartDim : std::uint8_t { Batch, Outp, OfmpH, OfmpW, Inpp };

inline constexpr std::array<PartDim, 5> kAllPartDims = {PartDim::Batch, PartDim::Outp,
                                                         PartDim::OfmpH, PartDim::OfmpW,
                                                         PartDim::Inpp};

/// "BATCH", "OUTP", "OFMP_H", "OFMP_W", "INPP"
inline std::string_view to_string(PartDim d) {
  switch (d) {
    case PartDim::Batch: return "BATCH";
    case PartDim::Outp: return "OUTP";
    case PartDim::OfmpH: return "OFMP_H";
    case PartDim::OfmpW: return "OFMP_W";
    case PartDim::Inpp: return "INPP";
  }
  return "?";
}

/// A set of partition dimensions (bit i = PartDim i).
class PartDimSet {
 public:
  constexpr PartDimSet() = default;
  constexpr PartDimSet(std::initializer_list<PartDim> dims) {
    for (PartDim d : dims) insert(d);
  }
  constexpr void insert(PartDim d) { bits_ |= bit(d); }
  constexpr void erase(PartDim d) { bits_ &= static_cast<std::uint8_t>(~bit(d)); }
  constexpr bool contains(PartDim d) const { return (bits_ & bit(d)) != 0; }
  constexpr bool empty() const { return bits_ == 0; }
  constexpr bool operator==(PartDimSet o) const { return bits_ == o.bits_; }
  constexpr bool operator!=(PartDimSet o) const { return bits_ != o.bits_; }
  /// "BATCH,OUTP,OFMP_H" (in enum order), "-" when empty.
  std::string str() const {
    std::string out;
    for (PartDim d : kAllPartDims)
      if (contains(d)) out += (out.empty() ? "" : ",") + std::string(to_string(d));
    return out.empty() ? "-" : out;
  }

 private:
  static constexpr std::uint8_t bit(PartDim d) {
    return static_cast<std::uint8_t>(1u << static_cast<unsigned>(d));
  }
  std::uint8_t bits_ = 0;
};

/// The output-tensor axis that `d` splits for a tensor of rank `rank`, per the convention above;
/// nullopt for INPP and for dimensions the rank does not have.
inline std::optional<int> output_axis(PartDim d, std::size_t rank) {
  switch (d) {
    case PartDim::Batch: return rank >= 1 ? std::optional<int>(0) : std::nullopt;
    case PartDim::Outp:
      if (rank >= 4) return static_cast<int>(rank) - 3;
      if (rank == 2) return 1;
      if (rank == 3) return 2;
      return std::nullopt;
    case PartDim::OfmpH:
      if (rank >= 4) return static_cast<int>(rank) - 2;
      if (rank == 3) return 1;
      return std::nullopt;
    case PartDim::OfmpW:
      return rank >= 4 ? std::optional<int>(static_cast<int>(rank) - 1) : std::nullopt;
    case PartDim::Inpp: return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace nocflow::optimizer
