"""ONNX translations of the neural-network ops: convolutions, pooling, normalization,
attention, padding, resampling and the recurrent cells."""

from __future__ import annotations

import math

import numpy as np

import ember
from ember.onnx._symbolic import INT64_MAX, _tuple, operand, register, tensor_name


def _optional(g, t):
    return tensor_name(g, t) if t is not None else ""


def _affine(g, weight, bias, shape, dtype):
    """The scale and shift values of a normalization: its weight and bias, or ones and zeros
    of ``shape`` where it has none."""
    np_dtype = np.float32 if dtype == ember.float32 else np.float64
    scale = tensor_name(g, weight) if weight is not None else g.constant(np.ones(shape, np_dtype))
    shift = tensor_name(g, bias) if bias is not None else g.constant(np.zeros(shape, np_dtype))
    return scale, shift


def _conv_pads(c, padding, kernel, dilation, spatial):
    if isinstance(padding, str):
        if padding == "valid":
            return [0] * (2 * spatial)
        if padding == "same":
            total = [d * (k - 1) for k, d in zip(kernel, dilation)]
            return [t // 2 for t in total] + [t - t // 2 for t in total]
        c.fail(f"with padding={padding!r}")
    pads = _tuple(padding, spatial)
    return list(pads) + list(pads)


@register("conv1d", "conv2d", "conv3d", "convolution", "_convolution")
def _conv(c):
    x, w, b = c.arg(0, "input"), c.arg(1, "weight"), c.arg(2, "bias")
    spatial = w.dim() - 2
    stride = _tuple(c.arg(3, "stride", 1), spatial)
    dilation = _tuple(c.arg(5, "dilation", 1), spatial)
    groups = int(c.arg(6, "groups", 1))
    kernel = list(w.shape[2:])
    pads = _conv_pads(c, c.arg(4, "padding", 0), kernel, dilation, spatial)
    g = c.g
    inputs = [tensor_name(g, x), tensor_name(g, w)] + ([tensor_name(g, b)] if b is not None else [])
    name = inputs[0]
    if x.dim() == spatial + 1:  # unbatched
        inputs[0] = g.unsqueeze(name, [0])
    y = g.node("Conv", inputs, kernel_shape=kernel, strides=stride, pads=pads,
               dilations=dilation, group=groups)
    if x.dim() == spatial + 1:
        y = g.squeeze(y, [0])
    c.out(y)


@register("conv_transpose1d", "conv_transpose2d", "conv_transpose3d")
def _conv_transpose(c):
    x, w, b = c.arg(0, "input"), c.arg(1, "weight"), c.arg(2, "bias")
    spatial = w.dim() - 2
    stride = _tuple(c.arg(3, "stride", 1), spatial)
    padding = _tuple(c.arg(4, "padding", 0), spatial)
    output_padding = _tuple(c.arg(5, "output_padding", 0), spatial)
    groups = int(c.arg(6, "groups", 1))
    dilation = _tuple(c.arg(7, "dilation", 1), spatial)
    g = c.g
    inputs = [tensor_name(g, x), tensor_name(g, w)] + ([tensor_name(g, b)] if b is not None else [])
    unbatched = x.dim() == spatial + 1
    if unbatched:
        inputs[0] = g.unsqueeze(inputs[0], [0])
    y = g.node("ConvTranspose", inputs, kernel_shape=list(w.shape[2:]), strides=stride,
               pads=list(padding) * 2, output_padding=output_padding, dilations=dilation,
               group=groups)
    c.out(g.squeeze(y, [0]) if unbatched else y)


def _pool_args(c, spatial, has_dilation):
    kernel = _tuple(c.arg(1, "kernel_size"), spatial)
    stride = c.arg(2, "stride")
    stride = kernel if stride is None or (isinstance(stride, (list, tuple)) and not stride) \
        else _tuple(stride, spatial)
    padding = _tuple(c.arg(3, "padding", 0), spatial)
    return kernel, stride, padding


def _batched(c, x, spatial, build):
    g = c.g
    name = tensor_name(g, x)
    unbatched = x.dim() == spatial + 1
    if unbatched:
        name = g.unsqueeze(name, [0])
    y = build(name)
    if isinstance(y, str):
        return g.squeeze(y, [0]) if unbatched else y
    return [g.squeeze(v, [0]) if unbatched else v for v in y]


@register("max_pool1d", "max_pool2d", "max_pool3d", "max_pool1d_with_indices",
          "max_pool2d_with_indices")
def _max_pool(c):
    x = c.arg(0)
    spatial = int(c.op[8])
    kernel, stride, padding = _pool_args(c, spatial, True)
    dilation = _tuple(c.arg(4, "dilation", 1), spatial)
    ceil_mode = int(bool(c.arg(5, "ceil_mode", False)))
    with_indices = isinstance(c.result, tuple)
    if with_indices:
        c.fail("returning indices has no ONNX form matching PyTorch's flat indices here")
    y = _batched(c, x, spatial, lambda n: c.g.node(
        "MaxPool", [n], kernel_shape=kernel, strides=stride, pads=list(padding) * 2,
        dilations=dilation, ceil_mode=ceil_mode))
    c.out(y)


@register("avg_pool1d", "avg_pool2d", "avg_pool3d")
def _avg_pool(c):
    x = c.arg(0)
    spatial = int(c.op[8])
    kernel, stride, padding = _pool_args(c, spatial, False)
    ceil_mode = int(bool(c.arg(4, "ceil_mode", False)))
    count_include_pad = int(bool(c.arg(5, "count_include_pad", True)))
    if c.arg(6, "divisor_override") is not None:
        c.fail("with divisor_override has no ONNX form")
    y = _batched(c, x, spatial, lambda n: c.g.node(
        "AveragePool", [n], kernel_shape=kernel, strides=stride, pads=list(padding) * 2,
        ceil_mode=ceil_mode, count_include_pad=count_include_pad))
    c.out(y)


@register("adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_max_pool1d",
          "adaptive_max_pool2d")
def _adaptive_pool(c):
    x = c.arg(0)
    spatial = int(c.op[-2])
    is_max = "max" in c.op
    result = c.result[0] if isinstance(c.result, tuple) else c.result
    if isinstance(c.result, tuple) and is_max:
        c.fail("returning indices has no ONNX form here")
    in_size = list(x.shape[-spatial:])
    out_size = list(result.shape[-spatial:])
    if all(o == 1 for o in out_size):
        op = "GlobalMaxPool" if is_max else "GlobalAveragePool"
        c.out(_batched(c, x, spatial, lambda n: c.g.node(op, [n])))
        return
    if any(i % o for i, o in zip(in_size, out_size)):
        c.fail(f"from size {in_size} to {out_size} (not a multiple) has no ONNX pooling form")
    kernel = [i // o for i, o in zip(in_size, out_size)]
    op = "MaxPool" if is_max else "AveragePool"
    c.out(_batched(c, x, spatial, lambda n: c.g.node(op, [n], kernel_shape=kernel,
                                                      strides=kernel)))


@register("batch_norm")
def _batch_norm(c):
    x = c.arg(0, "input")
    mean, var = c.arg(1, "running_mean"), c.arg(2, "running_var")
    weight, bias = c.arg(3, "weight"), c.arg(4, "bias")
    training = c.arg(5, "training", False)
    eps = float(c.arg(7, "eps", 1e-5))
    if training or mean is None:
        c.fail("in training mode (batch statistics): export the model in eval mode")
    g = c.g
    scale, shift = _affine(g, weight, bias, [x.shape[1]], x.dtype)
    name = tensor_name(g, x)
    if x.dim() == 2:  # (N, C): BatchNormalization wants spatial dims
        name = g.unsqueeze(name, [2])
    y = g.node("BatchNormalization", [name, scale, shift, tensor_name(g, mean),
                                      tensor_name(g, var)], epsilon=eps)
    c.out(g.squeeze(y, [2]) if x.dim() == 2 else y)


@register("layer_norm")
def _layer_norm(c):
    x = c.arg(0, "input")
    shape = c.arg(1, "normalized_shape")
    shape = [shape] if isinstance(shape, int) else list(shape)
    weight, bias = c.arg(2, "weight"), c.arg(3, "bias")
    eps = float(c.arg(4, "eps", 1e-5))
    g = c.g
    axis = -len(shape)
    name = tensor_name(g, x)
    np_dtype = np.float32 if x.dtype == ember.float32 else np.float64
    if g.opset >= 17 and x.dim() > 0:
        scale = tensor_name(g, weight) if weight is not None else g.constant(
            np.ones(shape, np_dtype))
        inputs = [name, scale] + ([tensor_name(g, bias)] if bias is not None else [])
        c.out(g.node("LayerNormalization", inputs, axis=axis, epsilon=eps))
        return
    axes = list(range(x.dim() + axis, x.dim()))
    y = _normalize(g, name, axes, eps, x.dtype)
    if weight is not None:
        y = g.node("Mul", [y, tensor_name(g, weight)])
    if bias is not None:
        y = g.node("Add", [y, tensor_name(g, bias)])
    c.out(y)


def _normalize(g, name, axes, eps, dtype):
    mean = g.reduce("ReduceMean", name, axes, True)
    diff = g.node("Sub", [name, mean])
    var = g.reduce("ReduceMean", g.node("Mul", [diff, diff]), axes, True)
    std = g.node("Sqrt", [g.node("Add", [var, g.scalar(eps, dtype)])])
    return g.node("Div", [diff, std])


@register("group_norm")
def _group_norm(c):
    x = c.arg(0, "input")
    groups = int(c.arg(1, "num_groups"))
    weight, bias = c.arg(2, "weight"), c.arg(3, "bias")
    eps = float(c.arg(4, "eps", 1e-5))
    g = c.g
    name = tensor_name(g, x)
    grouped = g.node("Reshape", [name, g.ints([0, groups, -1])])
    y = _normalize(g, grouped, [2], eps, x.dtype)
    y = g.node("Reshape", [y, g.node("Shape", [name])])
    affine_shape = [x.shape[1]] + [1] * (x.dim() - 2)
    if weight is not None:
        y = g.node("Mul", [y, g.node("Reshape", [tensor_name(g, weight), g.ints(affine_shape)])])
    if bias is not None:
        y = g.node("Add", [y, g.node("Reshape", [tensor_name(g, bias), g.ints(affine_shape)])])
    c.out(y)


@register("instance_norm")
def _instance_norm(c):
    x = c.arg(0, "input")
    weight, bias = c.arg(3, "weight"), c.arg(4, "bias")
    use_input_stats = c.arg(5, "use_input_stats", True)
    eps = float(c.arg(7, "eps", 1e-5))
    if not use_input_stats:
        c.fail("with running statistics (track_running_stats in eval) has no ONNX form here")
    g = c.g
    scale, shift = _affine(g, weight, bias, [x.shape[1]], x.dtype)
    c.out(g.node("InstanceNormalization", [tensor_name(g, x), scale, shift], epsilon=eps))


@register("rms_norm")
def _rms_norm(c):
    x = c.arg(0, "input")
    shape = c.arg(1, "normalized_shape")
    shape = [shape] if isinstance(shape, int) else list(shape)
    weight, eps = c.arg(2, "weight"), c.arg(3, "eps")
    if eps is None:
        eps = float(np.finfo(np.float32 if x.dtype == ember.float32 else np.float64).eps)
    g = c.g
    name = tensor_name(g, x)
    axes = list(range(x.dim() - len(shape), x.dim()))
    ms = g.reduce("ReduceMean", g.node("Mul", [name, name]), axes, True)
    y = g.node("Div", [name, g.node("Sqrt", [g.node("Add", [ms, g.scalar(eps, x.dtype)])])])
    if weight is not None:
        y = g.node("Mul", [y, tensor_name(g, weight)])
    c.out(y)


def _attention(g, q, k, v, mask, is_causal, scale):
    dtype = q.dtype
    if scale is None:
        scale = 1.0 / math.sqrt(q.shape[-1])
    perm = list(range(k.dim()))
    perm[-1], perm[-2] = perm[-2], perm[-1]
    kt = g.node("Transpose", [tensor_name(g, k)], perm=perm)
    scores = g.node("MatMul", [g.node("Mul", [tensor_name(g, q), g.scalar(scale, dtype)]), kt])
    length, source = q.shape[-2], k.shape[-2]
    if is_causal and g.opset >= 11:
        # Built from the scores' shape, so that dynamic sequence lengths stay dynamic:
        # position i masks the keys j > i.
        shape = g.node("Shape", [scores])
        zero, one = g.constant(np.asarray(0, np.int64)), g.constant(np.asarray(1, np.int64))
        rows = g.node("Range", [zero, g.squeeze(g.slice(shape, [-2], [-1], [0]), [0]), one])
        cols = g.node("Range", [zero, g.squeeze(g.slice(shape, [-1], [INT64_MAX], [0]), [0]),
                                one])
        above = g.node("Greater", [g.unsqueeze(cols, [0]), g.unsqueeze(rows, [1])])
        scores = g.node("Where", [above, g.scalar(-np.inf, dtype), scores])
    elif is_causal:
        causal = np.triu(np.full((length, source), -np.inf), 1).astype(
            np.float32 if dtype == ember.float32 else np.float64)
        scores = g.node("Add", [scores, g.constant(causal, "causal_mask")])
    if mask is not None:
        if mask.dtype == ember.bool:
            scores = g.node("Where", [tensor_name(g, mask), scores, g.scalar(-np.inf, dtype)])
        else:
            scores = g.node("Add", [scores, operand(g, mask, dtype)])
    weights = g.softmax("Softmax", scores, -1, q.dim())
    return g.node("MatMul", [weights, tensor_name(g, v)])


@register("scaled_dot_product_attention")
def _sdpa(c):
    q, k, v = c.arg(0, "query"), c.arg(1, "key"), c.arg(2, "value")
    if c.arg(4, "dropout_p", 0.0) and c.arg(None, "training", False):
        c.fail("with dropout in training mode")
    c.out(_attention(c.g, q, k, v, c.arg(3, "attn_mask"), bool(c.arg(5, "is_causal", False)),
                     c.arg(6, "scale")))


@register("_scaled_dot_product_flash_attention_for_cpu")
def _sdpa_cpu(c):
    q, k, v = c.arg(0, "query"), c.arg(1, "key"), c.arg(2, "value")
    out = _attention(c.g, q, k, v, c.arg(None, "attn_mask"), bool(c.arg(4, "is_causal", False)),
                     c.arg(None, "scale"))
    c.out(out, c.result[0])


@register("pad")
def _pad(c):
    x, pad = c.arg(0, "input"), list(c.arg(1, "pad"))
    mode = c.arg(2, "mode", "constant")
    value = c.arg(3, "value", None)
    g = c.g
    rank = x.dim()
    begins = [0] * rank
    ends = [0] * rank
    for i in range(len(pad) // 2):
        begins[rank - 1 - i] = int(pad[2 * i])
        ends[rank - 1 - i] = int(pad[2 * i + 1])
    onnx_mode = {"constant": "constant", "reflect": "reflect", "replicate": "edge",
                 "circular": "wrap"}.get(mode)
    if onnx_mode is None or (onnx_mode == "wrap" and g.opset < 19):
        c.fail(f"with mode={mode!r} has no ONNX form at opset {g.opset}")
    if g.opset < 11:
        c.out(g.node("Pad", [tensor_name(g, x)], mode=onnx_mode, pads=begins + ends,
                     value=float(0 if value is None else value)))
        return
    inputs = [tensor_name(g, x), g.ints(begins + ends)]
    if mode == "constant":
        inputs.append(g.scalar(0 if value is None else value, x.dtype))
    c.out(g.node("Pad", inputs, mode=onnx_mode))


@register("pixel_shuffle", "pixel_unshuffle")
def _pixel_shuffle(c):
    x, r = c.arg(0), int(c.arg(1))
    g = c.g
    if c.op == "pixel_shuffle" and x.dim() == 4 and g.opset >= 11:
        c.out(g.node("DepthToSpace", [tensor_name(g, x)], blocksize=r, mode="CRD"))
    elif c.op == "pixel_shuffle" and x.dim() == 4:
        n, ch, h, w = x.shape
        out_ch = ch // (r * r)
        y = g.node("Reshape", [tensor_name(g, x), g.ints([0, out_ch, r, r, h, w])])
        y = g.node("Transpose", [y], perm=[0, 1, 4, 2, 5, 3])
        c.out(g.node("Reshape", [y, g.ints([0, out_ch, h * r, w * r])]))
    elif x.dim() == 4:
        n, ch, h, w = x.shape
        y = g.node("Reshape", [tensor_name(g, x), g.ints([0, ch, h // r, r, w // r, r])])
        y = g.node("Transpose", [y], perm=[0, 1, 3, 5, 2, 4])
        c.out(g.node("Reshape", [y, g.ints([0, ch * r * r, h // r, w // r])]))
    else:
        c.fail("on tensors that are not 4-D has no ONNX form here")


@register("_upsample", "interpolate", "upsample")
def _upsample(c):
    x = c.arg(0)
    result = c.result
    mode = next((a for a in c.args if isinstance(a, str)), "nearest")
    align_corners = next((a for a in c.args[1:] if isinstance(a, bool)), False)
    g = c.g
    onnx_mode = {"nearest": "nearest", "nearest-exact": "nearest", "linear": "linear",
                 "bilinear": "linear", "trilinear": "linear", "bicubic": "cubic"}.get(mode)
    if onnx_mode is None:
        c.fail(f"with mode={mode!r} has no ONNX form here")
    if onnx_mode == "nearest":
        transform = "asymmetric" if mode == "nearest" else "half_pixel"
        nearest = "floor" if mode == "nearest" else "round_prefer_ceil"
    else:
        transform = "align_corners" if align_corners else "pytorch_half_pixel"
        nearest = "round_prefer_floor"
    scales = [1.0, 1.0] + [o / i for o, i in zip(result.shape[2:], x.shape[2:])]
    if g.opset < 11:
        if mode != "nearest":
            g.require(11, f"interpolate(mode={mode!r})")
        scales_name = g.constant(np.asarray(scales, np.float32))
        op = "Upsample" if g.opset < 10 else "Resize"
        c.out(g.node(op, [tensor_name(g, x), scales_name], mode="nearest"))
        return
    kwargs = {"cubic_coeff_a": -0.75} if onnx_mode == "cubic" else {}
    # roi: optional from opset 13, an (unused) empty tensor before.
    roi = "" if g.opset >= 13 else g.constant(np.zeros(0, np.float32), "roi")
    c.out(g.node("Resize", [tensor_name(g, x), roi, g.constant(np.asarray(scales, np.float32))],
                 mode=onnx_mode, coordinate_transformation_mode=transform, nearest_mode=nearest,
                 **kwargs))


# -- recurrent cells (the nn.RNN/LSTM/GRU modules run them step by step) -----------------------
def _gates(g, x, h, w_ih, w_hh, b_ih, b_hh):
    gi = g.node("MatMul", [tensor_name(g, x), g.node("Transpose", [tensor_name(g, w_ih)],
                                                     perm=[1, 0])])
    gh = g.node("MatMul", [h, g.node("Transpose", [tensor_name(g, w_hh)], perm=[1, 0])])
    if b_ih is not None:
        gi = g.node("Add", [gi, tensor_name(g, b_ih)])
    if b_hh is not None:
        gh = g.node("Add", [gh, tensor_name(g, b_hh)])
    return gi, gh


@register("lstm_cell")
def _lstm_cell(c):
    x, (h, cell) = c.arg(0, "input"), c.arg(1, "hx")
    w_ih, w_hh, b_ih, b_hh = (c.arg(i, n) for i, n in
                              ((2, "w_ih"), (3, "w_hh"), (4, "b_ih"), (5, "b_hh")))
    g = c.g
    gi, gh = _gates(g, x, tensor_name(g, h), w_ih, w_hh, b_ih, b_hh)
    hidden = h.shape[-1]
    i, f, gg, o = g.split(g.node("Add", [gi, gh]), [hidden] * 4, -1)
    c_next = g.node("Add", [g.node("Mul", [g.node("Sigmoid", [f]), tensor_name(g, cell)]),
                            g.node("Mul", [g.node("Sigmoid", [i]), g.node("Tanh", [gg])])])
    h_next = g.node("Mul", [g.node("Sigmoid", [o]), g.node("Tanh", [c_next])])
    g.output(c.result[0], h_next)
    g.output(c.result[1], c_next)


@register("gru_cell")
def _gru_cell(c):
    x, h = c.arg(0, "input"), c.arg(1, "hx")
    w_ih, w_hh, b_ih, b_hh = (c.arg(i, n) for i, n in
                              ((2, "w_ih"), (3, "w_hh"), (4, "b_ih"), (5, "b_hh")))
    g = c.g
    h_name = tensor_name(g, h)
    gi, gh = _gates(g, x, h_name, w_ih, w_hh, b_ih, b_hh)
    hidden = h.shape[-1]
    i_r, i_z, i_n = g.split(gi, [hidden] * 3, -1)
    h_r, h_z, h_n = g.split(gh, [hidden] * 3, -1)
    r = g.node("Sigmoid", [g.node("Add", [i_r, h_r])])
    z = g.node("Sigmoid", [g.node("Add", [i_z, h_z])])
    n = g.node("Tanh", [g.node("Add", [i_n, g.node("Mul", [r, h_n])])])
    # h' = (1 - z) * n + z * h = n + z * (h - n)
    c.out(g.node("Add", [n, g.node("Mul", [z, g.node("Sub", [h_name, n])])]))


@register("rnn_tanh_cell", "rnn_relu_cell")
def _rnn_cell(c):
    x, h = c.arg(0, "input"), c.arg(1, "hx")
    w_ih, w_hh, b_ih, b_hh = (c.arg(i, n) for i, n in
                              ((2, "w_ih"), (3, "w_hh"), (4, "b_ih"), (5, "b_hh")))
    g = c.g
    gi, gh = _gates(g, x, tensor_name(g, h), w_ih, w_hh, b_ih, b_hh)
    c.out(g.node("Tanh" if "tanh" in c.op else "Relu", [g.node("Add", [gi, gh])]))
