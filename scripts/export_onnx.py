#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Export networks to ONNX for `nocflow inspect --network FILE.onnx`.

Exports torchvision models (randomly initialised: nothing is downloaded), a small PyTorch
transformer encoder and, on request, a one-block GPT-2 language model with its embeddings and
causal mask (gpt2_lm), then strips the weights: every initializer with more than
--keep-elements elements is turned into external data pointing at a file that is never
written, so the model keeps its graph and tensor shapes but no weight values. nocflow imports
such models without reading weights. Small initializers (shape constants, scalars) stay inline.

Also writes OUT/torchvision_reference.json: per torchvision model, the MACs of its Conv2d and
Linear modules and the parameters of the modules its forward pass runs, counted by PyTorch
forward hooks (an independent check of nocflow's import; the tests read it), and
OUT/resize_reference.json: for torch.nn.functional.interpolate cases, the ONNX Resize
attributes PyTorch exports and the input rows each output row depends on (its gradient's
nonzero entries), against which the tests check nocflow's Resize regions.

Needs Debian's python3-torch, python3-torchvision and python3-onnx
(scripts/install-deps.sh --with-torch). Run with /usr/bin/python3:

    /usr/bin/python3 scripts/export_onnx.py --out tests/optimizer/data
    /usr/bin/python3 scripts/export_onnx.py --models resnet50 --keep-weights --out /tmp/onnx
    /usr/bin/python3 scripts/export_onnx.py --models vit_b_32 --dynamic-batch --out /tmp/onnx
    /usr/bin/python3 scripts/export_onnx.py --models gpt2_lm --out /tmp/onnx
    /usr/bin/python3 scripts/export_onnx.py --models resnet18 --batchnorm --out /tmp/onnx

By default the models are exported for inference (eval mode), where PyTorch folds every batch
norm into the convolution before it: `nocflow ... --train` then trains a network without batch
norms. --batchnorm exports in training mode instead, which keeps them (and exports Dropout
with its mask), as nocflow's zoo networks have them.
"""
import argparse
import io
import json
import math
import os
import sys

try:
    import onnx
    import onnx.numpy_helper
    import torch
    import torchvision
except ModuleNotFoundError as missing:  # one line and exit code 2, not a traceback
    print(f"export_onnx: needs the Python module '{missing.name}': run it with /usr/bin/python3 "
          "and Debian's python3-torch, python3-torchvision and python3-onnx "
          "(scripts/install-deps.sh --with-torch)", file=sys.stderr)
    sys.exit(2)

TORCHVISION = {  # name: (model, input height and width)
    "resnet18": (lambda: torchvision.models.resnet18(weights=None), 224),
    "resnet50": (lambda: torchvision.models.resnet50(weights=None), 224),
    "mobilenet_v2": (lambda: torchvision.models.mobilenet_v2(weights=None), 224),
    "googlenet": (lambda: torchvision.models.googlenet(weights=None, aux_logits=False,
                                                       init_weights=True), 224),
    # HardSigmoid (hard swish is exported as x * HardSigmoid(x) at opset 13)
    "mobilenet_v3_small": (lambda: torchvision.models.mobilenet_v3_small(weights=None), 224),
    # Slice (the channel split) on shape arithmetic
    "shufflenet_v2_x0_5": (lambda: torchvision.models.shufflenet_v2_x0_5(weights=None), 224),
    # Pad before AveragePool
    "densenet121": (lambda: torchvision.models.densenet121(weights=None), 224),
    "inception_v3": (lambda: torchvision.models.inception_v3(weights=None, init_weights=True), 299),
    # Resize (bilinear, half_pixel) to sizes computed by shape arithmetic: semantic segmentation
    "lraspp_mobilenet_v3_large": (lambda: torchvision.models.segmentation.lraspp_mobilenet_v3_large(
        weights=None, weights_backbone=None), 224),
    "fcn_resnet50": (lambda: torchvision.models.segmentation.fcn_resnet50(
        weights=None, weights_backbone=None, aux_loss=False), 224),
    # ConvTranspose (strided, with output_padding, grouped, dilated): not torchvision's
    "tiny_unet": (lambda: TinyUNet(), 64),
    # ViT-B/16: the class token's Expand (ConstantOfShape, Equal, Where on its shape) and its
    # Gather (x[:, 0]); attention as MatMul, LayerNorm and GELU spelled out
    "vit_b_16": (lambda: torchvision.models.vit_b_16(weights=None), 224),
    "vit_b_32": (lambda: torchvision.models.vit_b_32(weights=None), 224),
    # Swin-T: shifted windows (Pad, Mod and Range on shapes; the attention mask a ConstantOfShape
    # filled by ScatterND, compared by Equal and Not, chosen by Where, all compile-time). 1.3 MB
    # without weights, so not kept in tests/optimizer/data (not exported unless asked for).
    "swin_t": (lambda: torchvision.models.swin_t(weights=None), 224),
    "swin_s": (lambda: torchvision.models.swin_s(weights=None), 224),
    # MaxViT-T: attention as Einsum (a batched product, imported as a MatMul)
    "maxvit_t": (lambda: torchvision.models.maxvit_t(weights=None), 224),
    # swin_t's design at a size the tests keep: 14 x 14 tokens in 2 x 2 shifted windows of 7 x 7
    # (the mask), then 7 x 7 tokens in one window (no shift)
    "swin_tiny": (lambda: torchvision.models.swin_transformer.SwinTransformer(
        patch_size=[4, 4], embed_dim=16, depths=[2, 2], num_heads=[1, 2], window_size=[7, 7]), 56),
}
NOT_BY_DEFAULT = {"swin_t", "swin_s", "vit_b_32", "maxvit_t", "gpt2_lm"}
# Exported with autograd on: under no_grad PyTorch runs attention as one fused kernel
# (_native_multi_head_attention) that has no ONNX export.
WITH_GRAD = {"vit_b_16", "vit_b_32"}

# torch.nn.functional.interpolate along H: (mode, align_corners, input rows, output rows or None,
# scale_factor or None)
RESIZE_CASES = [
    ("nearest", None, 7, 16, None), ("nearest", None, 16, 7, None), ("nearest", None, 8, None, 2.0),
    ("bilinear", False, 7, 16, None), ("bilinear", False, 16, 7, None),
    ("bilinear", True, 7, 16, None), ("bilinear", True, 16, 7, None),
    ("bilinear", False, 6, None, 2.5), ("bilinear", False, 28, 224, None),
    ("bicubic", False, 7, 16, None), ("bicubic", True, 16, 7, None),
]


def reference(module, example):
    """MACs of the Conv2d, Linear and MultiheadAttention modules and parameters of the modules a
    forward pass runs."""
    macs, ran = 0, set()

    def hook(m, inputs, output):
        nonlocal macs
        ran.add(m)
        if isinstance(m, torch.nn.MultiheadAttention):
            # Its forward uses out_proj's weights without calling it. Projections (3 in, 1 out:
            # 4 L E^2 per sample) and, over the heads, Q K^T and A V (self-attention; the output
            # is read because ViT passes the inputs by keyword, which hooks do not see).
            ran.add(m.out_proj)
            if m.batch_first:
                n, length, e = output[0].shape
            else:
                length, n, e = output[0].shape
            macs += n * (4 * length * e * e + 2 * length * length * e)
        elif isinstance(m, torchvision.models.swin_transformer.ShiftedWindowAttention):
            # Its forward uses qkv's and proj's weights without calling them. Per window of T
            # tokens of C features: qkv T C 3C, Q K^T and A V T^2 C each (over the heads),
            # proj T C^2; the map is padded to whole windows.
            ran.update((m.qkv, m.proj))
            n, h, w, c = inputs[0].shape
            wh, ww = m.window_size
            t = wh * ww
            macs += n * math.ceil(h / wh) * math.ceil(w / ww) * (4 * t * c * c + 2 * t * t * c)
        elif isinstance(m, torch.nn.Conv2d):
            macs += output.numel() * m.in_channels // m.groups * m.kernel_size[0] * m.kernel_size[1]
        elif isinstance(m, torch.nn.ConvTranspose2d):  # every input value meets K/g x kh x kw
            kh, kw = m.kernel_size
            macs += inputs[0].numel() * m.out_channels // m.groups * kh * kw
        elif isinstance(m, torch.nn.Linear):
            macs += output.numel() * m.in_features

    handles = [m.register_forward_hook(hook) for m in module.modules()]
    module.eval()
    with torch.no_grad():
        module(example)
    for h in handles:
        h.remove()
    params = sum(p.numel() for m in ran for p in m.parameters(recurse=False))
    return {"input": list(example.shape), "macs": macs, "params": params}


class TinyUNet(torch.nn.Module):
    """Two levels down by strided convolutions, back up by transposed ones (2x2 stride 2; 3x3
    stride 2 with output_padding; grouped and dilated), each joined with its skip by Concat."""

    def __init__(self):
        super().__init__()
        c = torch.nn.Conv2d
        self.enc1 = torch.nn.Sequential(c(3, 16, 3, padding=1), torch.nn.ReLU())
        self.enc2 = torch.nn.Sequential(c(16, 32, 3, stride=2, padding=1), torch.nn.ReLU())
        self.enc3 = torch.nn.Sequential(c(32, 64, 3, stride=2, padding=1), torch.nn.ReLU())
        self.up2 = torch.nn.ConvTranspose2d(64, 32, 3, stride=2, padding=1, output_padding=1)
        self.dec2 = torch.nn.Sequential(c(64, 32, 3, padding=1), torch.nn.ReLU())
        self.up1 = torch.nn.ConvTranspose2d(32, 16, 2, stride=2, groups=4)
        self.dec1 = torch.nn.ConvTranspose2d(32, 16, 3, padding=2, dilation=2)
        self.head = c(16, 2, 1)

    def forward(self, x):
        e1 = self.enc1(x)
        e2 = self.enc2(e1)
        d2 = self.dec2(torch.cat([self.up2(self.enc3(e2)), e2], 1))
        return self.head(self.dec1(torch.cat([self.up1(d2), e1], 1)))


class Interpolate(torch.nn.Module):
    def __init__(self, **kw):
        super().__init__()
        self.kw = kw

    def forward(self, x):
        return torch.nn.functional.interpolate(x, **self.kw)


def resize_reference():
    """Per RESIZE_CASES entry: the ONNX Resize attributes PyTorch exports for it, the scale its
    transformation uses (the scales input, or None when sizes are given), and for every output
    row the input rows its value depends on ([first, end): the nonzero entries of its gradient)."""
    cases = []
    for mode, align, rows, size, scale in RESIZE_CASES:
        kw = {"mode": mode}
        if align is not None:
            kw["align_corners"] = align
        if size:
            kw["size"] = (size, 1)
        else:
            kw["scale_factor"] = (scale, 1.0)
        module, x = Interpolate(**kw), torch.randn(1, 1, rows, 1)
        buf = io.BytesIO()
        torch.onnx.export(module, x, buf, opset_version=13)
        model = onnx.load_from_string(buf.getvalue())
        node = next(n for n in model.graph.node if n.op_type == "Resize")
        values = {t.name: onnx.numpy_helper.to_array(t) for t in model.graph.initializer}
        for n in model.graph.node:
            if n.op_type == "Constant":
                values[n.output[0]] = onnx.numpy_helper.to_array(n.attribute[0].t)
        given = values.get(node.input[2]) if len(node.input) > 2 else None
        x.requires_grad_(True)
        y = module(x)
        taps = []
        for r in range(y.shape[2]):
            (g,) = torch.autograd.grad(y[0, 0, r, 0], x, retain_graph=True)
            nonzero = g[0, 0, :, 0].nonzero().flatten().tolist()
            taps.append([min(nonzero), max(nonzero) + 1])
        case = {"torch": kw, "in": rows, "out": y.shape[2], "taps": taps,
                "scale": float(given[2]) if given is not None and given.size else None}
        case.update({a.name: a.s.decode() for a in node.attribute
                     if a.type == onnx.AttributeProto.STRING})
        cases.append(case)
    return cases


class NaiveLayerNorm(torch.nn.Module):
    """Layer norm written the way a model author might: the mean is computed twice, once for
    the centred input and once inside the variance, so the exported graph repeats the
    mean/variance subgraph (the situation CSE is for)."""

    def __init__(self, dim, eps=1e-5):
        super().__init__()
        self.gamma = torch.nn.Parameter(torch.ones(dim))
        self.beta = torch.nn.Parameter(torch.zeros(dim))
        self.eps = eps

    def forward(self, x):
        centred = x - x.mean(-1, keepdim=True)
        var = ((x - x.mean(-1, keepdim=True)) ** 2).mean(-1, keepdim=True)
        return centred / torch.sqrt(var + self.eps) * self.gamma + self.beta


class EncoderLayer(torch.nn.Module):
    """Post-norm transformer encoder layer; heads are split with sizes read from the tensor
    (x.size()), which exports as Shape/Gather/Concat arithmetic feeding Reshape."""

    def __init__(self, dim=256, heads=4, ffn=1024):
        super().__init__()
        self.heads = heads
        self.q = torch.nn.Linear(dim, dim)
        self.k = torch.nn.Linear(dim, dim)
        self.v = torch.nn.Linear(dim, dim)
        self.o = torch.nn.Linear(dim, dim)
        self.ln1 = NaiveLayerNorm(dim)
        self.fc1 = torch.nn.Linear(dim, ffn)
        self.fc2 = torch.nn.Linear(ffn, dim)
        self.ln2 = NaiveLayerNorm(dim)

    def split(self, t):
        b, s, d = t.size()
        return t.view(b, s, self.heads, d // self.heads).transpose(1, 2)

    def forward(self, x):
        b, s, d = x.size()
        q, k, v = self.split(self.q(x)), self.split(self.k(x)), self.split(self.v(x))
        scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(d // self.heads)
        ctx = torch.matmul(torch.softmax(scores, dim=-1), v)
        ctx = ctx.transpose(1, 2).reshape(b, s, d)
        h = self.ln1(x + self.o(ctx))
        return self.ln2(h + self.fc2(torch.nn.functional.gelu(self.fc1(h))))


class Encoder(torch.nn.Module):
    def __init__(self, layers=2, **kw):
        super().__init__()
        self.layers = torch.nn.ModuleList(EncoderLayer(**kw) for _ in range(layers))

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


class GptLm(torch.nn.Module):
    """A GPT-2 small language model cut to one block: token and position embeddings (Gather of
    tables by ids), a pre-norm block whose causal attention is masked with torch.where on a
    boolean lower-triangular buffer, the final norm and the head onto the vocabulary."""

    def __init__(self, vocab=50257, positions=1024, dim=768, heads=12):
        super().__init__()
        self.heads = heads
        self.tokens = torch.nn.Embedding(vocab, dim)
        self.positions = torch.nn.Embedding(positions, dim)
        self.ln1, self.ln2, self.ln_f = (torch.nn.LayerNorm(dim) for _ in range(3))
        self.qkv = torch.nn.Linear(dim, 3 * dim)
        self.o = torch.nn.Linear(dim, dim)
        self.fc1 = torch.nn.Linear(dim, 4 * dim)
        self.fc2 = torch.nn.Linear(4 * dim, dim)
        self.head = torch.nn.Linear(dim, vocab, bias=False)
        causal = torch.ones(positions, positions, dtype=torch.bool).tril()
        self.register_buffer("causal", causal.view(1, 1, positions, positions), persistent=False)

    def forward(self, ids):
        b, s = ids.shape
        x = self.tokens(ids) + self.positions(torch.arange(s).unsqueeze(0))
        d = x.shape[-1]
        q, k, v = (t.view(b, s, self.heads, d // self.heads).transpose(1, 2)
                   for t in self.qkv(self.ln1(x)).split(d, dim=2))
        scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(d // self.heads)
        scores = torch.where(self.causal[:, :, :s, :s], scores,
                             torch.tensor(torch.finfo(scores.dtype).min))
        ctx = torch.matmul(torch.softmax(scores, dim=-1), v).transpose(1, 2).reshape(b, s, d)
        x = x + self.o(ctx)
        x = x + self.fc2(torch.nn.functional.gelu(self.fc1(self.ln2(x)), approximate="tanh"))
        return self.head(self.ln_f(x))


def strip_weights(model, keep_elements, location):
    """Turn big initializers into external data in `location` (a file that is not written)."""
    offset = 0
    for init in model.graph.initializer:
        numel = math.prod(init.dims) if init.dims else 1
        if numel <= keep_elements:
            continue
        nbytes = numel * 4
        init.ClearField("raw_data")
        init.ClearField("float_data")
        init.ClearField("int64_data")
        init.data_location = onnx.TensorProto.EXTERNAL
        del init.external_data[:]
        for key, value in (("location", location), ("offset", str(offset)), ("length", str(nbytes))):
            entry = init.external_data.add()
            entry.key, entry.value = key, value
        offset += nbytes


def duplicate_centring(model):
    """Give every Pow(Sub(x, ReduceMean(x)), 2) its own copy of the ReduceMean and Sub.

    PyTorch's exporter already merges the two identical mean computations of NaiveLayerNorm;
    this re-creates the graph a framework that lowers each use separately would produce
    (seed 002: v2 = mean((X - mean(X))^2) computed apart from v1), which nocflow's CSE must
    merge again."""
    graph = model.graph
    producer = {out: node for node in graph.node for out in node.output}
    new_nodes = []
    for node in graph.node:
        if node.op_type == "Pow" and node.input[0] in producer:
            sub = producer[node.input[0]]
            mean = producer.get(sub.input[1]) if sub.op_type == "Sub" else None
            if mean is not None and mean.op_type == "ReduceMean":
                mean2 = onnx.NodeProto()
                mean2.CopyFrom(mean)
                mean2.name = mean.name + "_again"
                mean2.output[0] = mean.output[0] + "_again"
                sub2 = onnx.NodeProto()
                sub2.CopyFrom(sub)
                sub2.name = sub.name + "_again"
                sub2.input[1] = mean2.output[0]
                sub2.output[0] = sub.output[0] + "_again"
                node.input[0] = sub2.output[0]
                new_nodes += [mean2, sub2]
        new_nodes.append(node)
    del graph.node[:]
    graph.node.extend(new_nodes)


def export(name, module, example, out_dir, opset, keep_weights, keep_elements,
           dynamic_batch=False, batchnorm=False):
    path = os.path.join(out_dir, name + ".onnx")
    module.eval()
    # Training mode keeps batch norms (their running statistics become unread outputs);
    # PyTorch advises against constant folding there.
    mode = torch.onnx.TrainingMode.TRAINING if batchnorm else torch.onnx.TrainingMode.EVAL
    # The encoder keeps its shape arithmetic (Shape/Gather/Concat → Reshape) for nocflow's
    # constant folding; the CNNs are folded by PyTorch (batch norm into conv).
    with torch.set_grad_enabled(name in WITH_GRAD):
        # A dynamic batch: nocflow then takes the batch from --batch N.
        batch = {"input": {0: "batch"}, "output": {0: "batch"}} if dynamic_batch else None
        torch.onnx.export(module, example, path, opset_version=opset, input_names=["input"],
                          output_names=["output"],
                          do_constant_folding=name != "encoder" and not batchnorm,
                          dynamic_axes=batch, training=mode)
    model = onnx.load(path)
    if name == "encoder":
        duplicate_centring(model)
        onnx.save(model, path)
    if not keep_weights:
        strip_weights(model, keep_elements, name + ".weights.absent")
        onnx.save(model, path)
    print(f"{path}: {os.path.getsize(path)} bytes, {len(model.graph.node)} nodes")


def main():
    class Formatter(argparse.RawDescriptionHelpFormatter, argparse.ArgumentDefaultsHelpFormatter):
        pass

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=Formatter)
    ap.add_argument("--out", default="onnx", help="output folder")
    everything = list(TORCHVISION) + ["encoder", "gpt2_lm", "resize"]
    ap.add_argument("--models", default=",".join(m for m in everything if m not in NOT_BY_DEFAULT),
                    help="comma-separated, of: " + ", ".join(everything) +
                    " (resize: resize_reference.json, which rows each output row reads); some "
                    "take minutes")
    ap.add_argument("--opset", type=int, default=13, help="ONNX opset to export")
    ap.add_argument("--keep-weights", action="store_true", help="keep weight values (large files)")
    ap.add_argument("--keep-elements", type=int, default=64,
                    help="initializers with at most this many elements stay inline")
    ap.add_argument("--dynamic-batch", action="store_true",
                    help="export the batch as a dynamic axis (nocflow's --batch N sets it)")
    ap.add_argument("--batchnorm", action="store_true",
                    help="export in training mode, keeping batch norms (eval mode folds them into "
                    "the convolutions), for `nocflow ... --train`")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    torch.manual_seed(0)
    ref_path = os.path.join(args.out, "torchvision_reference.json")
    refs = {}
    if os.path.exists(ref_path):
        with open(ref_path) as f:
            refs = json.load(f)
    for name in args.models.split(","):
        if name in TORCHVISION:
            make, size = TORCHVISION[name]
            module, example = make(), torch.randn(1, 3, size, size)
            export(name, module, example, args.out, args.opset, args.keep_weights,
                   args.keep_elements, args.dynamic_batch, args.batchnorm)
            refs[name] = reference(module, example)
            with open(ref_path, "w") as f:
                json.dump(refs, f, indent=1, sort_keys=True)
                f.write("\n")
        elif name == "resize":
            path, cases = os.path.join(args.out, "resize_reference.json"), resize_reference()
            with open(path, "w") as f:
                json.dump(cases, f, indent=1)
                f.write("\n")
            print(f"{path}: {len(RESIZE_CASES)} cases")
        elif name == "encoder":
            export("encoder", Encoder(), torch.randn(1, 64, 256), args.out, args.opset,
                   args.keep_weights, args.keep_elements, args.dynamic_batch, args.batchnorm)
        elif name == "gpt2_lm":  # 64 token ids
            export("gpt2_lm", GptLm(), torch.randint(0, 50257, (1, 64)), args.out, args.opset,
                   args.keep_weights, args.keep_elements, args.dynamic_batch, args.batchnorm)
        else:
            sys.exit(f"export_onnx: unknown model '{name}'")


if __name__ == "__main__":
    main()
