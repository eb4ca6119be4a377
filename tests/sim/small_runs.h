// SPDX-License-Identifier: MIT
#pragma once
// The smallest inputs the `nocflow simulate` tests run: a 2x2 mesh and a two-convolution network.
#include <string>

namespace nocflow::testing {

inline const std::string kSrc = NOCFLOW_SOURCE_DIR;
/// `--hw ...`: mesh4x4.yaml cut to 2x2, with a trailing space.
inline const std::string kHw2x2 =
    "--hw " + kSrc + "/configs/hw/mesh4x4.yaml --set topology.rows=2 --set topology.cols=2 ";
inline const std::string kTwoConv = kSrc + "/tests/sim/data/two_conv.yaml";

}  // namespace nocflow::testing
