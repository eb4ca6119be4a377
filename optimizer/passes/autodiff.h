// SPDX-License-Identifier: MIT
#pragma once
// Autodiff (seed 003): the training graph of a shape-inferred forward graph. Every operator has
// its backward operators; an operator with parameters also gets a weight-gradient operator and
// a weight-update operator; a tensor read by several operators gets its gradients summed (Add),
// while a residual Add passes its output gradient on to both inputs unchanged.
//
// Gradients flow only where a parameter lies upstream (as in PyTorch): the network input gets
// none, so the first layer computes no input gradient. The loss is softmax cross-entropy on
// every forward output (LossGrad: its gradient p − label, three operations per element), over
// the last axis, or per pixel over C of an N×C×H×W output (segmentation). The training graph's
// outputs are the updated parameters.
//
// Names: NAME.grad (NAME.grad0, NAME.grad1 when several inputs get one) is the gradient of
// NAME's input; NAME.wgrad and NAME.update its parameters' gradient and update; T.gradsum the
// sum of T's gradients; T.loss_grad the loss gradient of output T. BatchNorm is taken per
// channel as in inference (its batch statistics' all-reduce is not modelled).
//
// Run it after the cleanup passes and before fusion: it refuses Fused nodes and operators it
// has no gradient for (shape arithmetic that constant folding did not remove, random sources).
#include <string>
#include <string_view>
#include <vector>

#include "optimizer/graph/graph.h"

namespace nocflow::optimizer {

struct TrainingOptions {
  std::string optimizer = "sgd";  ///< sgd | momentum | adam (optimizer/graph/op_cost.h)
};

/// sgd, momentum, adam (optimizer/graph/op_cost.h, optimizers()).
const std::vector<std::string>& optimizer_names();

/// Whether a graph is a training graph by its name (training_graph appends ".train").
bool is_training_graph_name(std::string_view name);

/// The forward graph with its backward and update operators, shapes inferred. Throws InputError
/// for a graph without parameters, an unknown optimizer or an operator without a gradient.
Graph training_graph(const Graph& forward, const TrainingOptions& options = {});

}  // namespace nocflow::optimizer
