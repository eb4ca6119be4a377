// SPDX-License-Identifier: MIT
#include "optimizer/frontend/zoo.h"

#include "noc/base/error.h"
#include "noc/base/limits.h"
#include "noc/base/names.h"

namespace nocflow::optimizer {
namespace {

struct ZooEntry {
  std::string_view name;
  Graph (*build)(const ZooOptions&);
};

constexpr ZooEntry kZoo[] = {
    {"vgg5", build_vgg5},
    {"alexnet", build_alexnet},
    {"vgg16", build_vgg16},
    {"resnet18", build_resnet18},
    {"resnet50", build_resnet50},
    {"mobilenet_v2", build_mobilenet_v2},
    {"googlenet", build_googlenet},
    {"bert_base_layer", build_bert_base_layer},
    {"gpt2_block", build_gpt2_block},
};

}  // namespace

std::vector<std::string> zoo_names() {
  std::vector<std::string> out;
  for (const auto& e : kZoo) out.emplace_back(e.name);
  return out;
}

Graph zoo_network(std::string_view name, const ZooOptions& given) {
  ZooOptions options = given;
  if (options.batch == 0) options.batch = 1;
  if (options.batch < 1 || options.batch > kMaxBatch)
    throw InputError("zoo: batch " + std::to_string(options.batch) + " is outside 1 .. " +
                     std::to_string(kMaxBatch));
  for (const auto& e : kZoo)
    if (e.name == name) return e.build(options);
  throw InputError(unknown_name_message("zoo network", name, zoo_names()));
}

}  // namespace nocflow::optimizer
