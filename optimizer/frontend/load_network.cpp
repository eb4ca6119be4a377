// SPDX-License-Identifier: MIT
#include "optimizer/frontend/load_network.h"

#include <filesystem>

#include "noc/base/error.h"
#include "optimizer/frontend/network_yaml.h"
#include "optimizer/frontend/onnx_import.h"

namespace nocflow::optimizer {

Graph load_network(const std::string& spec, const ZooOptions& zoo_options) {
  if (spec.rfind("zoo:", 0) == 0) return zoo_network(spec.substr(4), zoo_options);
  if (zoo_options.batch != 1)  // silently pricing batch 1 would be worse than refusing
    throw InputError(spec + ": batch " + std::to_string(zoo_options.batch) +
                     ": only zoo networks take a batch size; a network file fixes its own (the "
                     "first dimension of its input shape)");
  const std::string ext = std::filesystem::path(spec).extension().string();
  if (ext == ".yaml" || ext == ".yml") return load_network_yaml(spec);
  if (ext == ".onnx") return import_onnx(spec);
  throw InputError(spec + ": unknown network type (give zoo:NAME, a .yaml or a .onnx file)");
}

}  // namespace nocflow::optimizer
