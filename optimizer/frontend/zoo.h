// SPDX-License-Identifier: MIT
#pragma once
// Built-in networks (`zoo:NAME`), written layer by layer after their reference definitions
// (torchvision for the CNNs, the original papers for BERT and GPT-2). Each returns a
// shape-inferred graph with batch `batch` and `elem_bytes` bytes per element.
#include <string>
#include <string_view>
#include <vector>

#include "optimizer/graph/graph.h"

namespace nocflow::optimizer {

struct ZooOptions {
  std::int64_t batch = 0;  ///< 0: not given (a zoo network 1; a network file its own)
  int elem_bytes = 4;
  /// An ONNX model's floating-point tensors take this many bytes (0: their data type's).
  int onnx_float_bytes = 0;
};

/// Throws InputError listing the known names if `name` is unknown.
Graph zoo_network(std::string_view name, const ZooOptions& options = {});
std::vector<std::string> zoo_names();

// One builder per network (zoo_cnn.cpp, zoo_resnet.cpp, zoo_transformer.cpp).
Graph build_vgg5(const ZooOptions& o);
Graph build_alexnet(const ZooOptions& o);
Graph build_vgg16(const ZooOptions& o);
Graph build_googlenet(const ZooOptions& o);
Graph build_resnet18(const ZooOptions& o);
Graph build_resnet50(const ZooOptions& o);
Graph build_mobilenet_v2(const ZooOptions& o);
Graph build_bert_base_layer(const ZooOptions& o);
Graph build_gpt2_block(const ZooOptions& o);

}  // namespace nocflow::optimizer
