"""Call generation: mutated op-database samples, signature-driven calls and random argument lists.

Each call i of a run with seed S comes from its own RNG seeded with (S, i), so one call can be
regenerated without the ones before it.
"""

from __future__ import annotations

import copy
import random

from . import values as V
from .spec import DTYPES

# Parameter name -> kind of value it takes (when the signature's type says nothing useful).
NAME_HINTS = {}
for _kind, _names in {
    "tensor": "input other self tensor x x1 x2 y weight bias target mat mat1 mat2 vec vec1 vec2 "
    "batch1 batch2 A B LU pivots index src source mask condition input1 input2 log_probs targets "
    "input_lengths target_lengths query key attn_mask anchor positive negative running_mean "
    "running_var hx cx w_ih w_hh b_ih b_hh offsets per_sample_weights boundaries sorted_sequence "
    "tau grid theta elements test_elements end exponent t1 t2 u v a b X Y lengths",
    "tensors": "tensors indices",
    "dim": "dim dim0 dim1 dim2 start_dim end_dim dimension axis axis0 axis1 source_dim",
    "int": "k n diagonal offset groups num_classes chunks sections upscale_factor "
    "downscale_factor bins minlength length start num_samples high low steps correction "
    "split_size decimals padding_idx ndim num_layers hidden_size input_size in_features "
    "out_features in_channels out_channels num_features num_embeddings embedding_dim blank base "
    "rank out_int32 ignore_index",
    "ints": "size shape dims kernel_size stride padding dilation output_padding output_size "
    "normalized_shape pad repeats sizes split_size_or_sections indices_or_sections shifts "
    "source destination perm reps",
    "float": "eps p alpha beta lambd negative_slope min max min_val max_val threshold margin "
    "momentum scale_factor dropout_p scale atol rtol delta nan posinf neginf rcond tol fill_value "
    "value lower upper init q weight_decay label_smoothing max_norm norm_type",
    "bool": "keepdim largest sorted stable descending inplace training unbiased align_corners "
    "ceil_mode count_include_pad return_indices return_inverse return_counts unitriangular "
    "transpose right as_tuple hermitian full_matrices some compute_uv log_target is_causal "
    "accumulate include_self full log_input sparse scale_grad_by_freq antialias pivot "
    "check_errors equal_nan requires_grad non_blocking copy batch_first bidirectional "
    "recompute_scale_factor left upper_ enable_gqa",
    "dtype": "dtype",
    "device": "device",
    "str": "reduction mode rounding_mode padding_mode approximate indexing UPLO driver "
    "interpolation equation side memory_format ord nonlinearity",
}.items():
    for _n in _names.split():
        NAME_HINTS.setdefault(_n, _kind)

STRING_CHOICES = {
    "reduction": ["none", "mean", "sum", "batchmean", "bogus"],
    "mode": ["nearest", "linear", "bilinear", "bicubic", "trilinear", "area", "nearest-exact",
             "constant", "reflect", "replicate", "circular", "sum", "mean", "max", "reduced",
             "complete", "r", "bogus"],
    "rounding_mode": ["trunc", "floor", None, "bogus"],
    "padding_mode": ["zeros", "reflect", "replicate", "circular", "border", "bogus"],
    "approximate": ["none", "tanh", "bogus"],
    "indexing": ["ij", "xy", "bogus"],
    "UPLO": ["L", "U", "l", "X"],
    "driver": [None, "gelsd", "gelsy", "gelss", "gels", "gesvd", "bogus"],
    "interpolation": ["linear", "lower", "higher", "midpoint", "nearest", "bogus"],
    "equation": ["ij,jk->ik", "ii->i", "i,i->", "...ij->...ji", "ab", "i->", "", "ij->jj"],
    "side": ["left", "right", "bogus"],
    "ord": ["fro", "nuc", 2, -2, 1, -1, 0, 3, {"f": "inf"}, {"f": "-inf"}, 0.5, "bogus"],
    "nonlinearity": ["tanh", "relu", "bogus"],
    "padding": ["same", "valid", 0, 1, [1, 1], "bogus"],
}  # fmt: skip

# Binary functions with dunder forms (for retargeting seeds).
DUNDERS = {
    "add": "add", "sub": "sub", "mul": "mul", "div": "truediv", "true_divide": "truediv",
    "floor_divide": "floordiv", "remainder": "mod", "pow": "pow", "matmul": "matmul",
    "bitwise_and": "and", "bitwise_or": "or", "bitwise_xor": "xor", "eq": "eq", "ne": "ne",
    "lt": "lt", "le": "le", "gt": "gt", "ge": "ge", "bitwise_left_shift": "lshift",
    "bitwise_right_shift": "rshift", "neg": "neg", "abs": "abs", "bitwise_not": "invert",
}  # fmt: skip

KWARG_POOL = ["out", "dim", "dtype", "keepdim", "alpha", "inplace", "out", "bogus_kw", "input"]


def hint_of(param: dict) -> str:
    t = (param.get("t") or "").lower()
    n = param["n"]
    if "list[tensor]" in t or "sequence[tensor]" in t or "tuple[tensor" in t:
        return "tensors"
    if t.endswith("tensor") or t == "tensor":
        return "tensor"
    if "supportsint" in t or t == "int":
        return NAME_HINTS.get(n, "int") if NAME_HINTS.get(n) in ("dim", "int") else "int"
    if t in ("float", "supportsfloat"):
        return "float"
    if t == "bool":
        return "bool"
    if t == "str":
        return "str"
    if n in NAME_HINTS:
        return NAME_HINTS[n]
    d = param.get("d")
    if d in ("True", "False"):
        return "bool"
    if d and d.lstrip("-").isdigit():
        return "int"
    if d and d.replace(".", "", 1).lstrip("-").replace("e-", "").isdigit():
        return "float"
    if d and d[:1] in "'\"":
        return "str"
    return "any"


class Generator:
    def __init__(self, catalog: dict):
        self.api = {e["path"]: e for e in catalog["api"]}
        sigs = catalog.get("signatures", {})
        for path, e in self.api.items():
            # torch's recorded parameter lists first where ember's own say nothing
            theirs = [
                [{"n": n, "k": k, "t": "", "d": d} for n, k, d in s] for s in sigs.get(path, [])
            ]
            ours = [s for s in e["sigs"] if s]
            e["all_sigs"] = ours + theirs or [[]]
        self.paths = sorted(p for p, e in self.api.items() if e["kind"] != "module")
        self.modules = sorted(p for p, e in self.api.items() if e["kind"] == "module")
        self.seeds: dict = {}
        for s in catalog.get("seeds", ()):
            self.seeds.setdefault(s["op"], []).append(s)
        self.seed_ops = sorted(self.seeds)

    # -- the entry point --------------------------------------------------------------------

    def call(self, seed: int, index: int) -> dict:
        rng = random.Random(f"{seed}:{index}")
        r = rng.random()
        if self.seed_ops and r < 0.55:
            c = self.from_seed(rng)
        elif r < 0.88 or not self.seed_ops:
            c = self.from_signature(rng, rng.choice(self.paths))
            if rng.random() < 0.3:
                c = self.mutate(rng, c)
        elif r < 0.93 and self.modules:
            c = self.module_call(rng)
        else:
            c = self.random_args(rng, rng.choice(self.paths))
        if self.api.get(c["fn"], {}).get("kind") == "attr":
            c["attr"] = True
        return c

    # -- strategies -------------------------------------------------------------------------

    def from_seed(self, rng) -> dict:
        seed = rng.choice(self.seeds[rng.choice(self.seed_ops)])
        c = {"fn": seed["fn"], "args": copy.deepcopy(seed["args"]),
             "kwargs": copy.deepcopy(seed["kwargs"])}  # fmt: skip
        if rng.random() < 0.25:
            c = self.retarget(rng, c)
        r = rng.random()
        if r < 0.15:
            return c  # valid as recorded: checks values over every dtype and layout
        for _ in range(rng.choice([1, 1, 1, 2, 2, 3])):
            c = self.mutate(rng, c)
        return c

    def retarget(self, rng, c: dict) -> dict:
        """The same call through another entry point: method, in-place method or dunder."""
        name = c["fn"].rsplit(".", 1)[-1]
        if c["fn"].startswith("Tensor.") or not c["args"]:
            return c
        options = []
        if f"Tensor.{name}" in self.api:
            options.append(f"Tensor.{name}")
        if f"Tensor.{name}_" in self.api:
            options.append(f"Tensor.{name}_")
        if name in DUNDERS:
            d = DUNDERS[name]
            options += [f"Tensor.{f}" for f in (f"__{d}__", f"__r{d}__", f"__i{d}__")
                        if f"Tensor.{f}" in self.api]  # fmt: skip
        if not options:
            return c
        c["fn"] = rng.choice(options)
        if c["fn"].endswith("_") and rng.random() < 0.8:
            c["kwargs"].pop("out", None)
        return c

    def mutate(self, rng, c: dict) -> dict:
        c = copy.deepcopy(c)
        args, kwargs = c["args"], c["kwargs"]
        r = rng.random()
        slots = [("a", i) for i in range(len(args))] + [("k", k) for k in kwargs]
        if r < 0.55 and slots:  # replace one argument by a hostile variant
            where, key = rng.choice(slots)
            box = args if where == "a" else kwargs
            box[key] = V.hostile_like(rng, box[key])
        elif r < 0.62 and slots:  # drop an argument (never a method's self)
            where, key = rng.choice(slots)
            if where == "a" and key == 0 and c["fn"].startswith("Tensor."):
                return c
            if where == "a":
                args.pop(key)
            else:
                kwargs.pop(key)
        elif r < 0.70:  # one argument too many
            args.append(V.hostile_value(rng))
        elif r < 0.78:  # a keyword from the usual pool
            kw = rng.choice(KWARG_POOL)
            kwargs[kw] = self.value_for(rng, kw if kw != "out" else "out", {"n": kw}, args)
        elif r < 0.86 and args:  # aliasing: out= or another argument is the first one
            if rng.random() < 0.5 and not c["fn"].startswith("Tensor."):
                kwargs["out"] = {"ref": 0}
            elif len(args) > 1:
                args[rng.randrange(1, len(args))] = {"ref": 0}
            else:
                args.append({"ref": 0})
        elif (
            r < 0.93 and args and isinstance(args[0], dict) and "tensor" in args[0]
        ):  # expanded / strided self
            t = dict(args[0]["tensor"])
            shape = t["s"]
            if shape and shape[0] == 1:
                t["s"] = [3] + shape[1:]
                t["v"] = t["v"] * 3
            t["l"] = rng.choice("XXSTO")
            args[0] = {"tensor": t}
        else:  # swap two arguments
            if len(args) >= 2:
                i, j = rng.sample(range(len(args)), 2)
                args[i], args[j] = args[j], args[i]
            elif args:
                args[0] = V.hostile_like(rng, args[0])
        return c

    def from_signature(self, rng, path: str) -> dict:
        e = self.api[path]
        params = list(rng.choice(e["all_sigs"]))
        args, kwargs = [], {}
        if path.startswith("Tensor."):
            args.append(V.rand_tensor(rng))
        for p in params:
            if p["k"] == "v":
                hint = hint_of(p)
                n = rng.choice([0, 1, 1, 2, 2, 3])
                if hint in ("ints", "any", "int"):
                    if rng.random() < 0.3:
                        args.append(self.value_for(rng, "ints", p, args))
                    else:
                        for _ in range(n):
                            args.append(V.rand_int(rng, 0.1))
                else:
                    args.extend(self.value_for(rng, hint, p, args) for _ in range(n))
                continue
            required = p["d"] is None
            if not required and rng.random() < 0.6:
                continue
            v = self.value_for(rng, hint_of(p), p, args)
            if p["k"] == "k" or (not required and rng.random() < 0.5):
                kwargs[p["n"]] = v
            else:
                if kwargs:  # positional after keywords would change meaning: keep it keyword
                    kwargs[p["n"]] = v
                else:
                    args.append(v)
        if rng.random() < 0.15:  # a hostile value in one place
            c = {"fn": path, "args": args, "kwargs": kwargs}
            return self.mutate(rng, c)
        return {"fn": path, "args": args, "kwargs": kwargs}

    def random_args(self, rng, path: str) -> dict:
        args = [V.hostile_value(rng) for _ in range(rng.randint(0, 4))]
        if path.startswith("Tensor.") and (not args or rng.random() < 0.8):
            args.insert(0, V.rand_tensor(rng))
        kwargs = {}
        if rng.random() < 0.2:
            kwargs[rng.choice(KWARG_POOL)] = V.hostile_value(rng)
        return {"fn": path, "args": args, "kwargs": kwargs}

    def module_call(self, rng) -> dict:
        path = rng.choice(self.modules)
        params = list(rng.choice(self.api[path]["all_sigs"]))
        ctor, ckw = [], {}
        for p in params:
            if p["k"] == "v" or (p["d"] is not None and rng.random() < 0.7):
                continue
            hint = hint_of(p)
            v = (
                rng.choice([1, 2, 3, 4])
                if hint in ("int", "any")
                else self.value_for(rng, hint, p, [])
            )
            if p["d"] is None and not ckw:
                ctor.append(v)
            else:
                ckw[p["n"]] = v
        args = [V.rand_tensor(rng, rng.choice(["float32", "float32", "float64"] + list(DTYPES)))]
        if rng.random() < 0.2:
            args.append(V.rand_tensor(rng))
        c = {"fn": path, "ctor": ctor, "ckw": ckw, "args": args, "kwargs": {}}
        if rng.random() < 0.2:
            c = self.mutate(rng, c)
        return c

    # -- values for one parameter -------------------------------------------------------------

    def value_for(self, rng, hint: str, p: dict, args: list):
        name = p.get("n", "")
        first = next((a["tensor"] for a in args if isinstance(a, dict) and "tensor" in a), None)
        ndim = len(first["s"]) if first else 2
        if name in STRING_CHOICES and rng.random() < 0.8:
            return rng.choice(STRING_CHOICES[name])
        if hint == "tensor" or name == "out":
            if first and rng.random() < 0.6:
                shape = first["s"]
                r = rng.random()
                if r < 0.2 and shape:
                    shape = shape[-1:]
                elif r < 0.3:
                    shape = []
                elif r < 0.4 and len(shape) >= 2:
                    shape = shape[::-1]
                dtype = first["d"] if rng.random() < 0.6 else None
                return V.rand_tensor(rng, dtype, shape)
            if (
                name in ("index", "indices", "target", "targets", "offsets", "pivots")
                and rng.random() < 0.6
            ):
                return V.rand_tensor(rng, "int64", None, special=False)
            if name in ("mask", "condition") and rng.random() < 0.6:
                return V.rand_tensor(rng, "bool", first["s"] if first else None)
            return V.rand_tensor(rng)
        if hint == "tensors":
            return {"list": [V.rand_tensor(rng, first["d"] if first else None,
                                           first["s"] if first and rng.random() < 0.6 else None)
                             for _ in range(rng.randint(1, 3))]}  # fmt: skip
        if hint == "dim":
            if rng.random() < 0.85:
                return rng.randint(-ndim - 1, max(ndim, 1))
            return V.hostile_like(rng, 0)
        if hint == "int":
            return V.rand_int(rng)
        if hint == "ints":
            r = rng.random()
            if r < 0.5:
                k = rng.randint(0, max(ndim, 1))
                return {
                    "list" if rng.random() < 0.5 else "tuple": [
                        V.rand_int(rng, 0.08) for _ in range(k)
                    ]
                }
            if r < 0.75:
                return V.rand_int(rng, 0.15)
            return V.rand_int_list(rng, 0.3)
        if hint == "float":
            return V.rand_float(rng) if rng.random() < 0.8 else V.rand_int(rng)
        if hint == "bool":
            return rng.random() < 0.5 if rng.random() < 0.9 else V.hostile_like(rng, True)
        if hint == "dtype":
            return V.rand_dtype_value(rng) if rng.random() < 0.85 else V.hostile_value(rng)
        if hint == "device":
            # no "meta": ember has no meta device, a single known gap that would differ everywhere
            return rng.choice(["cpu", {"dev": "cpu"}, "cuda", "cuda:0", None, 0, "bogus"])
        if hint == "str":
            return rng.choice(V.STRINGS)
        return V.hostile_value(rng)
