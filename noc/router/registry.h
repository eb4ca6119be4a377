// SPDX-License-Identifier: MIT
#pragma once
// Names of the router implementations selectable from the hardware config.
#include <string>
#include <vector>

namespace nocflow::noc {

std::vector<std::string> routing_names();    ///< e.g. xy, yx, west_first
std::vector<std::string> allocator_names();  ///< e.g. islip, separable

}  // namespace nocflow::noc
