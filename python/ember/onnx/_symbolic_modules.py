"""Module-level translations: modules whose ops the trace should not see one by one.

``nn.RNN``, ``nn.LSTM`` and ``nn.GRU`` run their cells step by step over a packed layout, so
their traced ops would fix both the sequence length and the batch size. While exporting, their
``forward`` is wrapped: the module still runs (its ops hidden from the tracer) and ONNX's own
RNN/LSTM/GRU nodes, one per layer, are written for it, with dynamic sequence and batch axes.
"""

from __future__ import annotations

import numpy as np

import ember
from ember.onnx._graph import to_numpy
from ember.onnx.errors import UnsupportedOperatorError

# ONNX's gate orders from PyTorch's: LSTM (i, f, g, o) -> (i, o, f, c); GRU (r, z, n) -> (z, r, h)
_GATE_ORDER = {"LSTM": (0, 3, 1, 2), "GRU": (1, 0, 2), "RNN_TANH": (0,), "RNN_RELU": (0,)}
_OP = {"LSTM": "LSTM", "GRU": "GRU", "RNN_TANH": "RNN", "RNN_RELU": "RNN"}


def _gates(array, order):
    chunks = np.split(array, len(order), axis=0)
    return np.concatenate([chunks[i] for i in order], axis=0)


def _layer_initializers(g, module, layer):
    """W, R and B of one layer, both directions stacked, in ONNX's gate order."""
    order = _GATE_ORDER[module.mode]
    directions = 2 if module.bidirectional else 1
    ws, rs, bs = [], [], []
    for direction in range(directions):
        w_ih, w_hh, b_ih, b_hh, _ = module._layer_weights(layer, direction)
        ws.append(_gates(to_numpy(w_ih), order))
        rs.append(_gates(to_numpy(w_hh), order))
        if b_ih is not None:
            bs.append(np.concatenate([_gates(to_numpy(b_ih), order),
                                      _gates(to_numpy(b_hh), order)]))
    w = g.constant(np.stack(ws), f"{module.mode.lower()}_W")
    r = g.constant(np.stack(rs), f"{module.mode.lower()}_R")
    b = g.constant(np.stack(bs), f"{module.mode.lower()}_B") if bs else ""
    return w, r, b


def emit_rnn(g, module, input, hx, output, hidden):
    """Writes the ONNX nodes of ``module(input, hx)`` and binds ``output`` and ``hidden``."""
    if module.proj_size > 0:
        raise UnsupportedOperatorError("onnx.export: nn.LSTM with proj_size has no ONNX form")
    is_lstm = module.mode == "LSTM"
    directions = 2 if module.bidirectional else 1
    unbatched = input.dim() == 2
    x = g.value(input).name
    if unbatched:
        x = g.unsqueeze(x, [1])
    elif module.batch_first:
        x = g.node("Transpose", [x], perm=[1, 0, 2])
    states = []
    if hx is not None:
        for state in (hx if is_lstm else (hx,)):
            name = g.value(state).name
            states.append(g.unsqueeze(name, [1]) if unbatched else name)
    attributes = {"hidden_size": module.hidden_size,
                  "direction": "bidirectional" if directions == 2 else "forward"}
    if module.mode == "GRU":
        attributes["linear_before_reset"] = 1
    if module.mode in ("RNN_TANH", "RNN_RELU"):
        activation = "Tanh" if module.mode == "RNN_TANH" else "Relu"
        attributes["activations"] = [activation] * directions
    finals_h, finals_c = [], []
    for layer in range(module.num_layers):
        w, r, b = _layer_initializers(g, module, layer)
        inputs = [x, w, r, b, ""]
        lo, hi = layer * directions, (layer + 1) * directions
        for state in states:
            inputs.append(g.slice(state, [lo], [hi], [0]))
        while inputs[-1] == "":
            inputs.pop()
        outputs = 3 if is_lstm else 2
        results = g.node(_OP[module.mode], inputs, outputs=outputs, **attributes)
        y, y_h = results[0], results[1]
        finals_h.append(y_h)
        if is_lstm:
            finals_c.append(results[2])
        # Y is (seq, directions, batch, hidden): the next layer reads (seq, batch, dirs*hidden).
        y = g.node("Transpose", [y], perm=[0, 2, 1, 3])
        x = g.node("Reshape", [y, g.ints([0, 0, -1])])
    h_n = g.node("Concat", finals_h, axis=0) if len(finals_h) > 1 else finals_h[0]
    out = x
    if unbatched:
        out = g.squeeze(out, [1])
        h_n = g.squeeze(h_n, [1])
    elif module.batch_first:
        out = g.node("Transpose", [out], perm=[1, 0, 2])
    g.output(output, out)
    if is_lstm:
        c_n = g.node("Concat", finals_c, axis=0) if len(finals_c) > 1 else finals_c[0]
        if unbatched:
            c_n = g.squeeze(c_n, [1])
        g.output(hidden[0], h_n)
        g.output(hidden[1], c_n)
    else:
        g.output(hidden, h_n)


def wrap_modules(model, graph):
    """Wraps the forward of each recurrent submodule of ``model``; returns an undo function."""
    wrapped = []
    if not isinstance(model, ember.nn.Module):
        return lambda: None
    for module in model.modules():
        if isinstance(module, ember.nn.RNNBase):
            original = module.forward

            def forward(input, hx=None, _module=module, _original=original):
                # The module's own ops are hidden from the tracer in both runs (so that the
                # probe run and the trace see the same op sequence).
                graph.suspended += 1
                try:
                    output, hidden = _original(input, hx)
                finally:
                    graph.suspended -= 1
                results = [output] + (list(hidden) if isinstance(hidden, tuple) else [hidden])
                if not graph.emit_modules:  # the probe run: remember the result shapes
                    graph.module_shapes.append([tuple(t.shape) for t in results])
                    return output, hidden
                probe = graph.module_shapes.pop(0) if graph.module_shapes else None
                traced = graph.is_traced(input) or (hx is not None and any(
                    graph.is_traced(h) for h in (hx if isinstance(hx, tuple) else (hx,))))
                if traced:
                    graph.current_probe = {} if probe is None else {
                        id(t): shape for t, shape in zip(results, probe)}
                    graph.suspended += 1  # the ops emit_rnn runs (detach, ...) are not traced
                    try:
                        emit_rnn(graph, _module, input, hx, output, hidden)
                    finally:
                        graph.suspended -= 1
                return output, hidden

            module.forward = forward
            wrapped.append(module)

    def undo():
        for module in wrapped:
            del module.forward

    return undo
