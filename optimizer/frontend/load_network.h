// SPDX-License-Identifier: MIT
#pragma once
// One entry point for every front end: "zoo:NAME", a .yaml/.yml network or a .onnx model.
#include <string>

#include "optimizer/frontend/zoo.h"

namespace nocflow::optimizer {

/// Throws InputError for an unknown zoo name, an unknown file type, a batch other than 1 for a
/// file (its input shape fixes the batch) or any front-end error.
Graph load_network(const std::string& spec, const ZooOptions& zoo_options = {});

}  // namespace nocflow::optimizer
