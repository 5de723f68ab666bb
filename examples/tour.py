"""A short tour of Ember: creation, views, arithmetic, reductions, ordering, indexing, matmul,
random numbers, printing and NumPy interop.

Run it with an installed Ember (`pip install .`) or against the build tree:

    python examples/tour.py
    PYTHONPATH=build/python python examples/tour.py

Every line below reads exactly as it would with `import torch as ember`.
"""

import numpy as np

import ember


def section(title):
    print(f"\n== {title}")


section("creation")
a = ember.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
print(a)
print("shape", a.shape, "dtype", a.dtype, "strides", a.stride())
print(ember.zeros(2, 3, dtype=ember.int32))
print(ember.ones(3))
print(ember.full((2, 2), 7))  # an int fill value gives int64, as in PyTorch

section("views share memory (no copies)")
t = a.transpose(0, 1)
print("a.transpose(0, 1):", t.shape, "strides", t.stride(), "contiguous", t.is_contiguous())
print("a.view(3, 2):", a.view(3, 2).tolist())
print("a.reshape(-1):", a.reshape(-1))
print("a.permute(1, 0) equals a.transpose(0, 1):", a.permute(1, 0).tolist() == t.tolist())
u = a.unsqueeze(0)
print("a.unsqueeze(0).shape:", u.shape, " squeeze back:", u.squeeze(0).shape)
print("ones(1, 3).expand(4, 3) strides:", ember.ones(1, 3).expand(4, 3).stride())
print("a.select(1, 0):", a.select(1, 0), " a.narrow(1, 1, 2):", a.narrow(1, 1, 2).tolist())
row = a[1]
row[0] = 40.0  # writes through the view into a
print("after a[1][0] = 40:", a.tolist())
try:
    t.view(6)
except RuntimeError as e:
    print("t.view(6) on a transposed tensor:", str(e).splitlines()[0])

section("indexing")
print("a[1]:", a[1], " a[:, 1:]:", a[:, 1:].tolist(), " a[0, 2]:", a[0, 2].item())
print("a[..., None].shape:", a[..., None].shape)

section("arithmetic with broadcasting and type promotion")
print("a + 1:", (a + 1).tolist())
print("a * a:", (a * a).tolist())
print("a / 2:", (a / 2).tolist())
print("1 - a:", (1 - a).tolist())
i = ember.tensor([1, 2, 3])
print("int64 tensor / 2 ->", (i / 2).dtype, " int64 + float32 ->", (i + a).dtype)
print("column + row broadcast:\n", ember.ones(3, 1) + ember.tensor([0.0, 10.0]))

section("reductions")
print("a.sum():", a.sum(), " a.sum(1):", a.sum(1), " a.sum(0, keepdim=True):", a.sum(0, True))
print("bool sums count:", ember.tensor([True, False, True]).sum())

section("elementwise math, reductions with indices, ordering")
x = ember.linspace(-2, 2, 5)
print("exp:", x.exp(), " clamp:", x.clamp(min=-1, max=1).tolist())
m = ember.tensor([[3.0, 1.0, 2.0], [0.5, 4.0, 4.0]])
print(m.max(dim=1))
print("mean", m.mean().item(), " std(dim=0)", m.std(dim=0).tolist())
print("sort:", m.sort(dim=1, descending=True).values.tolist())
print("topk:", m.flatten().topk(2).values)
print("cat / stack:", ember.cat([m, m]).shape, ember.stack([m, m]).shape)

section("advanced indexing")
idx = ember.tensor([1, 0, 1])
print("m[idx]:", m[idx].tolist())
print("m[m > 2]:", m[m > 2])
print("gather:", m.gather(1, ember.tensor([[2], [0]])).tolist())
print("where:", ember.where(m > 2, m, ember.zeros_like(m)).tolist())

section("matmul family")
w = ember.arange(6, dtype=ember.float32).reshape(3, 2)
print("m @ w:", (m @ w).tolist())
same = ember.einsum("ij,jk->ik", m, w).tolist() == (m @ w).tolist()
print("einsum('ij,jk->ik') equals matmul:", same)
print("batched:", ember.matmul(ember.ones(4, 2, 3), w).shape)

section("random numbers (Philox, reproducible)")
ember.manual_seed(0)
r1 = ember.rand(3)
ember.manual_seed(0)
print("same seed, same numbers:", ember.equal(r1, ember.rand(3)))
print("randn(2, 2):", ember.randn(2, 2).shape)

section("NumPy interop (zero-copy both ways)")
n = np.arange(6.0).reshape(2, 3)
x = ember.from_numpy(n)
x[0, 0] = 100.0
print("from_numpy shares memory:", n[0, 0] == 100.0)
back = x.numpy()
back[1, 2] = -1.0
print("numpy() shares memory:", x[1, 2].item() == -1.0)
print("mixed dtypes:", ember.from_numpy(np.arange(3, dtype=np.int16)) * 1.5)

section("autograd")
w = ember.tensor([1.0, -2.0, 0.5], requires_grad=True)
loss = ((w * w).exp() * w).sum()
loss.backward()
print("loss:", loss)
print("d loss / d w:", w.grad)
(g,) = ember.autograd.grad((w * w * w).sum(), w, create_graph=True)
(h,) = ember.autograd.grad(g.sum(), w)
print("second derivative of w**3:", h.tolist())
with ember.no_grad():
    print("under no_grad, requires_grad:", (w * 2).requires_grad)

section("printing follows PyTorch")
print(ember.tensor([1e-8, 1.0, 1e8]))
print(ember.tensor([[True, False]]))
print(ember.zeros(0, 3))
