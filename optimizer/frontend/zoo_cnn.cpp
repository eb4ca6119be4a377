// SPDX-License-Identifier: MIT
// Plain CNNs of the zoo: vgg5, alexnet, vgg16 (torchvision layouts) and googlenet.
#include "optimizer/frontend/graph_builder.h"
#include "optimizer/frontend/zoo.h"

namespace nocflow::optimizer {

// The seed's (000 §6) "simplified VGG with 5 convolutions" on 16 nodes. The seed gives no
// shapes; ours: a CIFAR-sized 3×32×32 input, 3×3 convolutions (pad 1) with 64, 64, 128, 128,
// 256 output channels, ReLU after each, 2×2 max pooling after conv2 and conv4. Output
// 256×8×8.
Graph build_vgg5(const ZooOptions& o) {
  GraphBuilder b("vgg5", o.elem_bytes);
  NodeId x = b.input({o.batch, 3, 32, 32});
  const std::int64_t channels[] = {64, 64, 128, 128, 256};
  for (int i = 0; i < 5; ++i) {
    const std::string n = std::to_string(i + 1);
    x = b.relu(b.conv(x, channels[i], 3, 1, 1, 1, true, "conv" + n), "relu" + n);
    if (i == 1 || i == 3) x = b.maxpool(x, 2, 2, 0, false, "pool" + std::to_string(i / 2 + 1));
  }
  return b.finish();
}

Graph build_alexnet(const ZooOptions& o) {
  GraphBuilder b("alexnet", o.elem_bytes);
  NodeId x = b.input({o.batch, 3, 224, 224});
  x = b.relu(b.conv(x, 64, 11, 4, 2, 1, true, "conv1"));
  x = b.maxpool(x, 3, 2);
  x = b.relu(b.conv(x, 192, 5, 1, 2, 1, true, "conv2"));
  x = b.maxpool(x, 3, 2);
  x = b.relu(b.conv(x, 384, 3, 1, 1, 1, true, "conv3"));
  x = b.relu(b.conv(x, 256, 3, 1, 1, 1, true, "conv4"));
  x = b.relu(b.conv(x, 256, 3, 1, 1, 1, true, "conv5"));
  x = b.maxpool(x, 3, 2);  // 256×6×6: torchvision's adaptive 6×6 average pool is the identity
  x = b.flatten(x);
  x = b.relu(b.gemm(b.dropout(x), 4096, true, "fc6"));
  x = b.relu(b.gemm(b.dropout(x), 4096, true, "fc7"));
  x = b.gemm(x, 1000, true, "fc8");
  return b.finish();
}

Graph build_vgg16(const ZooOptions& o) {
  GraphBuilder b("vgg16", o.elem_bytes);
  NodeId x = b.input({o.batch, 3, 224, 224});
  const std::vector<std::vector<std::int64_t>> stages = {
      {64, 64}, {128, 128}, {256, 256, 256}, {512, 512, 512}, {512, 512, 512}};
  for (std::size_t s = 0; s < stages.size(); ++s) {
    for (std::size_t i = 0; i < stages[s].size(); ++i) {
      const std::string n = std::to_string(s + 1) + "_" + std::to_string(i + 1);
      x = b.relu(b.conv(x, stages[s][i], 3, 1, 1, 1, true, "conv" + n), "relu" + n);
    }
    x = b.maxpool(x, 2, 2, 0, false, "pool" + std::to_string(s + 1));
  }
  x = b.flatten(x);  // 512×7×7: the adaptive 7×7 average pool is the identity
  x = b.dropout(b.relu(b.gemm(x, 4096, true, "fc6")));
  x = b.dropout(b.relu(b.gemm(x, 4096, true, "fc7")));
  x = b.gemm(x, 1000, true, "fc8");
  return b.finish();
}

namespace {

/// torchvision's BasicConv2d: conv without bias, batch norm (eps 0.001), ReLU.
NodeId basic_conv(GraphBuilder& b, NodeId x, std::int64_t out, std::int64_t k,
                  std::int64_t stride, const std::string& name) {
  x = b.conv(x, out, k, stride, -1, 1, false, name + ".conv");
  x = b.batchnorm(x, 1e-3, name + ".bn");
  return b.relu(x, name + ".relu");
}

/// Inception module as in torchvision (whose "5×5" branch uses a 3×3 kernel).
NodeId inception(GraphBuilder& b, NodeId x, const std::string& name, std::int64_t c1,
                 std::int64_t c3r, std::int64_t c3, std::int64_t c5r, std::int64_t c5,
                 std::int64_t pool_proj) {
  const NodeId b1 = basic_conv(b, x, c1, 1, 1, name + ".branch1");
  const NodeId b2 = basic_conv(b, basic_conv(b, x, c3r, 1, 1, name + ".branch2.0"), c3, 3, 1,
                               name + ".branch2.1");
  const NodeId b3 = basic_conv(b, basic_conv(b, x, c5r, 1, 1, name + ".branch3.0"), c5, 3, 1,
                               name + ".branch3.1");
  const NodeId pool = b.maxpool(x, 3, 1, 1, true, name + ".branch4.pool");
  const NodeId b4 = basic_conv(b, pool, pool_proj, 1, 1, name + ".branch4.1");
  return b.concat({b1, b2, b3, b4}, 1, name + ".concat");
}

}  // namespace

Graph build_googlenet(const ZooOptions& o) {
  GraphBuilder b("googlenet", o.elem_bytes);
  NodeId x = b.input({o.batch, 3, 224, 224});
  x = basic_conv(b, x, 64, 7, 2, "conv1");
  x = b.maxpool(x, 3, 2, 0, true, "maxpool1");
  x = basic_conv(b, x, 64, 1, 1, "conv2");
  x = basic_conv(b, x, 192, 3, 1, "conv3");
  x = b.maxpool(x, 3, 2, 0, true, "maxpool2");
  x = inception(b, x, "inception3a", 64, 96, 128, 16, 32, 32);
  x = inception(b, x, "inception3b", 128, 128, 192, 32, 96, 64);
  x = b.maxpool(x, 3, 2, 0, true, "maxpool3");
  x = inception(b, x, "inception4a", 192, 96, 208, 16, 48, 64);
  x = inception(b, x, "inception4b", 160, 112, 224, 24, 64, 64);
  x = inception(b, x, "inception4c", 128, 128, 256, 24, 64, 64);
  x = inception(b, x, "inception4d", 112, 144, 288, 32, 64, 64);
  x = inception(b, x, "inception4e", 256, 160, 320, 32, 128, 128);
  x = b.maxpool(x, 2, 2, 0, true, "maxpool4");
  x = inception(b, x, "inception5a", 256, 160, 320, 32, 128, 128);
  x = inception(b, x, "inception5b", 384, 192, 384, 48, 128, 128);
  x = b.flatten(b.global_avgpool(x, "avgpool"));
  x = b.gemm(b.dropout(x), 1000, true, "fc");
  return b.finish();
}

}  // namespace nocflow::optimizer
