// SPDX-License-Identifier: MIT
// Residual networks of the zoo, after torchvision: resnet18 (basic blocks), resnet50
// (bottlenecks, stride on the 3×3 convolution as in v1.5) and mobilenet_v2 (inverted residuals).
#include "optimizer/frontend/graph_builder.h"
#include "optimizer/frontend/zoo.h"

namespace nocflow::optimizer {
namespace {

NodeId conv_bn(GraphBuilder& b, NodeId x, std::int64_t out, std::int64_t k, std::int64_t stride,
               const std::string& conv_name, const std::string& bn_name, std::int64_t groups = 1) {
  return b.batchnorm(b.conv(x, out, k, stride, -1, groups, false, conv_name), 1e-5, bn_name);
}

NodeId stem(GraphBuilder& b, NodeId x) {
  x = b.relu(conv_bn(b, x, 64, 7, 2, "conv1", "bn1"), "relu");
  return b.maxpool(x, 3, 2, 1, false, "maxpool");
}

NodeId head(GraphBuilder& b, NodeId x) {
  x = b.flatten(b.global_avgpool(x, "avgpool"), 1, "flatten");
  return b.gemm(x, 1000, true, "fc");
}

/// `in` channels arrive; returns the block output with `planes` (basic) channels.
NodeId basic_block(GraphBuilder& b, NodeId x, std::int64_t in, std::int64_t planes,
                   std::int64_t stride) {
  NodeId y = b.relu(conv_bn(b, x, planes, 3, stride, "conv1", "bn1"), "relu1");
  y = conv_bn(b, y, planes, 3, 1, "conv2", "bn2");
  NodeId shortcut = x;
  if (stride != 1 || in != planes)
    shortcut = conv_bn(b, x, planes, 1, stride, "downsample.0", "downsample.1");
  return b.relu(b.add(y, shortcut, "add"), "relu2");
}

NodeId bottleneck(GraphBuilder& b, NodeId x, std::int64_t in, std::int64_t planes,
                  std::int64_t stride) {
  NodeId y = b.relu(conv_bn(b, x, planes, 1, 1, "conv1", "bn1"), "relu1");
  y = b.relu(conv_bn(b, y, planes, 3, stride, "conv2", "bn2"), "relu2");
  y = conv_bn(b, y, planes * 4, 1, 1, "conv3", "bn3");
  NodeId shortcut = x;
  if (stride != 1 || in != planes * 4)
    shortcut = conv_bn(b, x, planes * 4, 1, stride, "downsample.0", "downsample.1");
  return b.relu(b.add(y, shortcut, "add"), "relu3");
}

Graph resnet(const std::string& name, const ZooOptions& o, bool bottlenecks,
             const std::int64_t (&blocks)[4]) {
  GraphBuilder b(name, o.elem_bytes);
  NodeId x = stem(b, b.input({o.batch, 3, 224, 224}));
  std::int64_t in = 64;
  const std::int64_t expansion = bottlenecks ? 4 : 1;
  for (int layer = 0; layer < 4; ++layer) {
    const std::int64_t planes = 64LL << layer;
    for (std::int64_t i = 0; i < blocks[layer]; ++i) {
      b.set_scope("layer" + std::to_string(layer + 1) + "." + std::to_string(i) + ".");
      const std::int64_t stride = (layer > 0 && i == 0) ? 2 : 1;
      x = bottlenecks ? bottleneck(b, x, in, planes, stride) : basic_block(b, x, in, planes, stride);
      in = planes * expansion;
    }
  }
  b.set_scope("");
  head(b, x);
  return b.finish();
}

}  // namespace

Graph build_resnet18(const ZooOptions& o) { return resnet("resnet18", o, false, {2, 2, 2, 2}); }
Graph build_resnet50(const ZooOptions& o) { return resnet("resnet50", o, true, {3, 4, 6, 3}); }

Graph build_mobilenet_v2(const ZooOptions& o) {
  GraphBuilder b("mobilenet_v2", o.elem_bytes);
  NodeId x = b.input({o.batch, 3, 224, 224});
  b.set_scope("features.0.");
  x = b.relu6(conv_bn(b, x, 32, 3, 2, "conv", "bn"));
  // expansion t, output channels c, repeats n, first stride s (torchvision's table)
  const std::int64_t settings[7][4] = {{1, 16, 1, 1},  {6, 24, 2, 2},  {6, 32, 3, 2},
                                       {6, 64, 4, 2},  {6, 96, 3, 1},  {6, 160, 3, 2},
                                       {6, 320, 1, 1}};
  std::int64_t in = 32;
  int index = 1;
  for (const auto& s : settings) {
    for (std::int64_t i = 0; i < s[2]; ++i, ++index) {
      b.set_scope("features." + std::to_string(index) + ".");
      const std::int64_t stride = i == 0 ? s[3] : 1;
      const std::int64_t hidden = in * s[0];
      NodeId y = x;
      if (s[0] != 1) y = b.relu6(conv_bn(b, y, hidden, 1, 1, "expand", "expand_bn"));
      y = b.relu6(conv_bn(b, y, hidden, 3, stride, "depthwise", "depthwise_bn", hidden));
      y = conv_bn(b, y, s[1], 1, 1, "project", "project_bn");
      x = (stride == 1 && in == s[1]) ? b.add(y, x, "add") : y;
      in = s[1];
    }
  }
  b.set_scope("features.18.");
  x = b.relu6(conv_bn(b, x, 1280, 1, 1, "conv", "bn"));
  b.set_scope("");
  x = b.flatten(b.global_avgpool(x, "avgpool"), 1, "flatten");
  b.gemm(b.dropout(x), 1000, true, "classifier");
  return b.finish();
}

}  // namespace nocflow::optimizer
