"""DistributedDataParallel in 2 processes against single-process training on the concatenated
batch (the same parameters to float rounding), for an MLP and a small CNN, with no_sync
accumulation, unused parameters, buffer broadcast, communication hooks, gradient views and
uneven inputs (join)."""

import pytest
from dist_ranks import assert_all_ok, run_ranks

import ember.distributed as dist

pytestmark = pytest.mark.skipif(not dist.is_available(),
                                reason="this build has no Gloo (apt install libgloo-dev)")

TRAINING = """
import copy
from ember import nn
from ember.nn.parallel import DistributedDataParallel as DDP
from ember.distributed.algorithms.ddp_comm_hooks import default_hooks
init()
CASE = os.environ["CASE"]

def make_model(seed):
    ember.manual_seed(seed)
    if CASE == "cnn":
        return nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(),
                             nn.MaxPool2d(2), nn.Flatten(), nn.Linear(4 * 4 * 4, 10))
    return nn.Sequential(nn.Linear(12, 16), nn.ReLU(), nn.Linear(16, 16), nn.ReLU(),
                         nn.Linear(16, 10))

def batch(step):
    g = np.random.default_rng(step)
    shape = (8, 1, 8, 8) if CASE == "cnn" else (8, 12)
    x = ember.from_numpy(g.standard_normal(shape).astype("float32"))
    y = ember.from_numpy(g.integers(0, 10, 8).astype("int64"))
    return x, y

# Every rank starts from a different model: DDP broadcasts rank 0's.
model = make_model(100 + RANK)
reference = make_model(100)  # what rank 0 has: the single-process run
ddp = DDP(model, gradient_as_bucket_view=(CASE == "view"), bucket_cap_mb=0.0001)
if CASE == "fp16":
    ddp.register_comm_hook(None, default_hooks.fp16_compress_hook)
opt = ember.optim.SGD(ddp.parameters(), lr=0.1)
ref_opt = ember.optim.SGD(reference.parameters(), lr=0.1)
loss_fn = nn.CrossEntropyLoss()
for step in range(4):
    x, y = batch(step)
    half = slice(RANK * 4, RANK * 4 + 4)
    opt.zero_grad()
    if CASE == "no_sync":
        # two micro-batches of 2: the first without synchronising
        with ddp.no_sync():
            (loss_fn(ddp(x[half][:2]), y[half][:2]) / 2).backward()
        (loss_fn(ddp(x[half][2:]), y[half][2:]) / 2).backward()
    else:
        loss_fn(ddp(x[half]), y[half]).backward()
    opt.step()
    ref_opt.zero_grad()
    if CASE == "no_sync":
        # the same arithmetic on one process: mean over ranks of the two halves' mean
        total = 0
        for r in range(WORLD):
            part = slice(r * 4, r * 4 + 4)
            total = total + (loss_fn(reference(x[part][:2]), y[part][:2]) +
                             loss_fn(reference(x[part][2:]), y[part][2:])) / 2
        (total / WORLD).backward()
    elif CASE == "cnn":
        # BatchNorm statistics are per process: compare with per-half forward passes
        total = 0
        for r in range(WORLD):
            part = slice(r * 4, r * 4 + 4)
            total = total + loss_fn(reference(x[part]), y[part])
        (total / WORLD).backward()
    else:
        loss_fn(reference(x), y).backward()
    ref_opt.step()
tol = 2e-2 if CASE == "fp16" else 1e-5
for (name, p), q in zip(ddp.module.named_parameters(), reference.parameters()):
    np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=tol, atol=tol,
                               err_msg=name)
# every rank holds the same parameters
for p in ddp.parameters():
    copies = [ember.empty(p.shape) for _ in range(WORLD)]
    dist.all_gather(copies, p.detach().contiguous())
    for c in copies:
        assert ember.equal(c, copies[0])
print("ok")
"""


@pytest.mark.parametrize("case", ["mlp", "cnn", "no_sync", "view", "fp16"])
def test_ddp_matches_single_process_training(tmp_path, case):
    assert_all_ok(run_ranks(tmp_path, TRAINING, world=2, timeout=120, env={"CASE": case}))


UNUSED_AND_BUFFERS = """
from ember import nn
from ember.nn.parallel import DistributedDataParallel as DDP
init()

class TwoHeads(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(4, 4)
        self.used = nn.Linear(4, 2)
        self.unused = nn.Linear(4, 2)
        self.register_buffer("counter", ember.zeros(1))

    def forward(self, x):
        self.counter += 1
        return self.used(self.body(x))

ember.manual_seed(RANK)
model = TwoHeads()
model.counter.fill_(10 * (RANK + 1))
ddp = DDP(model, find_unused_parameters=True)
# the buffers were broadcast from rank 0
assert model.counter.item() == 10
for step in range(3):
    ddp.zero_grad()
    out = ddp(ember.ones(3, 4) * (RANK + 1))
    out.sum().backward()
    assert model.unused.weight.grad is None  # unused everywhere: left alone, as PyTorch
    g = model.used.weight.grad.clone()
    all_g = [ember.empty(g.shape) for _ in range(WORLD)]
    dist.all_gather(all_g, g)
    assert ember.equal(all_g[0], all_g[1])
# broadcast_buffers: rank 0's buffer is broadcast at each forward
assert model.counter.item() == 13

# Without find_unused_parameters, an unused parameter makes the next forward fail clearly.
ember.manual_seed(0)
strict = DDP(TwoHeads())
strict(ember.ones(2, 4)).sum().backward()
try:
    strict(ember.ones(2, 4))
except RuntimeError as e:
    assert "find_unused_parameters=True" in str(e)
else:
    raise AssertionError("no error")
print("ok")
"""


def test_unused_parameters_and_buffers(tmp_path):
    assert_all_ok(run_ranks(tmp_path, UNUSED_AND_BUFFERS, world=2, timeout=120))


JOIN = """
from ember import nn
from ember.nn.parallel import DistributedDataParallel as DDP
init()
ember.manual_seed(0)
model = nn.Linear(3, 1, bias=False)
ddp = DDP(model)
opt = ember.optim.SGD(ddp.parameters(), lr=0.01)
steps = 3 + 2 * RANK  # rank 1 has more batches
with ddp.join():
    for step in range(steps):
        opt.zero_grad()
        ddp(ember.ones(2, 3)).sum().backward()
        opt.step()
# every rank ends with the same weights
w = model.weight.detach().clone()
ws = [ember.empty(w.shape) for _ in range(WORLD)]
dist.all_gather(ws, w)
assert ember.equal(ws[0], ws[1]), (ws[0], ws[1])
print("ok", steps)
"""


def test_join_with_uneven_inputs(tmp_path):
    assert_all_ok(run_ranks(tmp_path, JOIN, world=2, timeout=120))


SAMPLER = """
from ember.utils.data import DistributedSampler
init()
for shuffle in (False, True):
    for n in (10, 11):
        for drop_last in (False, True):
            sampler = DistributedSampler(list(range(n)), shuffle=shuffle, seed=3,
                                         drop_last=drop_last)
            for epoch in range(2):
                sampler.set_epoch(epoch)
                mine = list(sampler)
                everyone = [None] * WORLD
                dist.all_gather_object(everyone, mine)
                assert len({len(x) for x in everyone}) == 1
                seen = sorted(i for x in everyone for i in x)
                if drop_last:
                    assert len(set(seen)) == len(seen) == n - n % WORLD
                else:
                    assert set(seen) == set(range(n))
print("ok")
"""


def test_distributed_sampler_covers_the_dataset_across_ranks(tmp_path):
    assert_all_ok(run_ranks(tmp_path, SAMPLER, world=2, timeout=120))


SYNC_BN = """
from ember import nn
init()
g = np.random.default_rng(0)
full = ember.from_numpy(g.standard_normal((6, 3, 4, 5)).astype("float64"))
mine = full[RANK * 3:(RANK + 1) * 3].clone().requires_grad_(True)
whole = full.clone().requires_grad_(True)

sync = nn.SyncBatchNorm(3).double()
plain = nn.BatchNorm2d(3).double()
with ember.no_grad():
    for m in (sync, plain):
        m.weight.copy_(ember.tensor([1.5, -0.5, 2.0], dtype=ember.float64))
        m.bias.copy_(ember.tensor([0.1, 0.2, 0.3], dtype=ember.float64))
upstream = ember.from_numpy(g.standard_normal((6, 3, 4, 5)))
out = sync(mine)
ref = plain(whole)
np.testing.assert_allclose(out.detach().numpy(), ref[RANK * 3:(RANK + 1) * 3].detach().numpy(),
                           rtol=1e-10, atol=1e-10)
np.testing.assert_allclose(sync.running_mean.numpy(), plain.running_mean.numpy(), rtol=1e-10)
np.testing.assert_allclose(sync.running_var.numpy(), plain.running_var.numpy(), rtol=1e-10)
(out * upstream[RANK * 3:(RANK + 1) * 3]).sum().backward()
(ref * upstream).sum().backward()
np.testing.assert_allclose(mine.grad.numpy(), whole.grad[RANK * 3:(RANK + 1) * 3].numpy(),
                           rtol=1e-9, atol=1e-10)
# weight and bias gradients are local: their sum over ranks is the whole batch's
for local, reference in ((sync.weight.grad, plain.weight.grad), (sync.bias.grad, plain.bias.grad)):
    total = local.clone()
    dist.all_reduce(total)
    np.testing.assert_allclose(total.numpy(), reference.numpy(), rtol=1e-9, atol=1e-10)
# eval mode uses the running statistics, as BatchNorm
sync.eval(); plain.eval()
np.testing.assert_allclose(sync(mine).detach().numpy(),
                           plain(whole)[RANK * 3:(RANK + 1) * 3].detach().numpy(), rtol=1e-10)
converted = nn.SyncBatchNorm.convert_sync_batchnorm(nn.Sequential(nn.Conv2d(3, 3, 1),
                                                                  nn.BatchNorm2d(3)))
assert isinstance(converted[1], nn.SyncBatchNorm)
print("ok")
"""


def test_sync_batchnorm_matches_batchnorm_on_the_whole_batch(tmp_path):
    assert_all_ok(run_ranks(tmp_path, SYNC_BN, world=2, timeout=120))
