// SPDX-License-Identifier: MIT
// ONNX import (onnx_importer.h): a node's attributes, read and checked, and the operators,
// attributes and inputs that the model's opset does not have, refused.
#include <onnx/defs/schema.h>

#include <limits>
#include <string>

#include "noc/base/error.h"
#include "optimizer/frontend/onnx_importer.h"

namespace nocflow::optimizer::onnx_import_detail {

const onnx::AttributeProto* Importer::attr(const onnx::NodeProto& n, const char* name) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

std::int64_t Importer::attr_int(const onnx::NodeProto& n, const char* name,
                                std::int64_t def) const {
  const auto* a = attr(n, name);
  if (!a) return def;
  if (a->type() != onnx::AttributeProto::INT)
    fail(n, std::string("attribute '") + name + "' must be an int");
  return a->i();
}

bool Importer::attr_flag(const onnx::NodeProto& n, const char* name, bool def) const {
  const std::int64_t v = attr_int(n, name, def ? 1 : 0);
  if (v != 0 && v != 1)
    fail(n, std::string("attribute '") + name + "' must be 0 or 1, got " + std::to_string(v));
  return v == 1;
}

double Importer::attr_float(const onnx::NodeProto& n, const char* name, double def) const {
  const auto* a = attr(n, name);
  if (!a) return def;
  if (a->type() != onnx::AttributeProto::FLOAT)
    fail(n, std::string("attribute '") + name + "' must be a float");
  return a->f();
}

std::vector<std::int64_t> Importer::attr_ints(const onnx::NodeProto& n, const char* name) const {
  const auto* a = attr(n, name);
  if (!a) return {};
  if (a->type() != onnx::AttributeProto::INTS)
    fail(n, std::string("attribute '") + name + "' must be a list of ints");
  return {a->ints().begin(), a->ints().end()};
}

void Importer::check_opset(const onnx::NodeProto& n) const {
  const std::string& op = n.op_type();
  // An operator newer than the model's opset (LayerNormalization, opset 17, in an opset-13
  // model) is another opset's: ONNX's shape inference skips it, and it imported silently. The
  // ONNX library gives an operator's first opset (Debian's 1.12 knows opsets up to 17); those
  // imported here that it does not know are listed.
  int since = op == "Gelu" ? 20 : 0;
  if (const onnx::OpSchema* first =
          onnx::OpSchemaRegistry::Schema(op, std::numeric_limits<int>::max(), "");
      first && !since) {
    // Back through its versions to the first (a handful; no walk over opset numbers, which a
    // model may declare as 2^31).
    while (first->SinceVersion() > 1)
      if (const onnx::OpSchema* older =
              onnx::OpSchemaRegistry::Schema(op, first->SinceVersion() - 1, ""))
        first = older;
      else
        break;
    since = first->SinceVersion();
  }
  if (opset_ < since)
    fail(n, "is an operator of opset " + std::to_string(since) +
                " on, and the model declares opset " + std::to_string(opset_) +
                ": re-export it with opset " + std::to_string(since) + " or later");
  // An attribute that became an input at some opset is another opset's in a newer model: ONNX's
  // shape inference ignores it, and the import read it as if it counted (or failed later with
  // an internal-looking error).
  struct Moved {
    const char* op;
    const char* attribute;
    int opset;          ///< the first opset without it
    const char* input;  ///< what took its place
  };
  static const Moved moved[] = {{"Split", "split", 13, "the sizes are its second input"},
                                {"Squeeze", "axes", 13, "the axes are its second input"},
                                {"Unsqueeze", "axes", 13, "the axes are its second input"},
                                {"ReduceMean", "axes", 18, "the axes are its second input"},
                                {"Pad", "pads", 11, "the pads are its second input"},
                                {"Pad", "value", 11, "the value is its third input"},
                                {"Clip", "min", 11, "min and max are its second and third inputs"},
                                {"Clip", "max", 11, "min and max are its second and third inputs"},
                                {"Slice", "starts", 10, "starts, ends and axes are inputs"},
                                {"Slice", "ends", 10, "starts, ends and axes are inputs"},
                                {"Slice", "axes", 10, "starts, ends and axes are inputs"}};
  for (const Moved& m : moved)
    if (op == m.op && opset_ >= m.opset && attr(n, m.attribute))
      fail(n, "has the attribute '" + std::string(m.attribute) + "', which opset " +
                  std::to_string(opset_) + " (the model's) does not have: from opset " +
                  std::to_string(m.opset) + " " + m.input);
}

void Importer::check_schema(const onnx::NodeProto& n) const {
  // Only an opset the ONNX library knows: for a later one it gives its latest version of the
  // operator, which may lack what the model's has (Split's num_outputs, opset 18).
  const auto& known = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  if (const auto it = known.find(""); it == known.end() || opset_ > it->second.second) return;
  if (const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Schema(n.op_type(), opset_, "")) {
    try {
      schema->Verify(n);
    } catch (const std::exception& e) {
      fail(n, "is not a valid " + n.op_type() + " of opset " + std::to_string(opset_) + ": " +
                  e.what());
    }
  }
}

}  // namespace nocflow::optimizer::onnx_import_detail
