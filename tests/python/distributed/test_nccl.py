"""ember.distributed's nccl backend (docs/design/distributed.md, "NCCL"). A group of one runs on a
machine with one GPU; the collectives across 2 ranks need 2 GPUs (one per rank) and skip
otherwise, as does everything here without a GPU except the errors that say why."""

import pytest
from dist_ranks import assert_all_ok, run_ranks

import ember
import ember.distributed as dist

GPUS = ember.cuda.device_count() if ember.cuda.is_available() else 0
NCCL = dist.is_nccl_available()
needs = {n: pytest.mark.skipif(not NCCL or GPUS < n, reason=f"needs NCCL and {n} CUDA GPU(s)")
         for n in (1, 2)}

COLLECTIVES = """
import numpy as np
dev = ember.device("cuda", RANK)
ember.cuda.set_device(RANK)
dist.init_process_group("nccl", timeout=TIMEOUT)
assert dist.get_backend() == "nccl"

def on_gpu(values, dtype=ember.float32):
    return ember.tensor(values, dtype=dtype).to(dev)

for dtype in (ember.float32, ember.float64, ember.float16, ember.bfloat16, ember.int32,
              ember.int64, ember.uint8, ember.int8):
    t = on_gpu([RANK + 1, 2, 3], dtype)
    dist.all_reduce(t)
    assert t.cpu().tolist() == [sum(r + 1 for r in range(WORLD)), 2 * WORLD, 3 * WORLD], dtype
    t = on_gpu([RANK + 1, 5], dtype)
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    assert t.cpu().tolist() == [WORLD, 5]

t = on_gpu([float(RANK), 2.0])
dist.all_reduce(t, op=dist.ReduceOp.AVG)
np.testing.assert_allclose(t.cpu().numpy(), [(WORLD - 1) / 2, 2.0])

# complex as pairs of floats
c = ember.tensor([1 + 2j], dtype=ember.complex64).to(dev)
dist.all_reduce(c)
assert c.cpu().tolist() == [complex(WORLD, 2 * WORLD)]

# non-contiguous and 0-d
m = on_gpu([[1.0, 2.0], [3.0, 4.0]]).t()
dist.all_reduce(m)
np.testing.assert_array_equal(m.cpu().numpy(), WORLD * np.array([[1.0, 3.0], [2.0, 4.0]]))
z = on_gpu(float(RANK))
dist.broadcast(z, src=WORLD - 1)
assert z.cpu().item() == WORLD - 1

gathered = [ember.zeros(2, device=dev) for _ in range(WORLD)]
dist.all_gather(gathered, on_gpu([RANK, RANK]))
assert [g.cpu().tolist() for g in gathered] == [[r, r] for r in range(WORLD)]
out = ember.zeros(2 * WORLD, device=dev)
dist.all_gather_into_tensor(out, on_gpu([RANK, -RANK]))
assert out.cpu().tolist() == sum(([r, -r] for r in range(WORLD)), [])

rs = ember.zeros(1, device=dev)
dist.reduce_scatter_tensor(rs, on_gpu([float(r * 10 + RANK) for r in range(WORLD)]))
assert rs.cpu().tolist() == [RANK * 10 * WORLD + sum(range(WORLD))]
rs2 = ember.zeros(2, device=dev)
dist.reduce_scatter(rs2, [on_gpu([1.0, float(r)]) for r in range(WORLD)])
assert rs2.cpu().tolist() == [WORLD, RANK * WORLD]

red = on_gpu([1.0])
dist.reduce(red, dst=0)
if RANK == 0:
    assert red.cpu().tolist() == [WORLD]

glist = [ember.zeros(1, device=dev) for _ in range(WORLD)] if RANK == 0 else None
dist.gather(on_gpu([float(RANK)]), glist, dst=0)
if RANK == 0:
    assert [g.cpu().item() for g in glist] == list(range(WORLD))
sc = ember.zeros(1, device=dev)
dist.scatter(sc, [on_gpu([float(r)]) for r in range(WORLD)] if RANK == 0 else None, src=0)
assert sc.cpu().item() == RANK

a2a = ember.zeros(WORLD, device=dev)
dist.all_to_all_single(a2a, on_gpu([float(RANK * 10 + r) for r in range(WORLD)]))
assert a2a.cpu().tolist() == [float(r * 10 + RANK) for r in range(WORLD)]

if WORLD > 1:
    if RANK == 0:
        dist.send(on_gpu([42.0]), dst=1)
    elif RANK == 1:
        got = ember.zeros(1, device=dev)
        dist.recv(got, src=0)
        assert got.cpu().item() == 42.0

work = dist.all_reduce(on_gpu([1.0]), async_op=True)
work.wait()
assert work.is_completed() and work.is_success()

objs = [None] * WORLD
dist.all_gather_object(objs, {"rank": RANK})
assert objs == [{"rank": r} for r in range(WORLD)]
dist.barrier()
dist.destroy_process_group()
print("ok")
"""


@pytest.mark.cuda
@needs[1]
def test_a_group_of_one(tmp_path):
    assert_all_ok(run_ranks(tmp_path, COLLECTIVES, world=1, timeout=120))


@pytest.mark.cuda
@needs[2]
def test_collectives_on_two_gpus(tmp_path):
    assert_all_ok(run_ranks(tmp_path, COLLECTIVES, world=2, timeout=180))


MIXED = """
ember.cuda.set_device(RANK)
dist.init_process_group(timeout=TIMEOUT)  # PyTorch's default: cpu:gloo,cuda:nccl
cpu = ember.ones(2) * (RANK + 1)
dist.all_reduce(cpu)                       # on Gloo
gpu = (ember.ones(2) * (RANK + 1)).cuda()
dist.all_reduce(gpu)                       # on NCCL, made now
assert cpu.tolist() == gpu.cpu().tolist() == [3.0, 3.0]
print("ok")
"""


@pytest.mark.cuda
@needs[2]
def test_default_backend_runs_each_device_on_its_engine(tmp_path):
    assert_all_ok(run_ranks(tmp_path, MIXED, world=2, timeout=180))


DEAD_PEER = """
ember.cuda.set_device(RANK)
dist.init_process_group("nccl", timeout=datetime.timedelta(seconds=5))
t = ember.ones(2).cuda()
dist.all_reduce(t)
if RANK == 1:
    os._exit(0)
try:
    dist.all_reduce(t)
    dist.all_reduce(t)
    print("no error")
except RuntimeError as e:
    print("raised:", e)
"""


@pytest.mark.cuda
@needs[2]
def test_a_dead_peer_raises_within_the_timeout(tmp_path):
    results = run_ranks(tmp_path, DEAD_PEER, world=2, timeout=120)
    assert "raised:" in results[0].stdout, results[0]


@pytest.mark.skipif(GPUS > 0, reason="checks the error without a GPU")
def test_nccl_without_a_gpu_says_why():
    want = "only supported with GPUs" if NCCL else "doesn't have NCCL built in"
    with pytest.raises(RuntimeError, match=want):
        dist.init_process_group("nccl", store=dist.HashStore(), rank=0, world_size=1)
    assert dist.is_backend_available("nccl") is NCCL
    assert not dist.is_initialized()


def test_ddp_refuses_an_nccl_only_group():
    # Made by hand: without a GPU no NCCL group can be created, but DDP's check needs none.
    from ember.distributed._c10d import ProcessGroup

    group = ProcessGroup("nccl", None, [0], "nccl-only", nccl_store=dist.HashStore(), rank=0,
                         timeout_s=1.0)
    with pytest.raises(RuntimeError, match="reduces CUDA tensors.*use the gloo backend"):
        ember.nn.parallel.DistributedDataParallel(ember.nn.Linear(2, 2), process_group=group)
