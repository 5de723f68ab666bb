"""One training step of a small decoder-only language model, Ember vs PyTorch.

The model (written once, `build(lib)`, for `lib` = torch or ember): token embedding (vocab 8192)
plus a learned positional embedding, 4 pre-norm blocks (LayerNorm -> fused qkv Linear(256, 768)
-> 4 heads of 64 -> causal scaled_dot_product_attention -> out Linear -> residual; LayerNorm ->
Linear(256, 1024) -> GELU -> Linear(1024, 256) -> residual), a final LayerNorm and an LM head
Linear(256, 8192, bias=False); d_model 256, sequence 256, batch 16, cross-entropy over the
next tokens, AdamW(lr=3e-4, weight_decay=0.1). One step: zero_grad(set_to_none=True), forward
and loss, backward, optimizer step. Both libraries start from the same weights (PyTorch's
state_dict copied into the Ember model) and see the same random batch; the first two steps'
losses are compared (relative tolerance 1e-4). Steps are timed alternately (ember, torch, ...)
after 2 warm-up steps each; the table gives the median step and the median of each phase
(forward + loss, backward, optimizer step). 1 and 2 threads, each in its own process. Goal:
Ember's step at most 0.8x PyTorch's time.

To show where a gap comes from: --segments times each op inside the step (forward inline,
backward by gradient hooks on the intermediates; totals per op over the layers), and --ops
times the model's ops alone at its shapes (the linears' GEMMs and their backward, layer_norm,
gelu, the attention's reshapes, causal SDPA, cross_entropy, the embeddings, AdamW over all
parameters), weighted by their count per step.

    PYTHONPATH=build/python python benchmarks/bench_lm_training.py [--threads 1 2] [--steps 7]
        [--segments] [--ops] [--json benchmarks/results/lm_training.json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

VOCAB, D_MODEL, HEADS, LAYERS, SEQ, BATCH, D_FF = 8192, 256, 4, 4, 256, 16, 1024
LR, WEIGHT_DECAY = 3e-4, 0.1
GOAL = 0.8
PHASES = ("forward", "backward", "optimizer")
DEFAULT_JSON = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results",
                            "lm_training.json")


class Segments:
    """In-model times of each op of a step (--segments). mark(t, op, bwd_op) after an op notes
    the forward time since the previous mark as `op`'s and hooks t's gradient: the time between
    one hook and the one before it in the backward is `bwd_op`'s, the op between them (both
    libraries run eagerly and synchronously on the CPU)."""

    def __init__(self):
        self.fwd: list[tuple[str, float]] = []
        self.bwd: list[tuple[str, float]] = []
        self.optimizer_s = 0.0

    def __call__(self, t, op: str, bwd_op: str):
        self.fwd.append((op, time.perf_counter()))
        t.register_hook(lambda g: self.bwd.append((bwd_op, time.perf_counter())))
        return t

    def times(self) -> dict[str, float]:
        out: dict[str, float] = {}
        for prefix, marks in (("fwd ", self.fwd), ("bwd ", sorted(self.bwd, key=lambda m: m[1]))):
            for (_, ta), (op, tb) in zip(marks, marks[1:]):
                out[prefix + op] = out.get(prefix + op, 0.0) + tb - ta
        out["optimizer (zero_grad, step)"] = self.optimizer_s
        return out


def _no_mark(t, op, bwd_op):
    return t


LN_BWD = "layer_norm (+ residual grad sum)"


def build(lib):
    """The language model as lib.nn.Modules (lib: the torch or the ember module). Its `mark`
    attribute (a Segments, for --segments) times the ops; by default it does nothing."""
    nn, F = lib.nn, lib.nn.functional

    class Block(nn.Module):
        def __init__(self, lm):
            super().__init__()
            self.lm = [lm]  # a list: not a submodule
            self.ln1 = nn.LayerNorm(D_MODEL)
            self.qkv = nn.Linear(D_MODEL, 3 * D_MODEL)
            self.proj = nn.Linear(D_MODEL, D_MODEL)
            self.ln2 = nn.LayerNorm(D_MODEL)
            self.fc1 = nn.Linear(D_MODEL, D_FF)
            self.act = nn.GELU()
            self.fc2 = nn.Linear(D_FF, D_MODEL)

        def forward(self, x):
            m = self.lm[0].mark
            B, T, C = x.shape
            a = m(self.ln1(x), "layer_norm", "linear qkv")
            qkv = m(self.qkv(a), "linear qkv", "attention reshapes")
            qkv = qkv.view(B, T, 3, HEADS, C // HEADS).permute(2, 0, 3, 1, 4)
            # q, k, v: (B, HEADS, T, C // HEADS)
            q, k, v = (m(qkv[i], "attention reshapes", "sdpa causal") for i in range(3))
            y = m(F.scaled_dot_product_attention(q, k, v, is_causal=True), "sdpa causal",
                  "attention reshapes")
            z = m(y.transpose(1, 2).reshape(B, T, C), "attention reshapes", "linear proj")
            x = m(x + m(self.proj(z), "linear proj", "residual add"), "residual add", LN_BWD)
            d = m(self.fc1(m(self.ln2(x), "layer_norm", "linear fc1")), "linear fc1", "gelu")
            f = m(self.fc2(m(self.act(d), "gelu", "linear fc2")), "linear fc2", "residual add")
            return m(x + f, "residual add", LN_BWD)

    class LM(nn.Module):
        def __init__(self):
            super().__init__()
            self.mark = _no_mark
            self.tok = nn.Embedding(VOCAB, D_MODEL)
            self.pos = nn.Embedding(SEQ, D_MODEL)
            self.blocks = nn.ModuleList([Block(self) for _ in range(LAYERS)])
            self.ln_f = nn.LayerNorm(D_MODEL)
            self.head = nn.Linear(D_MODEL, VOCAB, bias=False)

        def forward(self, idx):
            m = self.mark
            T = idx.shape[1]
            x = m(self.tok(idx) + self.pos(lib.arange(T)), "embeddings", LN_BWD)
            for block in self.blocks:
                x = block(x)
            x = m(self.ln_f(x), "layer_norm", "linear head")
            return m(self.head(x), "linear head", "cross_entropy")

    return LM()


class Trainer:
    """A model, its AdamW and one batch; step() runs one training step and records the seconds
    of each phase."""

    def __init__(self, lib, model, idx, targets):
        self.lib, self.model, self.idx, self.targets = lib, model, idx, targets
        self.optimizer = lib.optim.AdamW(model.parameters(), lr=LR, weight_decay=WEIGHT_DECAY)
        self.times: dict[str, list[float]] = {p: [] for p in (*PHASES, "step")}

    def step(self, record: bool = True, segments: Segments | None = None) -> float:
        """One training step; with `segments`, the model's ops are timed into it (the
        optimizer's zero_grad and step included, as "optimizer")."""
        F = self.lib.nn.functional
        mark = segments or _no_mark
        self.model.mark = mark
        t0 = time.perf_counter()
        self.optimizer.zero_grad(set_to_none=True)
        if segments is not None:
            segments.fwd.append(("start", t0))
        logits = self.model(self.idx)
        loss = F.cross_entropy(logits.view(-1, VOCAB), self.targets.view(-1))
        t1 = time.perf_counter()
        if segments is not None:
            segments.fwd.append(("cross_entropy", t1))
            segments.bwd.append(("start", t1))
        loss.backward()
        t2 = time.perf_counter()
        if segments is not None:
            segments.bwd.append(("embeddings (+ engine tail)", t2))
        self.optimizer.step()
        t3 = time.perf_counter()
        self.model.mark = _no_mark
        if segments is not None:
            segments.optimizer_s = t3 - t2
        if record:
            for phase, t in zip((*PHASES, "step"), (t1 - t0, t2 - t1, t3 - t2, t3 - t0)):
                self.times[phase].append(t)
        return float(loss.item())


def make_trainers():
    """(ember Trainer, torch Trainer) with the same weights and the same batch."""
    import numpy as np
    import torch

    import ember

    torch.manual_seed(0)
    tmodel = build(torch)
    emodel = build(ember)
    state = tmodel.state_dict()
    emodel.load_state_dict({k: ember.from_numpy(v.detach().numpy().copy())
                            for k, v in state.items()})
    rng = np.random.default_rng(0)
    tokens = rng.integers(0, VOCAB, size=(BATCH, SEQ + 1)).astype(np.int64)
    idx, targets = tokens[:, :-1].copy(), tokens[:, 1:].copy()
    nparams = sum(p.numel() for p in tmodel.parameters())
    return (Trainer(ember, emodel, ember.from_numpy(idx), ember.from_numpy(targets)),
            Trainer(torch, tmodel, torch.from_numpy(idx), torch.from_numpy(targets)), nparams)


def op_cases(threads: int, step_s: tuple[float, float]):
    """The model's ops alone at its shapes, each with its count per training step; prints them
    weighted by count against the whole step (ember's and torch's median, step_s). Backward
    cases run lib.autograd.grad (the inputs' gradients are new tensors, as in the model, not
    accumulated into leaves' .grad)."""
    import numpy as np
    import torch
    import torch.nn.functional as TF

    import ember
    import ember.nn.functional as EF
    from common import Bench

    bench = Bench(threads=threads, repeat=7, target_s=0.1)
    rng = np.random.default_rng(1)
    N = BATCH * SEQ
    rows = []

    def pair(*shape, grad=False):
        a = rng.standard_normal(shape).astype(np.float32)
        e, t = ember.from_numpy(a.copy()), torch.from_numpy(a.copy())
        if grad:
            e.requires_grad_()
            t.requires_grad_()
        return e, t

    def case(name, count, fe, ft, part=True):
        """part: the case is one of the disjoint parts of the step (summed at the end)."""
        r = bench.compare(name, fe, ft)
        if r is not None:
            rows.append({"name": name, "count": count, "ember_s": r.ember_s, "torch_s": r.ref_s,
                         "ember_per_step_s": count * r.ember_s,
                         "torch_per_step_s": count * r.ref_s, "part": part})

    def backward(name, count, fe, ft, inputs, grads):
        """The backward of fe / ft (their outputs kept) to `inputs` (ember's, torch's)."""
        (ye, yt), (ie, it), (ge, gt) = (fe(), ft()), inputs, grads
        case(name, count,
             lambda: ember.autograd.grad(ye, ie, ge, retain_graph=True),
             lambda: torch.autograd.grad(yt, it, gt, retain_graph=True))

    # Linear layers: forward (x @ W^T + b) and backward (dX = dY @ W, dW = dY^T @ X, db).
    for name, fin, fout, count, bias in (
        ("qkv", D_MODEL, 3 * D_MODEL, LAYERS, True),
        ("proj", D_MODEL, D_MODEL, LAYERS, True),
        ("fc1", D_MODEL, D_FF, LAYERS, True),
        ("fc2", D_FF, D_MODEL, LAYERS, True),
        ("head", D_MODEL, VOCAB, 1, False),
    ):
        xe, xt = pair(N, fin, grad=True)
        we, wt = pair(fout, fin, grad=True)
        be, bt = pair(fout, grad=True) if bias else (None, None)
        ge, gt = pair(N, fout)

        def fe(xe=xe, we=we, be=be):
            return EF.linear(xe, we, be)

        def ft(xt=xt, wt=wt, bt=bt):
            return TF.linear(xt, wt, bt)

        case(f"linear {name} fwd {N}x{fin}->{fout}", count, fe, ft)
        backward(f"linear {name} bwd {N}x{fin}->{fout}", count, fe, ft,
                 ([xe, we] + ([be] if bias else []), [xt, wt] + ([bt] if bias else [])),
                 (ge, gt))
    xe, xt = pair(N, D_MODEL, grad=True)
    we, wt = pair(D_MODEL, grad=True)
    be, bt = pair(D_MODEL, grad=True)
    ge, gt = pair(N, D_MODEL)

    def fe():
        return EF.layer_norm(xe, (D_MODEL,), we, be)

    def ft():
        return TF.layer_norm(xt, (D_MODEL,), wt, bt)

    case("layer_norm fwd 4096x256", 2 * LAYERS + 1, fe, ft)
    backward("layer_norm bwd 4096x256", 2 * LAYERS + 1, fe, ft, ([xe, we, be], [xt, wt, bt]),
             (ge, gt))
    ye, yt = pair(N, D_MODEL)
    case("add 4096x256 (residuals, grad sums)", 4 * LAYERS,
         lambda: xe.detach() + ye, lambda: xt.detach() + yt)
    xe, xt = pair(N, D_FF, grad=True)
    ge, gt = pair(N, D_FF)
    case("gelu fwd 4096x1024", LAYERS, lambda: EF.gelu(xe), lambda: TF.gelu(xt))
    backward("gelu bwd 4096x1024", LAYERS, lambda: EF.gelu(xe), lambda: TF.gelu(xt), ([xe], [xt]),
             (ge, gt))
    # The attention's reshapes: qkv (B, T, 3C) -> q, k, v (B, H, T, C / H); y -> (B, T, C).
    shape = (BATCH, HEADS, SEQ, D_MODEL // HEADS)
    qkv_e, qkv_t = pair(BATCH, SEQ, 3 * D_MODEL, grad=True)
    ye, yt = pair(*shape, grad=True)
    glue_grads = [pair(*shape) for _ in range(3)] + [pair(BATCH, SEQ, D_MODEL)]

    def glue(qkv, y):
        B, T, C3 = qkv.shape
        parts = qkv.view(B, T, 3, HEADS, C3 // 3 // HEADS).permute(2, 0, 3, 1, 4)
        return [parts[0], parts[1], parts[2], y.transpose(1, 2).reshape(B, T, C3 // 3)]

    case("attention reshapes fwd", LAYERS, lambda: glue(qkv_e, ye), lambda: glue(qkv_t, yt))
    oe, ot = glue(qkv_e, ye), glue(qkv_t, yt)
    case("attention reshapes bwd", LAYERS,
         lambda: ember.autograd.grad(oe, [qkv_e, ye], [g[0] for g in glue_grads],
                                     retain_graph=True),
         lambda: torch.autograd.grad(ot, [qkv_t, yt], [g[1] for g in glue_grads],
                                     retain_graph=True))
    qkv = [pair(*shape, grad=True) for _ in range(3)]
    qe, qt = [p[0] for p in qkv], [p[1] for p in qkv]
    ge, gt = pair(*shape)

    def fe():
        return EF.scaled_dot_product_attention(*qe, is_causal=True)

    def ft():
        return TF.scaled_dot_product_attention(*qt, is_causal=True)

    case("sdpa causal fwd 16x4x256x64", LAYERS, fe, ft)
    backward("sdpa causal bwd 16x4x256x64", LAYERS, fe, ft, (qe, qt), (ge, gt))
    xe, xt = pair(N, VOCAB, grad=True)
    tgt = rng.integers(0, VOCAB, size=N).astype(np.int64)
    te, tt = ember.from_numpy(tgt), torch.from_numpy(tgt)

    def fe():
        return EF.cross_entropy(xe, te)

    def ft():
        return TF.cross_entropy(xt, tt)

    case("cross_entropy fwd 4096x8192", 1, fe, ft)
    backward("cross_entropy bwd 4096x8192", 1, fe, ft, ([xe], [xt]), (None, None))
    we, wt = pair(VOCAB, D_MODEL, grad=True)
    pe, pt = pair(SEQ, D_MODEL, grad=True)
    ids = rng.integers(0, VOCAB, size=(BATCH, SEQ)).astype(np.int64)
    ie, it = ember.from_numpy(ids), torch.from_numpy(ids)
    ge, gt = pair(BATCH, SEQ, D_MODEL)

    def fe():
        return EF.embedding(ie, we) + EF.embedding(ember.arange(SEQ), pe)

    def ft():
        return TF.embedding(it, wt) + TF.embedding(torch.arange(SEQ), pt)

    case("embeddings fwd (token + position)", 1, fe, ft)
    backward("embeddings bwd (token + position)", 1, fe, ft, ([we, pe], [wt, pt]), (ge, gt))
    # AdamW over the model's parameters, gradients in place.
    etrainer, ttrainer, _ = make_trainers()
    for tr in (etrainer, ttrainer):
        tr.step(record=False)  # gradients and optimizer state exist
    case("AdamW step over the model", 1, etrainer.optimizer.step, ttrainer.optimizer.step)
    case("zero_grad(set_to_none=True)", 1, etrainer.optimizer.zero_grad,
         ttrainer.optimizer.zero_grad, part=False)
    parts = [r for r in rows if r["part"]]
    e_sum = sum(r["ember_per_step_s"] for r in parts)
    t_sum = sum(r["torch_per_step_s"] for r in parts)
    print(f"\n  per step: op time x count, sorted by ember - torch [{threads} thr]")
    print(f"  {'op':<40} {'n':>3} {'ember ms':>9} {'torch ms':>9} {'diff ms':>9} {'ratio':>6}")

    def line(name, n, e, t):
        print(f"  {name:<40} {n:>3} {e * 1e3:9.2f} {t * 1e3:9.2f} {(e - t) * 1e3:9.2f} "
              f"{e / t:6.2f}")

    for r in sorted(parts, key=lambda r: r["torch_per_step_s"] - r["ember_per_step_s"]):
        line(r["name"], r["count"], r["ember_per_step_s"], r["torch_per_step_s"])
    gemm_e = sum(r["ember_per_step_s"] for r in parts if r["name"].startswith("linear"))
    gemm_t = sum(r["torch_per_step_s"] for r in parts if r["name"].startswith("linear"))
    line("linears (GEMMs) together", "", gemm_e, gemm_t)
    line("other ops together", "", e_sum - gemm_e, t_sum - gemm_t)
    line("sum of the ops", "", e_sum, t_sum)
    line("whole step (median above)", "", *step_s)
    line("step - sum (engine, allocation, ...)", "", step_s[0] - e_sum, step_s[1] - t_sum)
    return rows


def segment_table(etrainer, ttrainer, steps: int, threads: int) -> dict:
    """Median in-model time of each op of the step (summed over the layers), from `steps`
    alternating instrumented steps per library (after one instrumented warm-up step each)."""
    runs: dict[str, list[dict[str, float]]] = {"ember": [], "torch": []}
    for i in range(steps + 1):
        for lib, tr in (("ember", etrainer), ("torch", ttrainer)):
            seg = Segments()
            tr.step(record=False, segments=seg)
            if i:
                runs[lib].append(seg.times())
    med = {lib: {k: statistics.median(r[k] for r in rs) for k in rs[0]}
           for lib, rs in runs.items()}
    for lib in med:
        med[lib]["total"] = statistics.median(sum(r.values()) for r in runs[lib])
    print(f"\n  in-model time of each op per step, sorted by ember - torch (medians of {steps} "
          f"instrumented steps) [{threads} thr]")
    print(f"  {'op':<44} {'ember ms':>9} {'torch ms':>9} {'diff ms':>8} {'ratio':>6}")

    def line(name, e, t):
        print(f"  {name:<44} {e * 1e3:9.2f} {t * 1e3:9.2f} {(e - t) * 1e3:8.2f} {e / t:6.2f}")

    ops = [k for k in med["torch"] if k != "total"]
    for k in sorted(ops, key=lambda k: med["torch"][k] - med["ember"][k]):
        line(k, med["ember"][k], med["torch"][k])
    for group in ("fwd linear", "bwd linear"):
        line(f"{group} (all GEMMs)",
             *(sum(v for k, v in med[lib].items() if k.startswith(group))
               for lib in ("ember", "torch")))
    line("total of the instrumented step", med["ember"]["total"], med["torch"]["total"])
    return med


def child(threads: int, steps: int, ops: bool, segments: bool, out_path: str) -> None:
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from common import Result, environment, format_time, set_threads

    set_threads(threads)
    etrainer, ttrainer, nparams = make_trainers()
    # Warm-up: 2 steps each; the losses of the same weights and batch must agree.
    losses = [(etrainer.step(record=False), ttrainer.step(record=False)) for _ in range(2)]
    rel = [abs(e - t) / abs(t) for e, t in losses]
    ok = rel[0] <= 1e-4
    print(f"[{threads} thr] {nparams / 1e6:.2f}M parameters; loss step 1: ember {losses[0][0]:.8g}"
          f" torch {losses[0][1]:.8g} (rel diff {rel[0]:.1e}{'' if ok else ', ABOVE 1e-4'}); "
          f"step 2: ember {losses[1][0]:.8g} torch {losses[1][1]:.8g} (rel diff {rel[1]:.1e})")
    for _ in range(steps):  # alternate the libraries step by step
        etrainer.step()
        ttrainer.step()
    med = {lib: {p: statistics.median(tr.times[p]) for p in (*PHASES, "step")}
           for lib, tr in (("ember", etrainer), ("torch", ttrainer))}
    results = []
    for p in ("step", *PHASES):
        r = Result(f"LM training {p}" if p != "step" else "LM training step", threads,
                   med["ember"][p], med["torch"][p],
                   extra={"steps": steps, "ember_all_s": etrainer.times[p],
                          "torch_all_s": ttrainer.times[p]})
        results.append(r)
        goal = f"  (goal <= {GOAL})" if p == "step" else ""
        print(f"  {p:<10} [{threads} thr]  ember {format_time(r.ember_s)}   torch "
              f"{format_time(r.ref_s)}   ratio {r.ratio:5.2f}{goal}")
    out = {"threads": threads, "environment": environment(), "parameters": nparams,
           "loss_check": {"ember": [e for e, _ in losses], "torch": [t for _, t in losses],
                          "rel_diff": rel, "ok": ok},
           "results": [r.as_dict() for r in results]}
    if segments:
        out["segments"] = segment_table(etrainer, ttrainer, steps, threads)
    if ops:
        out["ops"] = op_cases(threads, (med["ember"]["step"], med["torch"]["step"]))
    with open(out_path, "w") as f:
        json.dump(out, f, indent=1)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    p.add_argument("--steps", type=int, default=7, help="timed steps per library (>= 5)")
    p.add_argument("--segments", action="store_true",
                   help="also time each op inside the model's step (gradient hooks)")
    p.add_argument("--ops", action="store_true", help="also time the model's ops alone")
    p.add_argument("--json", default=DEFAULT_JSON, help=f"results file (default {DEFAULT_JSON})")
    p.add_argument("--child", type=int, default=0, help=argparse.SUPPRESS)
    p.add_argument("--child-out", default=None, help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        child(args.child, args.steps, args.ops, args.segments, args.child_out)
        return
    runs = []
    for t in args.threads:
        env = dict(os.environ, OMP_NUM_THREADS=str(t), MKL_NUM_THREADS=str(t))
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "out.json")
            cmd = [sys.executable, __file__, "--child", str(t), "--steps", str(args.steps),
                   "--child-out", out]
            cmd += ["--ops"] * args.ops + ["--segments"] * args.segments
            subprocess.run(cmd, env=env, check=True)
            with open(out) as f:
                runs.append(json.load(f))
    print("\n  threads  ember step  torch step  ratio  goal  |  ratio fwd / bwd / optim")
    for run in runs:
        r = {x["name"]: x for x in run["results"]}
        s = r["LM training step"]
        phases = " / ".join(f"{r[f'LM training {ph}']['ratio']:.2f}" for ph in PHASES)
        print(f"  {run['threads']:>7}  {format_ms(s['ember_s'])}  {format_ms(s['ref_s'])}  "
              f"{s['ratio']:5.2f}  {'met' if s['ratio'] <= GOAL else 'MISSED'}  |  {phases}")
    os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
    with open(args.json, "w") as f:
        json.dump({"goal": GOAL, "runs": runs}, f, indent=1)
    print(f"results: {args.json}")


def format_ms(s: float) -> str:
    return f"{s * 1e3:8.1f} ms"


if __name__ == "__main__":
    main()
