"""Recurrent layers over whole sequences, for nn.RNN / nn.LSTM / nn.GRU (PyTorch's
``_VF.rnn_tanh`` / ``_VF.rnn_relu`` / ``_VF.lstm`` / ``_VF.gru``, same signatures and results).

Each time step is one C++ cell op (``ember.lstm_cell`` etc.: both gate products and a fused
pointwise kernel, with its own backward); this module only walks the steps, layers and
directions. Two call forms, as PyTorch:

    lstm(input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first)
        -> (output, h_n, c_n)                    input (T, B, I) or (B, T, I), hx = (h_0, c_0)
    lstm(data, batch_sizes, hx, params, has_biases, num_layers, dropout, train, bidirectional)
        -> (output_data, h_n, c_n)               a packed sequence's data and batch sizes

``gru`` / ``rnn_tanh`` / ``rnn_relu`` take one hidden tensor and return (output, h_n).
``params`` is the flat weight list of the module: per layer, per direction, ``w_ih, w_hh``
then ``b_ih, b_hh`` when has_biases, then ``w_hr`` for an LSTM with projections (detected, as
PyTorch, from h_0 and c_0 having different sizes). The batch must already be in the packed
order (the module applies sorted_indices to hx).
"""

import ember

__all__ = ["gru", "lstm", "rnn_relu", "rnn_tanh", "cell_step"]


def cell_step(mode, x, state, w):
    """One step of a cell: mode 'LSTM' (state = (h, c), returns (h, c)), 'GRU', 'RNN_TANH' or
    'RNN_RELU' (state = h, returns h). w = (w_ih, w_hh, b_ih, b_hh, w_hr); biases and w_hr may be
    None."""
    w_ih, w_hh, b_ih, b_hh, w_hr = w
    if mode == "LSTM":
        h, c = ember.lstm_cell(x, state, w_ih, w_hh, b_ih, b_hh)
        if w_hr is not None:
            h = ember.matmul(h, w_hr.t())
        return h, c
    if mode == "GRU":
        return ember.gru_cell(x, state, w_ih, w_hh, b_ih, b_hh)
    if mode == "RNN_TANH":
        return ember.rnn_tanh_cell(x, state, w_ih, w_hh, b_ih, b_hh)
    return ember.rnn_relu_cell(x, state, w_ih, w_hh, b_ih, b_hh)


def _layer_weights(params, has_biases, has_proj, num_layers, num_directions):
    per = 2 + (2 if has_biases else 0) + (1 if has_proj else 0)
    expected = per * num_layers * num_directions
    if len(params) != expected:
        raise RuntimeError(
            f"rnn: expected {expected} weight tensors ({per} per layer and direction), "
            f"got {len(params)}"
        )
    out = []
    for k in range(num_layers * num_directions):
        p = list(params[k * per:(k + 1) * per])
        w_ih, w_hh = p[0], p[1]
        b_ih, b_hh = (p[2], p[3]) if has_biases else (None, None)
        w_hr = p[-1] if has_proj else None
        out.append((w_ih, w_hh, b_ih, b_hh, w_hr))
    return out


def _state(mode, hx, idx):
    if mode == "LSTM":
        return hx[0][idx], hx[1][idx]
    return hx[idx]


def _run_padded(mode, x, state, w, reverse):
    """x (T, B, I): the outputs (T, B, H) and the final state of one direction of one layer."""
    steps = range(x.size(0) - 1, -1, -1) if reverse else range(x.size(0))
    outs = [None] * x.size(0)
    for t in steps:
        state = cell_step(mode, x[t], state, w)
        outs[t] = state[0] if mode == "LSTM" else state
    if not outs:
        raise RuntimeError("rnn: expected a sequence of at least one time step")
    return ember.stack(outs, 0), state


def _run_packed(mode, data, batch_sizes, state, w, reverse):
    """Packed data (N, I), batch sizes per step: the packed outputs and the final state (each
    sequence's state after its own last step)."""
    lstm = mode == "LSTM"
    sizes = [int(b) for b in batch_sizes]
    starts = [0]
    for b in sizes[:-1]:
        starts.append(starts[-1] + b)
    outs = [None] * len(sizes)

    def rows(s, lo, hi):
        return (s[0][lo:hi], s[1][lo:hi]) if lstm else s[lo:hi]

    def join(a, b):
        if lstm:
            return ember.cat([a[0], b[0]], 0), ember.cat([a[1], b[1]], 0)
        return ember.cat([a, b], 0)

    if not reverse:
        # Sequences end as the batch shrinks: their final states are put aside, last rows first.
        finished = []
        cur = sizes[0]
        h = state
        for t, bs in enumerate(sizes):
            if bs < cur:
                finished.append(rows(h, bs, cur))
                h = rows(h, 0, bs)
                cur = bs
            h = cell_step(mode, data[starts[t]:starts[t] + bs], h, w)
            outs[t] = h[0] if lstm else h
        final = h
        for piece in reversed(finished):
            final = join(final, piece)
    else:
        # Backwards the batch grows: sequences join with their initial state.
        cur = 0
        h = None
        for t in range(len(sizes) - 1, -1, -1):
            bs = sizes[t]
            if bs > cur:
                fresh = rows(state, cur, bs)
                h = fresh if h is None else join(h, fresh)
                cur = bs
            h = cell_step(mode, data[starts[t]:starts[t] + bs], h, w)
            outs[t] = h[0] if lstm else h
        final = h
    return ember.cat(outs, 0), final


def _rnn_impl(mode, input, batch_sizes, hx, params, has_biases, num_layers, dropout, train,
              bidirectional, batch_first):
    lstm = mode == "LSTM"
    num_directions = 2 if bidirectional else 1
    has_proj = lstm and hx[0].size(-1) != hx[1].size(-1)
    weights = _layer_weights(params, has_biases, has_proj, num_layers, num_directions)
    packed = batch_sizes is not None
    x = input
    if not packed:
        if x.dim() != 3:
            raise RuntimeError(f"rnn: expected a 3-D input, got {x.dim()}-D")
        if batch_first:
            x = x.transpose(0, 1)
    final_h, final_c = [], []
    for layer in range(num_layers):
        outputs = []
        for d in range(num_directions):
            idx = layer * num_directions + d
            state = _state(mode, hx, idx)
            if packed:
                out, state = _run_packed(mode, x, batch_sizes, state, weights[idx], d == 1)
            else:
                out, state = _run_padded(mode, x, state, weights[idx], d == 1)
            outputs.append(out)
            if lstm:
                final_h.append(state[0])
                final_c.append(state[1])
            else:
                final_h.append(state)
        x = outputs[0] if num_directions == 1 else ember.cat(outputs, -1)
        if dropout > 0 and train and layer < num_layers - 1:
            x = ember.dropout(x, dropout, True)
    if not packed and batch_first:
        x = x.transpose(0, 1)
    h_n = ember.stack(final_h, 0)
    if lstm:
        return x, h_n, ember.stack(final_c, 0)
    return x, h_n


def _dispatch(mode, args):
    # (input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first)
    # or (data, batch_sizes, hx, params, has_biases, num_layers, dropout, train, bidirectional):
    # the fourth argument is has_biases (a bool) in the first form, params in the second.
    if len(args) == 9 and isinstance(args[3], bool):
        input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first = args
        return _rnn_impl(mode, input, None, hx, params, has_biases, num_layers, dropout, train,
                         bidirectional, batch_first)
    if len(args) == 9:
        data, batch_sizes, hx, params, has_biases, num_layers, dropout, train, bidirectional = args
        return _rnn_impl(mode, data, batch_sizes, hx, params, has_biases, num_layers, dropout,
                         train, bidirectional, False)
    raise TypeError(f"{mode.lower()}: expected 9 positional arguments, got {len(args)}")


def lstm(*args):
    """Multi-layer LSTM over a sequence; see the module docstring for the two call forms."""
    return _dispatch("LSTM", args)


def gru(*args):
    """Multi-layer GRU over a sequence; see the module docstring for the two call forms."""
    return _dispatch("GRU", args)


def rnn_tanh(*args):
    """Multi-layer Elman RNN (tanh) over a sequence."""
    return _dispatch("RNN_TANH", args)


def rnn_relu(*args):
    """Multi-layer Elman RNN (relu) over a sequence."""
    return _dispatch("RNN_RELU", args)
