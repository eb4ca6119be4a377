// SPDX-License-Identifier: MIT
#include "noc/router/registry.h"

namespace nocflow::noc {

std::vector<std::string> routing_names() { return {"xy", "yx"}; }
std::vector<std::string> allocator_names() { return {"islip", "separable"}; }

}  // namespace nocflow::noc
