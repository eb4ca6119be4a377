// SPDX-License-Identifier: MIT
#include "sim/output/build_id.h"

#include "nocflow_commit.h"  // generated at every build: NOCFLOW_COMMIT

namespace nocflow::sim {

std::string nocflow_build() {
  return std::string(NOCFLOW_VERSION) + " (commit " + NOCFLOW_COMMIT + ")";
}

}  // namespace nocflow::sim
