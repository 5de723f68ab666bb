"""What the fuzzer never calls, and why. Everything public that is not listed here is fair game.

A fuzzer runs thousands of calls in one process, so a call must not change state that later calls
see (or that outlives the process), and must not block or touch the file system.
"""

# Whole namespaces left out.
EXCLUDED_PREFIXES = (
    "ember.utils",  # data loaders, worker processes, hooks that capture global state
    "ember.data",  # reads shards from files, runs pipe: commands
    "ember.multiprocessing",
    "ember.distributed",
    "ember.backends",  # global backend switches
    "ember.cuda",  # device management; no GPU in the fuzzer's process
    "ember.random",  # the RNG state (the fuzzer reseeds before every call itself)
    "ember.autograd",  # grad-mode and anomaly switches, hooks on the engine
    "ember.optim",  # optimisers mutate parameters; needs models, not tensors
    "ember.serialization",
    "ember.jit",
    "ember.compile",
    "ember.hub",
    "ember.onnx",
    "ember.testing",
)

# Single functions and methods left out, by path, with the reason.
EXCLUDED = {
    # file I/O
    "ember.save": "writes files",
    "ember.load": "reads files",
    "ember.from_file": "reads files",
    "Tensor.tofile": "writes files",
    # process-wide state
    "ember.set_num_threads": "global: thread count (the fuzzer sets it per child)",
    "ember.set_num_interop_threads": "global: thread count",
    "ember.set_default_dtype": "global: default dtype",
    "ember.set_default_tensor_type": "global: default dtype",
    "ember.set_default_device": "global: default device",
    "ember.manual_seed": "global: RNG state (reseeded before every call)",
    "ember.seed": "global: RNG state",
    "ember.set_rng_state": "global: RNG state",
    "ember.get_rng_state": "reads RNG state whose format differs from torch's",
    "ember.initial_seed": "RNG state",
    "ember.set_printoptions": "global: printing",
    "ember.printoptions": "global: printing (context manager)",
    "ember.set_grad_enabled": "global: grad mode",
    "ember.set_anomaly_enabled": "global: anomaly mode",
    "ember.set_detect_anomaly": "global: anomaly mode",
    "ember.use_deterministic_algorithms": "global switch",
    "ember.set_float32_matmul_precision": "global switch",
    "ember.set_flush_denormal": "global: FPU mode",
    "ember.set_warn_always": "global switch",
    "ember.enable_grad": "grad-mode context manager",
    "ember.no_grad": "grad-mode context manager",
    "ember.inference_mode": "grad-mode context manager",
    # objects whose identity or address is the result (differs between any two processes)
    "Tensor.data_ptr": "an address",
    "Tensor._storage_ptr": "an address",
    "Tensor.share_memory_": "creates shared-memory files",
    "Tensor.pin_memory": "needs a GPU driver",
    "Tensor.register_hook": "needs a callable",
    "Tensor.register_post_accumulate_grad_hook": "needs a callable",
    "Tensor.__array_wrap__": "NumPy protocol",
    "Tensor.__array__": "NumPy protocol",
    "Tensor.__dlpack__": "capsule, consumed once",
    "Tensor.__iter__": "an iterator object",
    "ember.from_dlpack": "needs a capsule",
    "ember.from_numpy": "needs a NumPy array",
    "ember.get_printoptions": "printing state",
}

# Dunder methods of Tensor that are fuzzed (the others are object protocol).
TENSOR_DUNDERS = {
    "__abs__", "__add__", "__and__", "__bool__", "__complex__", "__contains__", "__eq__",
    "__float__", "__floordiv__", "__ge__", "__getitem__", "__gt__", "__iadd__", "__iand__",
    "__ifloordiv__", "__ilshift__", "__imod__", "__imul__", "__index__", "__int__", "__invert__",
    "__ior__", "__ipow__", "__irshift__", "__isub__", "__itruediv__", "__ixor__", "__le__",
    "__len__", "__lshift__", "__lt__", "__matmul__", "__mod__", "__mul__", "__ne__", "__neg__",
    "__or__", "__pos__", "__pow__", "__radd__", "__rand__", "__rfloordiv__", "__rlshift__",
    "__rmatmul__", "__rmod__", "__rmul__", "__ror__", "__rpow__", "__rrshift__", "__rshift__",
    "__rsub__", "__rtruediv__", "__rxor__", "__setitem__", "__sub__", "__truediv__", "__xor__",
    "__repr__", "__str__", "__format__", "__imatmul__",
}  # fmt: skip

# ember.nn classes that are not fuzzed as modules (containers, bases, wrappers).
EXCLUDED_MODULES = {
    "Module", "Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict",
    "Parameter", "Buffer", "Identity", "Container", "UninitializedParameter",
    "UninitializedBuffer",
}  # fmt: skip


def excluded(path: str) -> bool:
    return path in EXCLUDED or any(path == p or path.startswith(p + ".") for p in EXCLUDED_PREFIXES)
