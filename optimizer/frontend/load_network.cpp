// SPDX-License-Identifier: MIT
#include "optimizer/frontend/load_network.h"

#include <cctype>
#include <filesystem>

#include "noc/base/error.h"
#include "noc/base/input_file.h"
#include "optimizer/frontend/network_yaml.h"
#include "optimizer/frontend/onnx_import.h"

namespace nocflow::optimizer {

namespace {
/// The file's extension in lower case (".ONNX" is ".onnx").
std::string extension(const std::string& spec) {
  std::string ext = std::filesystem::path(spec).extension().string();
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return ext;
}
}  // namespace

bool is_onnx_file(const std::string& spec) { return extension(spec) == ".onnx"; }

Graph load_network(const std::string& spec, const ZooOptions& zoo_options) {
  if (spec.rfind("zoo:", 0) == 0) return zoo_network(spec.substr(4), zoo_options);
  const std::string ext = extension(spec);
  // As every other input file says it: a folder or a missing file by name, not by what the
  // parser makes of it.
  check_input_path(spec, spec);  // a name too long, a device
  std::error_code ec;
  if (std::filesystem::is_directory(spec, ec))  // whatever its name
    throw InputError(spec + ": cannot read the network: it is a directory");
  if ((ext == ".yaml" || ext == ".yml" || ext == ".onnx") && !std::filesystem::exists(spec, ec))
    throw InputError(spec + ": cannot read the network: no such file");
  Graph g = ext == ".yaml" || ext == ".yml" ? load_network_yaml(spec, zoo_options.batch)
            : ext == ".onnx"
                ? import_onnx(spec, zoo_options.batch, zoo_options.onnx_float_bytes)
                : throw InputError(
                      spec + ": unknown network type (give zoo:NAME, a .yaml or a .onnx file)");
  // A batch given for a file must be its own (its first input's leading dimension, as the
  // network's batch is read everywhere): silently pricing another would be worse.
  if (zoo_options.batch != 0)
    for (NodeId id : g.node_ids())
      if (const Node& n = g.node(id); n.kind == OpKind::Input) {
        if (n.output.shape.empty() || n.output.shape[0] != zoo_options.batch)
          throw InputError(spec + ": batch " + std::to_string(zoo_options.batch) + ": input '" +
                           n.name + "' has shape " + shape_str(n.output.shape) +
                           "; only zoo networks take a batch size, a network file fixes its own "
                           "(the first dimension of its first input), unless it leaves it open: "
                           "a YAML network's written `batch` (input: [batch, 3, 32, 32]), an ONNX "
                           "model's exported as a dynamic axis, which --batch sets");
        break;
      }
  return g;
}

}  // namespace nocflow::optimizer
