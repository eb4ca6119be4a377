// SPDX-License-Identifier: MIT
// Transformer blocks of the zoo: one BERT-base encoder layer (post-norm, sequence 128) and one
// GPT-2 small block (pre-norm, causal mask, sequence 1024). Hidden 768, 12 heads of 64,
// feed-forward 3072. Q, K and V are three linear layers (GPT-2's fused c_attn has the same
// parameters and MACs).
#include <cmath>

#include "optimizer/frontend/graph_builder.h"
#include "optimizer/frontend/zoo.h"

namespace nocflow::optimizer {
namespace {

constexpr std::int64_t kHidden = 768;
constexpr std::int64_t kHeads = 12;
constexpr std::int64_t kHeadDim = kHidden / kHeads;
constexpr std::int64_t kFfn = 3072;

/// Multi-head self-attention on x [B, S, 768]; returns the output projection [B, S, 768].
NodeId attention(GraphBuilder& b, NodeId x, std::int64_t batch, std::int64_t seq, bool causal) {
  auto heads = [&](NodeId t, const std::string& name, std::vector<std::int64_t> perm) {
    t = b.reshape(t, {batch, seq, kHeads, kHeadDim}, name + ".reshape");
    return b.transpose(t, perm, name + ".transpose");
  };
  const NodeId q = heads(b.gemm(x, kHidden, true, "attn.query"), "attn.q", {0, 2, 1, 3});
  const NodeId k = heads(b.gemm(x, kHidden, true, "attn.key"), "attn.k", {0, 2, 3, 1});
  const NodeId v = heads(b.gemm(x, kHidden, true, "attn.value"), "attn.v", {0, 2, 1, 3});
  NodeId scores = b.matmul(q, k, "attn.scores");  // [B, 12, S, S]
  scores = b.binary(OpKind::Div, scores,
                    b.constant({}, {std::sqrt(static_cast<double>(kHeadDim))}, "attn.scale"),
                    "attn.scaled");
  if (causal) scores = b.add(scores, b.constant({1, 1, seq, seq}, {}, "attn.causal_mask"), "attn.masked");
  const NodeId probs = b.softmax(scores, -1, "attn.softmax");
  NodeId ctx = b.matmul(probs, v, "attn.context");  // [B, 12, S, 64]
  ctx = b.transpose(ctx, {0, 2, 1, 3}, "attn.context.transpose");
  ctx = b.reshape(ctx, {batch, seq, kHidden}, "attn.context.reshape");
  return b.gemm(ctx, kHidden, true, "attn.output");
}

NodeId feed_forward(GraphBuilder& b, NodeId x) {
  return b.gemm(b.gelu(b.gemm(x, kFfn, true, "ffn.fc1"), "ffn.gelu"), kHidden, true, "ffn.fc2");
}

}  // namespace

Graph build_bert_base_layer(const ZooOptions& o) {
  constexpr std::int64_t seq = 128;
  GraphBuilder b("bert_base_layer", o.elem_bytes);
  const NodeId x = b.input({o.batch, seq, kHidden}, "hidden_states");
  NodeId h = b.add(attention(b, x, o.batch, seq, false), x, "attn.residual");
  h = b.layernorm(h, 1e-12, "attn.layernorm");
  const NodeId out = b.add(feed_forward(b, h), h, "ffn.residual");
  b.layernorm(out, 1e-12, "ffn.layernorm");
  return b.finish();
}

Graph build_gpt2_block(const ZooOptions& o) {
  constexpr std::int64_t seq = 1024;
  GraphBuilder b("gpt2_block", o.elem_bytes);
  const NodeId x = b.input({o.batch, seq, kHidden}, "hidden_states");
  const NodeId a = attention(b, b.layernorm(x, 1e-5, "ln_1"), o.batch, seq, true);
  const NodeId h = b.add(a, x, "attn.residual");
  const NodeId m = feed_forward(b, b.layernorm(h, 1e-5, "ln_2"));
  b.add(m, h, "mlp.residual");
  return b.finish();
}

}  // namespace nocflow::optimizer
