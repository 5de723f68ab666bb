"""ember.amp.GradScaler: dynamic loss scaling for mixed-precision training, with the API and
the behaviour of torch.amp.GradScaler.

The scale and the growth tracker are 0-d tensors (float32 and int32) on the device of the first
scaled output. unscale_ multiplies every gradient of an optimizer by 1/scale and records in a
0-d float32 ``found_inf`` (per device) whether any gradient held an inf or a NaN; step() runs
optimizer.step() only when none did; update() backs the scale off after a skipped step and grows
it after ``growth_interval`` consecutive good ones. PyTorch does the last two with the fused
kernels _amp_foreach_non_finite_check_and_unscale_ and _amp_update_scale_; here they are
ordinary Ember tensor ops (isfinite, mul_, where) with the same arithmetic: the scale update is
computed in float64 and rounded to float32, as the kernel does.
"""

import warnings
from collections import abc, defaultdict
from enum import Enum

import ember

__all__ = ["GradScaler", "OptState"]


class _MultiDeviceReplicator:
    """Serves copies of a tensor on the devices asked for, made once per device."""

    def __init__(self, master_tensor):
        self.master = master_tensor
        self._per_device_tensors = {}

    def get(self, device):
        tensor = self._per_device_tensors.get(device)
        if tensor is None:
            tensor = self.master.to(device=device, copy=True)
            self._per_device_tensors[device] = tensor
        return tensor


class OptState(Enum):
    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _refresh_per_optimizer_state():
    return {"stage": OptState.READY, "found_inf_per_device": {}}


def _non_finite_check_and_unscale_(grads, found_inf, inv_scale):
    """Multiply each of ``grads`` (same device) in place by ``inv_scale`` and set ``found_inf``
    to 1.0 if any element of any of them is inf or NaN (it is left as it was otherwise)."""
    if not grads:
        return
    finite = [ember.isfinite(g).all() for g in grads]
    all_finite = finite[0] if len(finite) == 1 else ember.stack(finite).all()
    found_inf.copy_(ember.maximum(found_inf, ember.logical_not(all_finite).to(found_inf.dtype)))
    for g in grads:
        if g.dtype in (ember.float32, ember.float64):
            g.mul_(inv_scale)
        else:
            # float16/bfloat16: multiply in float32 and round once, as PyTorch's kernel does.
            g.copy_(g.float().mul_(inv_scale))


def _update_scale_(scale, growth_tracker, found_inf, growth_factor, backoff_factor, interval):
    """PyTorch's _amp_update_scale_: after a step with infs/NaNs, scale *= backoff_factor and
    the tracker restarts; otherwise the tracker counts the step, and when it reaches
    ``interval`` the scale is multiplied by growth_factor (unless that overflows float32) and
    the tracker restarts. Branch-free, so that it never reads a value back from the device."""
    found = found_inf != 0
    successful = growth_tracker + 1
    grow = ember.logical_and(ember.logical_not(found), successful == interval)
    scale64 = scale.double()
    backed_off = (scale64 * backoff_factor).float()
    grown = (scale64 * growth_factor).float()
    grown = ember.where(ember.logical_and(grow, ember.isfinite(grown)), grown, scale)
    new_tracker = ember.where(
        ember.logical_or(found, grow), ember.zeros_like(growth_tracker), successful
    )
    scale.copy_(ember.where(found, backed_off, grown))
    growth_tracker.copy_(new_tracker)


def _device_type(device):
    if isinstance(device, str):
        return device.split(":", 1)[0]
    return getattr(device, "type", device)


class GradScaler:
    """Scales the loss so that small float16 gradients do not underflow, and unscales the
    gradients before the optimizer uses them::

        scaler = ember.amp.GradScaler()
        for input, target in data:
            optimizer.zero_grad()
            loss = loss_fn(model(input), target)
            scaler.scale(loss).backward()
            scaler.step(optimizer)      # skipped if the gradients hold infs/NaNs
            scaler.update()

    Args:
        device (str, default "cpu"): the device type the scaler works on. (PyTorch's default
            is "cuda"; Ember's is "cpu".) With "cuda" and no CUDA device, an enabled scaler
            warns and disables itself, as PyTorch's does.
        init_scale (float, default 2.**16): the initial scale factor.
        growth_factor (float, default 2.0): factor by which update() multiplies the scale after
            ``growth_interval`` consecutive steps without infs/NaNs.
        backoff_factor (float, default 0.5): factor by which update() multiplies the scale after
            a step with infs/NaNs.
        growth_interval (int, default 2000): the number of such consecutive steps.
        enabled (bool, default True): if False, scale() returns its argument, step() just calls
            optimizer.step() and the other methods do nothing.

    Only the default stepping path is implemented: gradients are unscaled and checked here and
    optimizer.step() runs when they are finite. Optimizers that set
    ``_step_supports_amp_scaling`` (Ember's fused Adam/AdamW/Adagrad/SGD accept the flag but not
    grad_scale/found_inf) take the same path.
    """

    # How far up the stack the "CUDA is not available" warning points (subclasses add a frame).
    _warn_stacklevel = 2

    def __init__(
        self,
        device="cpu",
        init_scale=2.0**16,
        growth_factor=2.0,
        backoff_factor=0.5,
        growth_interval=2000,
        enabled=True,
    ):
        self._device = _device_type(device)
        self._enabled = enabled
        if self._device == "cuda" and enabled and not ember.cuda.is_available():
            warnings.warn(
                "ember.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling.",
                stacklevel=self._warn_stacklevel,
            )
            self._enabled = False

        if self._enabled:
            if growth_factor <= 1.0:
                raise AssertionError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")
            self._init_scale = init_scale
            self._scale = None  # 0-d float32, created by the first scale()
            self._growth_factor = growth_factor
            self._backoff_factor = backoff_factor
            self._growth_interval = growth_interval
            self._init_growth_tracker = 0
            self._growth_tracker = None  # 0-d int32, created with _scale
            self._per_optimizer_states = defaultdict(_refresh_per_optimizer_state)

    def _check_scale_growth_tracker(self, funcname):
        fix = (
            "This may indicate your script did not use scaler.scale(loss or outputs) earlier "
            "in the iteration."
        )
        if self._scale is None:
            raise AssertionError(f"Attempted {funcname} but _scale is None.  " + fix)
        if self._growth_tracker is None:
            raise AssertionError(f"Attempted {funcname} but _growth_tracker is None.  " + fix)
        return self._scale, self._growth_tracker

    def _lazy_init_scale_growth_tracker(self, dev):
        if self._growth_tracker is not None:
            raise AssertionError("_growth_tracker initialized before _scale")
        self._scale = ember.full((), self._init_scale, dtype=ember.float32, device=dev)
        self._growth_tracker = ember.full(
            (), self._init_growth_tracker, dtype=ember.int32, device=dev
        )

    def scale(self, outputs):
        """Multiply a tensor, or the tensors of a (nested) list, tuple or other iterable, by the
        scale factor and return the result in the same structure (an iterable that is not a list
        or tuple comes back as a lazy ``map``, as in PyTorch). Disabled: returns ``outputs``."""
        if not self._enabled:
            return outputs

        if isinstance(outputs, ember.Tensor):
            if self._scale is None:
                self._lazy_init_scale_growth_tracker(outputs.device)
            return outputs * self._scale.to(device=outputs.device)

        stash = []  # the replicator of the scale, made at the first tensor

        def apply_scale(val):
            if isinstance(val, ember.Tensor):
                if not stash:
                    if self._scale is None:
                        self._lazy_init_scale_growth_tracker(val.device)
                    stash.append(_MultiDeviceReplicator(self._scale))
                return val * stash[0].get(val.device)
            if isinstance(val, abc.Iterable) and not isinstance(val, (str, bytes)):
                iterable = map(apply_scale, val)
                if isinstance(val, (list, tuple)):
                    if hasattr(val, "_fields"):  # a namedtuple takes its fields positionally
                        return type(val)(*iterable)
                    return type(val)(iterable)
                return iterable
            raise ValueError("outputs must be a Tensor or an iterable of Tensors")

        return apply_scale(outputs)

    def _unscale_grads_(self, optimizer, inv_scale, found_inf, allow_fp16):
        per_device_inv_scale = _MultiDeviceReplicator(inv_scale)
        per_device_found_inf = _MultiDeviceReplicator(found_inf)
        per_device_grads = defaultdict(list)
        with ember.no_grad():
            for group in optimizer.param_groups:
                for param in group["params"]:
                    if not isinstance(param, ember.Tensor):
                        raise AssertionError(
                            f"expected param to be ember.Tensor, got {type(param).__name__}"
                        )
                    grad = param.grad
                    if grad is None:
                        continue
                    if not allow_fp16 and grad.dtype == ember.float16:
                        raise ValueError("Attempting to unscale FP16 gradients.")
                    per_device_grads[grad.device].append(grad)
            for device, grads in per_device_grads.items():
                _non_finite_check_and_unscale_(
                    grads, per_device_found_inf.get(device), per_device_inv_scale.get(device)
                )
        return per_device_found_inf._per_device_tensors

    def unscale_(self, optimizer):
        """Divide ("unscale") the gradients of ``optimizer``'s parameters by the scale factor, in
        place, and record whether any of them held an inf or a NaN. Optional: step() unscales if
        this was not called; call it to inspect or clip the true gradients before step(). At
        most once per optimizer between update()s, and not after step() (RuntimeError)."""
        if not self._enabled:
            return

        self._check_scale_growth_tracker("unscale_")

        optimizer_state = self._per_optimizer_states[id(optimizer)]
        if optimizer_state["stage"] is OptState.UNSCALED:
            raise RuntimeError(
                "unscale_() has already been called on this optimizer since the last update()."
            )
        elif optimizer_state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")

        # The reciprocal is taken in float64 and rounded to float32 once, as in PyTorch.
        inv_scale = self._scale.double().reciprocal().float()
        found_inf = ember.full((), 0.0, dtype=ember.float32, device=self._scale.device)

        optimizer_state["found_inf_per_device"] = self._unscale_grads_(
            optimizer, inv_scale, found_inf, False
        )
        optimizer_state["stage"] = OptState.UNSCALED

    def _maybe_opt_step(self, optimizer, optimizer_state, *args, **kwargs):
        retval = None
        if not sum(v.item() for v in optimizer_state["found_inf_per_device"].values()):
            retval = optimizer.step(*args, **kwargs)
        return retval

    def step(self, optimizer, *args, **kwargs):
        """Unscale ``optimizer``'s gradients (unless unscale_ did already) and, if none held an
        inf or a NaN, call ``optimizer.step(*args, **kwargs)`` and return what it returns;
        otherwise skip the step and return None. Closures are not supported (RuntimeError)."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)

        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")

        self._check_scale_growth_tracker("step")

        optimizer_state = self._per_optimizer_states[id(optimizer)]
        if optimizer_state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")

        if optimizer_state["stage"] is OptState.READY:
            self.unscale_(optimizer)

        if len(optimizer_state["found_inf_per_device"]) == 0:
            raise AssertionError("No inf checks were recorded for this optimizer.")

        retval = self._maybe_opt_step(optimizer, optimizer_state, *args, **kwargs)
        optimizer_state["stage"] = OptState.STEPPED
        return retval

    def update(self, new_scale=None):
        """Update the scale factor at the end of an iteration: multiply it by backoff_factor if
        any optimizer's step was skipped, by growth_factor after growth_interval consecutive
        unskipped iterations. ``new_scale`` (a float or a 1-element tensor without grad on the
        scaler's device type) sets the scale instead. Call it after step() for every optimizer
        of the iteration."""
        if not self._enabled:
            return

        _scale, _growth_tracker = self._check_scale_growth_tracker("update")

        if new_scale is not None:
            if isinstance(new_scale, (float, int)) and not isinstance(new_scale, bool):
                self._scale.fill_(float(new_scale))
            else:
                reason = (
                    "new_scale should be a float or a 1-element ember.FloatTensor with "
                    "requires_grad=False."
                )
                if not isinstance(new_scale, ember.Tensor):
                    raise AssertionError(reason)
                if new_scale.device.type != self._device:
                    raise AssertionError(reason)
                if new_scale.numel() != 1:
                    raise AssertionError(reason)
                if new_scale.requires_grad is True:
                    raise AssertionError(reason)
                self._scale.copy_(new_scale.reshape(()))
        else:
            found_infs = [
                found_inf.to(device=_scale.device)
                for state in self._per_optimizer_states.values()
                for found_inf in state["found_inf_per_device"].values()
            ]
            if len(found_infs) == 0:
                raise AssertionError("No inf checks were recorded prior to update.")

            found_inf_combined = found_infs[0]
            for found_inf in found_infs[1:]:
                found_inf_combined = found_inf_combined + found_inf

            _update_scale_(
                _scale,
                _growth_tracker,
                found_inf_combined,
                self._growth_factor,
                self._backoff_factor,
                self._growth_interval,
            )

        self._per_optimizer_states = defaultdict(_refresh_per_optimizer_state)

    def _get_scale_async(self):
        return self._scale

    def get_scale(self):
        """The current scale factor as a Python float (1.0 if the scaler is disabled)."""
        if self._enabled:
            scale = self._get_scale_async()
            return self._init_scale if scale is None else scale.item()
        return 1.0

    def get_growth_factor(self):
        """The scale growth factor."""
        return self._growth_factor

    def set_growth_factor(self, new_factor):
        """Set the scale growth factor."""
        self._growth_factor = new_factor

    def get_backoff_factor(self):
        """The scale backoff factor."""
        return self._backoff_factor

    def set_backoff_factor(self, new_factor):
        """Set the scale backoff factor."""
        self._backoff_factor = new_factor

    def get_growth_interval(self):
        """The growth interval."""
        return self._growth_interval

    def set_growth_interval(self, new_interval):
        """Set the growth interval."""
        self._growth_interval = new_interval

    def _get_growth_tracker(self):
        if self._enabled:
            if self._growth_tracker is None:
                return self._init_growth_tracker
            return self._growth_tracker.item()
        return 0

    def is_enabled(self):
        """Whether this scaler is enabled."""
        return self._enabled

    def state_dict(self):
        """The scaler's state: "scale", "growth_factor", "backoff_factor", "growth_interval"
        and "_growth_tracker" (the count of recent consecutive unskipped steps); an empty dict
        if the scaler is disabled. Take it after update() to checkpoint an iteration."""
        if self._enabled:
            return {
                "scale": self.get_scale(),
                "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor,
                "growth_interval": self._growth_interval,
                "_growth_tracker": self._get_growth_tracker(),
            }
        return {}

    def load_state_dict(self, state_dict):
        """Load a state from state_dict(). A no-op if this scaler is disabled; RuntimeError for
        the empty dict of a disabled scaler."""
        if not self._enabled:
            return

        if len(state_dict) == 0:
            raise RuntimeError(
                "The source state dict is empty, possibly because it was saved "
                "from a disabled instance of GradScaler."
            )

        self._init_scale = state_dict["scale"]
        if self._scale is not None:
            self._scale.fill_(state_dict["scale"])
        self._growth_factor = state_dict["growth_factor"]
        self._backoff_factor = state_dict["backoff_factor"]
        self._growth_interval = state_dict["growth_interval"]
        self._init_growth_tracker = state_dict["_growth_tracker"]
        if self._growth_tracker is not None:
            self._growth_tracker.fill_(state_dict["_growth_tracker"])

    def __getstate__(self):
        state = self.__dict__.copy()
        if self._enabled:
            if len(self._per_optimizer_states) != 0:
                raise AssertionError(
                    "A GradScaler instance may only be pickled at the beginning "
                    "of an iteration, or at the end after scaler.update()."
                )
            # The tensors are not pickled: their values become the initial values, and the
            # unpickled scaler creates fresh tensors on its first scale().
            state["_init_scale"] = self.get_scale()
            state["_init_growth_tracker"] = self._get_growth_tracker()
            state["_scale"] = None
            state["_growth_tracker"] = None
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)

    def _check_inf_per_device(self, optimizer):
        _scale, _ = self._check_scale_growth_tracker("_check_inf_per_device")

        dummy_inv_scale = ember.full((), 1.0, dtype=ember.float32, device=_scale.device)
        found_inf = ember.full((), 0.0, dtype=ember.float32, device=_scale.device)

        self._per_optimizer_states[id(optimizer)]["found_inf_per_device"] = self._unscale_grads_(
            optimizer, dummy_inv_scale, found_inf, True
        )

        return self._per_optimizer_states[id(optimizer)]["found_inf_per_device"]

    def _found_inf_per_device(self, optimizer):
        return self._per_optimizer_states[id(optimizer)]["found_inf_per_device"]
