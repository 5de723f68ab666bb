"""RNN, LSTM, GRU and their single-step cells (``torch.nn.modules.rnn``).

The recurrences run one time step at a time through the fused C++ cell ops
(``rnn_tanh_cell``, ``rnn_relu_cell``, ``lstm_cell``, ``gru_cell``, PyTorch's ``_VF`` names),
each a single op with its own backward. Layers, directions, dropout between layers and packed
sequences are handled here. Parameter names and shapes are PyTorch's (``weight_ih_l0``,
``weight_hh_l0_reverse``, ``bias_ih_l1``, ``weight_hr_l0`` ...), so state_dicts interchange.
"""

import math
import numbers
import warnings
import weakref

import ember
from ember import Tensor
from ember.nn import functional as F
from ember.nn import init
from ember.nn.parameter import Parameter

from .module import Module

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]


def _cell_op(name):
    """The fused cell op ``name``: ember.nn.functional.<name>, else ember.<name> (where
    PyTorch has torch.<name>), else ember._C._nn.<name>."""
    op = getattr(F, name, None)
    if op is None:
        op = getattr(ember, name, None)
    if op is None:
        nn_ops = getattr(ember._C, "_nn", None)
        op = getattr(nn_ops, name, None)
    if op is None:
        raise RuntimeError(f"[{name}] the RNN cell op is not available in this build")
    return op


def _apply_permutation(tensor: Tensor, permutation: Tensor, dim: int = 1) -> Tensor:
    return tensor.index_select(dim, permutation)


def _packed_sequence_class():
    """ember.nn.utils.rnn.PackedSequence, looked up at call time (that module imports this
    package); None when the tree has no nn.utils.rnn, in which case no input is packed."""
    try:
        from ember.nn.utils.rnn import PackedSequence
    except ImportError:
        return None
    return PackedSequence


def _is_packed(input, packed_cls) -> bool:
    return packed_cls is not None and isinstance(input, packed_cls)


def _lstm_projected_step(x, h, c, w_ih, w_hh, b_ih, b_hh, w_hr):
    """One LSTM step with a projection (proj_size > 0): h' = (o * tanh(c')) @ w_hr^T. The
    fused lstm_cell has no projection, so the step is composed of ops (all differentiable), in
    the order of PyTorch's LSTMCell with projections: gates = linear(h) + linear(x), the
    pointwise step with c, then matmul by w_hr^T. Under autocast the two linears and the
    projection run in the lower precision, and c stays in its own dtype (float32 for a float32
    model), which gives PyTorch's dtypes: output and h in bfloat16, c in float32."""
    gates = F.linear(h, w_hh, b_hh) + F.linear(x, w_ih, b_ih)
    i, f, g, o = gates.chunk(4, 1)
    c_next = ember.sigmoid(f) * c + ember.sigmoid(i) * ember.tanh(g)
    h_next = ember.matmul(ember.sigmoid(o) * ember.tanh(c_next), w_hr.t())
    return h_next, c_next


class RNNBase(Module):
    """Parameters and the layer/direction/packing machinery shared by RNN, LSTM and GRU."""

    __constants__ = [
        "mode",
        "input_size",
        "hidden_size",
        "num_layers",
        "bias",
        "batch_first",
        "dropout",
        "bidirectional",
        "proj_size",
    ]

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, proj_size: int = 0, device=None,
                 dtype=None) -> None:
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__()
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        self._flat_weight_refs = []
        num_directions = 2 if bidirectional else 1

        if (
            not isinstance(dropout, numbers.Number)
            or not 0 <= dropout <= 1
            or isinstance(dropout, bool)
        ):
            raise ValueError(
                "dropout should be a number in range [0, 1] representing the probability of an "
                "element being zeroed"
            )
        if dropout > 0 and num_layers == 1:
            warnings.warn(
                "dropout option adds dropout after all but last recurrent layer, so non-zero "
                f"dropout expects num_layers greater than 1, but got dropout={dropout} and "
                f"num_layers={num_layers}",
                stacklevel=2,
            )
        if not isinstance(bias, bool):
            raise TypeError(f"bias should be of type bool, got: {type(bias).__name__}")
        if not isinstance(batch_first, bool):
            raise TypeError(
                f"batch_first should be of type bool, got: {type(batch_first).__name__}"
            )
        if not isinstance(input_size, int):
            raise TypeError(f"input_size should be of type int, got: {type(input_size).__name__}")
        if input_size <= 0:
            raise ValueError("input_size must be greater than zero")
        if not isinstance(hidden_size, int):
            raise TypeError(
                f"hidden_size should be of type int, got: {type(hidden_size).__name__}"
            )
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError(
                "proj_size should be a positive integer or zero to disable projections"
            )
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")

        if mode == "LSTM":
            gate_size = 4 * hidden_size
        elif mode == "GRU":
            gate_size = 3 * hidden_size
        elif mode in ("RNN_TANH", "RNN_RELU"):
            gate_size = hidden_size
        else:
            raise ValueError("Unrecognized RNN mode: " + mode)

        self._flat_weights_names = []
        self._all_weights = []
        for layer in range(num_layers):
            for direction in range(num_directions):
                real_hidden_size = proj_size if proj_size > 0 else hidden_size
                layer_input_size = input_size if layer == 0 else real_hidden_size * num_directions
                w_ih = Parameter(ember.empty((gate_size, layer_input_size), **factory_kwargs))
                w_hh = Parameter(ember.empty((gate_size, real_hidden_size), **factory_kwargs))
                b_ih = Parameter(ember.empty(gate_size, **factory_kwargs))
                b_hh = Parameter(ember.empty(gate_size, **factory_kwargs))
                if self.proj_size == 0:
                    layer_params = (w_ih, w_hh, b_ih, b_hh) if bias else (w_ih, w_hh)
                else:
                    w_hr = Parameter(ember.empty((proj_size, hidden_size), **factory_kwargs))
                    layer_params = (w_ih, w_hh, b_ih, b_hh, w_hr) if bias else (w_ih, w_hh, w_hr)

                suffix = "_reverse" if direction == 1 else ""
                param_names = ["weight_ih_l{}{}", "weight_hh_l{}{}"]
                if bias:
                    param_names += ["bias_ih_l{}{}", "bias_hh_l{}{}"]
                if self.proj_size > 0:
                    param_names += ["weight_hr_l{}{}"]
                param_names = [x.format(layer, suffix) for x in param_names]
                for name, param in zip(param_names, layer_params):
                    setattr(self, name, param)
                self._flat_weights_names.extend(param_names)
                self._all_weights.append(param_names)

        self._init_flat_weights()
        self.reset_parameters()

    def _init_flat_weights(self) -> None:
        self._flat_weights = [
            getattr(self, wn) if hasattr(self, wn) else None for wn in self._flat_weights_names
        ]
        self._flat_weight_refs = [
            weakref.ref(w) if w is not None else None for w in self._flat_weights
        ]
        self.flatten_parameters()

    def __setattr__(self, attr, value) -> None:
        # Keep _flat_weights in step with reassigned weight attributes.
        if hasattr(self, "_flat_weights_names") and attr in self._flat_weights_names:
            idx = self._flat_weights_names.index(attr)
            self._flat_weights[idx] = value
        super().__setattr__(attr, value)

    def flatten_parameters(self) -> None:
        """PyTorch packs the weights into one cuDNN buffer here; the CPU cells read each
        weight where it is, so there is nothing to do."""

    def _apply(self, fn, recurse=True):
        self._flat_weight_refs = []
        ret = super()._apply(fn, recurse)
        self._init_flat_weights()
        return ret

    def reset_parameters(self) -> None:
        """Every weight and bias from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))."""
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def check_input(self, input: Tensor, batch_sizes) -> None:
        if input.dtype != self._flat_weights[0].dtype:
            raise ValueError(
                f"RNN input dtype ({input.dtype}) does not match weight dtype "
                f"({self._flat_weights[0].dtype}). Convert input: "
                f"input.to({self._flat_weights[0].dtype}), or convert model: "
                f"model.to({input.dtype})"
            )
        expected_input_dim = 2 if batch_sizes is not None else 3
        if input.dim() != expected_input_dim:
            raise RuntimeError(
                f"input must have {expected_input_dim} dimensions, got {input.dim()}"
            )
        if self.input_size != input.size(-1):
            raise RuntimeError(
                "input.size(-1) must be equal to input_size. Expected "
                f"{self.input_size}, got {input.size(-1)}"
            )

    def get_expected_hidden_size(self, input: Tensor, batch_sizes):
        if batch_sizes is not None:
            mini_batch = int(batch_sizes[0])
        else:
            mini_batch = input.size(0) if self.batch_first else input.size(1)
        num_directions = 2 if self.bidirectional else 1
        size = self.proj_size if self.proj_size > 0 else self.hidden_size
        return (self.num_layers * num_directions, mini_batch, size)

    def check_hidden_size(self, hx: Tensor, expected_hidden_size,
                          msg: str = "Expected hidden size {}, got {}") -> None:
        if tuple(hx.size()) != tuple(expected_hidden_size):
            raise RuntimeError(msg.format(expected_hidden_size, list(hx.size())))

    def _weights_have_changed(self):
        for ref, name in zip(self._flat_weight_refs, self._flat_weights_names):
            weight = getattr(self, name) if hasattr(self, name) else None
            if weight is not None and ref is not None and ref() is not weight:
                return True
        return False

    def check_forward_args(self, input: Tensor, hidden: Tensor, batch_sizes) -> None:
        self.check_input(input, batch_sizes)
        expected_hidden_size = self.get_expected_hidden_size(input, batch_sizes)
        self.check_hidden_size(hidden, expected_hidden_size)

    def permute_hidden(self, hx: Tensor, permutation):
        if permutation is None:
            return hx
        return _apply_permutation(hx, permutation)

    def extra_repr(self) -> str:
        s = "{input_size}, {hidden_size}"
        if self.proj_size != 0:
            s += ", proj_size={proj_size}"
        if self.num_layers != 1:
            s += ", num_layers={num_layers}"
        if self.bias is not True:
            s += ", bias={bias}"
        if self.batch_first is not False:
            s += ", batch_first={batch_first}"
        if self.dropout != 0:
            s += ", dropout={dropout}"
        if self.bidirectional is not False:
            s += ", bidirectional={bidirectional}"
        return s.format(**self.__dict__)

    def _update_flat_weights(self) -> None:
        if self._weights_have_changed():
            self._init_flat_weights()

    def __getstate__(self):
        self._update_flat_weights()
        state = self.__dict__.copy()
        del state["_flat_weight_refs"]
        return state

    def __setstate__(self, d):
        super().__setstate__(d)
        if "proj_size" not in d:
            self.proj_size = 0
        self._flat_weights = [
            getattr(self, wn) if hasattr(self, wn) else None for wn in self._flat_weights_names
        ]
        self._flat_weight_refs = [
            weakref.ref(w) if w is not None else None for w in self._flat_weights
        ]

    @property
    def all_weights(self):
        return [[getattr(self, weight) for weight in weights] for weights in self._all_weights]

    # ------------------------------------------------------------------ the recurrence
    def _layer_weights(self, layer: int, direction: int):
        """(w_ih, w_hh, b_ih, b_hh, w_hr) of one layer and direction (None where absent)."""
        names = self._all_weights[layer * (2 if self.bidirectional else 1) + direction]
        weights = [getattr(self, n) for n in names]
        w_ih, w_hh = weights[0], weights[1]
        b_ih = b_hh = w_hr = None
        rest = weights[2:]
        if self.bias:
            b_ih, b_hh = rest[0], rest[1]
            rest = rest[2:]
        if self.proj_size > 0:
            w_hr = rest[0]
        return w_ih, w_hh, b_ih, b_hh, w_hr

    def _step(self, x, state, weights):
        """One time step of the cell: the new state ((h, c) for LSTM, h otherwise)."""
        w_ih, w_hh, b_ih, b_hh, w_hr = weights
        if self.mode == "LSTM":
            h, c = state
            if w_hr is not None:
                return _lstm_projected_step(x, h, c, w_ih, w_hh, b_ih, b_hh, w_hr)
            return tuple(_cell_op("lstm_cell")(x, (h, c), w_ih, w_hh, b_ih, b_hh))
        name = {"GRU": "gru_cell", "RNN_TANH": "rnn_tanh_cell", "RNN_RELU": "rnn_relu_cell"}
        return _cell_op(name[self.mode])(x, state, w_ih, w_hh, b_ih, b_hh)

    def _run_direction(self, data, batch_sizes, state0, weights, reverse):
        """Runs one direction of one layer over a packed time-major sequence.

        ``data`` holds the rows of all time steps one after the other, step t having
        ``batch_sizes[t]`` rows (the sequences still running, longest first). Returns the
        outputs in the same layout and the final state of every sequence (rows in batch order).
        Sequences that end stop updating: forwards their last state is set aside when the batch
        shrinks; backwards a sequence starts from its initial state when the batch grows.
        """
        is_lstm = self.mode == "LSTM"

        def rows(state, a, b):
            return tuple(s[a:b] for s in state) if is_lstm else state[a:b]

        def join(parts):
            if is_lstm:
                return tuple(ember.cat([p[k] for p in parts], 0) for k in range(2))
            return ember.cat(parts, 0)

        offsets = [0]
        for bs in batch_sizes:
            offsets.append(offsets[-1] + bs)
        steps = range(len(batch_sizes) - 1, -1, -1) if reverse else range(len(batch_sizes))
        outputs = [None] * len(batch_sizes)
        if not reverse:
            state = state0
            finished = []
            for t in steps:
                bs = batch_sizes[t]
                current = state[0].size(0) if is_lstm else state.size(0)
                if bs < current:
                    finished.append(rows(state, bs, current))
                    state = rows(state, 0, bs)
                state = self._step(data[offsets[t]:offsets[t + 1]], state, weights)
                outputs[t] = state[0] if is_lstm else state
            final = join([state] + finished[::-1]) if finished else state
        else:
            state = None
            for t in steps:
                bs = batch_sizes[t]
                have = 0 if state is None else (state[0].size(0) if is_lstm else state.size(0))
                if bs > have:
                    fresh = rows(state0, have, bs)
                    state = fresh if state is None else join([state, fresh])
                state = self._step(data[offsets[t]:offsets[t + 1]], state, weights)
                outputs[t] = state[0] if is_lstm else state
            final = state
        return ember.cat(outputs, 0), final

    def _run_layers(self, data, batch_sizes, hx):
        """All layers and directions over packed data; returns (output data, final h[, c])."""
        num_directions = 2 if self.bidirectional else 1
        is_lstm = self.mode == "LSTM"
        final_h, final_c = [], []
        layer_input = data
        for layer in range(self.num_layers):
            direction_outputs = []
            for direction in range(num_directions):
                idx = layer * num_directions + direction
                state0 = (hx[0][idx], hx[1][idx]) if is_lstm else hx[idx]
                out, final = self._run_direction(
                    layer_input, batch_sizes, state0, self._layer_weights(layer, direction),
                    reverse=(direction == 1),
                )
                direction_outputs.append(out)
                if is_lstm:
                    final_h.append(final[0])
                    final_c.append(final[1])
                else:
                    final_h.append(final)
            layer_output = (
                direction_outputs[0]
                if num_directions == 1
                else ember.cat(direction_outputs, 1)
            )
            if self.dropout > 0 and self.training and layer < self.num_layers - 1:
                layer_output = F.dropout(layer_output, self.dropout, True)
            layer_input = layer_output
        h_n = ember.stack(final_h, 0)
        if is_lstm:
            return layer_input, (h_n, ember.stack(final_c, 0))
        return layer_input, h_n

    def _run_padded(self, input, hx):
        """Runs a (T, B, *) or batch_first (B, T, *) input; returns (output, hidden)."""
        if self.batch_first:
            input = input.transpose(0, 1)
        seq_len, batch = input.size(0), input.size(1)
        data = input.reshape(seq_len * batch, input.size(2))
        out, hidden = self._run_layers(data, [batch] * seq_len, hx)
        out = out.reshape(seq_len, batch, out.size(-1))
        if self.batch_first:
            out = out.transpose(0, 1)
        return out, hidden

    def _zeros_hidden(self, input, max_batch_size, size):
        num_directions = 2 if self.bidirectional else 1
        return ember.zeros(
            (self.num_layers * num_directions, max_batch_size, size), dtype=input.dtype,
            device=input.device,
        )

    def _forward_impl(self, input, hx):
        """The forward shared by RNN and GRU (one hidden tensor)."""
        self._update_flat_weights()
        PackedSequence = _packed_sequence_class()
        orig_input = input
        is_batched = True
        batch_dim = 0 if self.batch_first else 1
        if _is_packed(orig_input, PackedSequence):
            input, batch_sizes, sorted_indices, unsorted_indices = input
            max_batch_size = int(batch_sizes[0])
            if hx is None:
                hx = self._zeros_hidden(input, max_batch_size, self.hidden_size)
            else:
                hx = self.permute_hidden(hx, sorted_indices)
        else:
            batch_sizes = None
            name = "RNN" if self.mode.startswith("RNN") else self.mode
            if input.dim() not in (2, 3):
                raise ValueError(
                    f"{name}: Expected input to be 2D or 3D, got {input.dim()}D "
                    + ("tensor instead" if name == "RNN" else "instead")
                )
            is_batched = input.dim() == 3
            if not is_batched:
                input = input.unsqueeze(batch_dim)
                if hx is not None:
                    if hx.dim() != 2:
                        raise RuntimeError(
                            "For unbatched 2-D input, hx should also be 2-D but got "
                            f"{hx.dim()}-D tensor"
                        )
                    hx = hx.unsqueeze(1)
            elif hx is not None and hx.dim() != 3:
                raise RuntimeError(
                    f"For batched 3-D input, hx should also be 3-D but got {hx.dim()}-D tensor"
                )
            max_batch_size = input.size(0) if self.batch_first else input.size(1)
            sorted_indices = None
            unsorted_indices = None
            if hx is None:
                hx = self._zeros_hidden(input, max_batch_size, self.hidden_size)
        self.check_forward_args(input, hx, batch_sizes)
        if batch_sizes is None:
            output, hidden = self._run_padded(input, hx)
        else:
            output, hidden = self._run_layers(input, [int(b) for b in batch_sizes.tolist()], hx)
        if _is_packed(orig_input, PackedSequence):
            output_packed = PackedSequence(output, batch_sizes, sorted_indices, unsorted_indices)
            return output_packed, self.permute_hidden(hidden, unsorted_indices)
        if not is_batched:
            output = output.squeeze(batch_dim)
            hidden = hidden.squeeze(1)
        return output, self.permute_hidden(hidden, unsorted_indices)


class RNN(RNNBase):
    """Elman RNN: h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh) (or relu).

    RNN(input_size, hidden_size, num_layers=1, nonlinearity='tanh', bias=True,
    batch_first=False, dropout=0.0, bidirectional=False, device=None, dtype=None)
    """

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            self.nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            self.nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if self.nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif self.nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(
                f"Unknown nonlinearity '{self.nonlinearity}'. Select from 'tanh' or 'relu'."
            )
        super().__init__(mode, *args, **kwargs)

    def forward(self, input, hx=None):
        return self._forward_impl(input, hx)


class LSTM(RNNBase):
    """Long short-term memory; ``proj_size > 0`` projects h to proj_size (LSTMP).

    LSTM(input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
    bidirectional=False, proj_size=0, device=None, dtype=None)
    """

    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)

    def get_expected_cell_size(self, input: Tensor, batch_sizes):
        if batch_sizes is not None:
            mini_batch = int(batch_sizes[0])
        else:
            mini_batch = input.size(0) if self.batch_first else input.size(1)
        num_directions = 2 if self.bidirectional else 1
        return (self.num_layers * num_directions, mini_batch, self.hidden_size)

    def check_forward_args(self, input: Tensor, hidden, batch_sizes) -> None:
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden[0], self.get_expected_hidden_size(input, batch_sizes),
                               "Expected hidden[0] size {}, got {}")
        self.check_hidden_size(hidden[1], self.get_expected_cell_size(input, batch_sizes),
                               "Expected hidden[1] size {}, got {}")

    def permute_hidden(self, hx, permutation):
        if permutation is None:
            return hx
        return _apply_permutation(hx[0], permutation), _apply_permutation(hx[1], permutation)

    def forward(self, input, hx=None):
        self._update_flat_weights()
        PackedSequence = _packed_sequence_class()
        orig_input = input
        batch_sizes = None
        is_batched = True
        batch_dim = 0 if self.batch_first else 1
        real_hidden_size = self.proj_size if self.proj_size > 0 else self.hidden_size
        if _is_packed(orig_input, PackedSequence):
            input, batch_sizes, sorted_indices, unsorted_indices = input
            max_batch_size = int(batch_sizes[0])
            if hx is None:
                hx = (
                    self._zeros_hidden(input, max_batch_size, real_hidden_size),
                    self._zeros_hidden(input, max_batch_size, self.hidden_size),
                )
            else:
                hx = self.permute_hidden(hx, sorted_indices)
        else:
            if input.dim() not in (2, 3):
                raise ValueError(f"LSTM: Expected input to be 2D or 3D, got {input.dim()}D instead")
            is_batched = input.dim() == 3
            if not is_batched:
                input = input.unsqueeze(batch_dim)
            max_batch_size = input.size(0) if self.batch_first else input.size(1)
            sorted_indices = None
            unsorted_indices = None
            if hx is None:
                hx = (
                    self._zeros_hidden(input, max_batch_size, real_hidden_size),
                    self._zeros_hidden(input, max_batch_size, self.hidden_size),
                )
            else:
                if is_batched:
                    if hx[0].dim() != 3 or hx[1].dim() != 3:
                        raise RuntimeError(
                            "For batched 3-D input, hx and cx should also be 3-D but got "
                            f"({hx[0].dim()}-D, {hx[1].dim()}-D) tensors"
                        )
                else:
                    if hx[0].dim() != 2 or hx[1].dim() != 2:
                        raise RuntimeError(
                            "For unbatched 2-D input, hx and cx should also be 2-D but got "
                            f"({hx[0].dim()}-D, {hx[1].dim()}-D) tensors"
                        )
                    hx = (hx[0].unsqueeze(1), hx[1].unsqueeze(1))
        self.check_forward_args(input, hx, batch_sizes)
        if batch_sizes is None:
            output, hidden = self._run_padded(input, hx)
        else:
            output, hidden = self._run_layers(input, [int(b) for b in batch_sizes.tolist()], hx)
        if _is_packed(orig_input, PackedSequence):
            output_packed = PackedSequence(output, batch_sizes, sorted_indices, unsorted_indices)
            return output_packed, self.permute_hidden(hidden, unsorted_indices)
        if not is_batched:
            output = output.squeeze(batch_dim)
            hidden = (hidden[0].squeeze(1), hidden[1].squeeze(1))
        return output, self.permute_hidden(hidden, unsorted_indices)


class GRU(RNNBase):
    """Gated recurrent unit.

    GRU(input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
    bidirectional=False, device=None, dtype=None)
    """

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)

    def forward(self, input, hx=None):
        return self._forward_impl(input, hx)


class RNNCellBase(Module):
    __constants__ = ["input_size", "hidden_size", "bias"]

    def __init__(self, input_size: int, hidden_size: int, bias: bool, num_chunks: int,
                 device=None, dtype=None) -> None:
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        self.weight_ih = Parameter(
            ember.empty((num_chunks * hidden_size, input_size), **factory_kwargs)
        )
        self.weight_hh = Parameter(
            ember.empty((num_chunks * hidden_size, hidden_size), **factory_kwargs)
        )
        if bias:
            self.bias_ih = Parameter(ember.empty(num_chunks * hidden_size, **factory_kwargs))
            self.bias_hh = Parameter(ember.empty(num_chunks * hidden_size, **factory_kwargs))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self) -> str:
        s = "{input_size}, {hidden_size}"
        if "bias" in self.__dict__ and self.bias is not True:
            s += ", bias={bias}"
        if "nonlinearity" in self.__dict__ and self.nonlinearity != "tanh":
            s += ", nonlinearity={nonlinearity}"
        return s.format(**self.__dict__)

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _batched(self, input, hx, name):
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        if hx is not None and hx.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected hidden to be 1D or 2D, got {hx.dim()}D instead")
        is_batched = input.dim() == 2
        if not is_batched:
            input = input.unsqueeze(0)
        if hx is None:
            hx = ember.zeros((input.size(0), self.hidden_size), dtype=input.dtype,
                             device=input.device)
        elif not is_batched:
            hx = hx.unsqueeze(0)
        return input, hx, is_batched


class RNNCell(RNNCellBase):
    """One Elman RNN step."""

    __constants__ = ["input_size", "hidden_size", "bias", "nonlinearity"]

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 nonlinearity: str = "tanh", device=None, dtype=None) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input: Tensor, hx=None) -> Tensor:
        input, hx, is_batched = self._batched(input, hx, "RNNCell")
        if self.nonlinearity == "tanh":
            op = _cell_op("rnn_tanh_cell")
        elif self.nonlinearity == "relu":
            op = _cell_op("rnn_relu_cell")
        else:
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        ret = op(input, hx, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        return ret if is_batched else ret.squeeze(0)


class LSTMCell(RNNCellBase):
    """One LSTM step: returns (h', c')."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None,
                 dtype=None) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device, dtype=dtype)

    def forward(self, input: Tensor, hx=None):
        if input.dim() not in (1, 2):
            raise ValueError(
                f"LSTMCell: Expected input to be 1D or 2D, got {input.dim()}D instead"
            )
        if hx is not None:
            for idx, value in enumerate(hx):
                if value.dim() not in (1, 2):
                    raise ValueError(
                        f"LSTMCell: Expected hx[{idx}] to be 1D or 2D, got {value.dim()}D instead"
                    )
        is_batched = input.dim() == 2
        if not is_batched:
            input = input.unsqueeze(0)
        if hx is None:
            zeros = ember.zeros((input.size(0), self.hidden_size), dtype=input.dtype,
                                device=input.device)
            hx = (zeros, zeros)
        elif not is_batched:
            hx = (hx[0].unsqueeze(0), hx[1].unsqueeze(0))
        ret = _cell_op("lstm_cell")(input, hx, self.weight_ih, self.weight_hh, self.bias_ih,
                                    self.bias_hh)
        if not is_batched:
            ret = (ret[0].squeeze(0), ret[1].squeeze(0))
        return tuple(ret)


class GRUCell(RNNCellBase):
    """One GRU step."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None,
                 dtype=None) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device, dtype=dtype)

    def forward(self, input: Tensor, hx=None) -> Tensor:
        input, hx, is_batched = self._batched(input, hx, "GRUCell")
        ret = _cell_op("gru_cell")(input, hx, self.weight_ih, self.weight_hh, self.bias_ih,
                                   self.bias_hh)
        return ret if is_batched else ret.squeeze(0)
