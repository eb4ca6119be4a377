// SPDX-License-Identifier: MIT
#pragma once
// One entry point for every front end: "zoo:NAME", a .yaml/.yml network or a .onnx model.
#include <string>

#include "optimizer/frontend/zoo.h"

namespace nocflow::optimizer {

/// `zoo_options.batch` 0: not given (a zoo network takes 1). Throws InputError for an unknown zoo
/// name, an unknown file type, a batch given for a file that is not its own (its input shapes
/// fix the batch) or any front-end error.
Graph load_network(const std::string& spec, const ZooOptions& zoo_options = {});

/// Whether `spec` names an ONNX model (a .onnx file, the extension in any case), which
/// ZooOptions::onnx_float_bytes applies to.
bool is_onnx_file(const std::string& spec);

}  // namespace nocflow::optimizer
