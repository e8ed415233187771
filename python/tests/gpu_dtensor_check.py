"""DTensor in and out, one process per GPU (not a pytest file: run it with
`torchrun --nproc-per-node 2 python/tests/gpu_dtensor_check.py`, as
test/GPU/python_gpu.sh does). Every transition is compared with DTensor's own
redistribute (same mesh) or with the full tensor (across meshes)."""
import os
import sys
from pathlib import Path

import torch
import torch.distributed as dist
from torch.distributed.device_mesh import DeviceMesh
from torch.distributed.tensor import DTensor, Partial, Replicate, Shard, distribute_tensor

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import m2n  # noqa: E402


def main() -> int:
    rank = int(os.environ["RANK"])
    torch.cuda.set_device(rank % torch.cuda.device_count())
    dist.init_process_group("nccl")
    world = dist.get_world_size()
    mesh = DeviceMesh("cuda", list(range(world)))
    torch.manual_seed(0)
    full = torch.randn(1024, 512, device="cuda")
    failures = 0

    def check(name, got, want_full):
        nonlocal failures
        ok = got is None or torch.equal(got.full_tensor(), want_full)
        flag = torch.tensor([0 if ok else 1], device="cuda")
        dist.all_reduce(flag)
        if rank == 0:
            print(f"{name:40s} {'PASS' if flag.item() == 0 else 'FAIL'}", flush=True)
        failures += int(flag.item() != 0)

    x = distribute_tensor(full, mesh, [Shard(0)])
    check("Shard(0) -> Replicate", m2n.redistribute(x, mesh, [Replicate()]), full)
    check("Shard(0) -> Shard(1)", m2n.redistribute(x, mesh, [Shard(1)]), full)
    # Partial: every rank holds a contribution; the sum is the tensor.
    part = DTensor.from_local(full / world, mesh, [Partial()], run_check=False)
    want = part.redistribute(mesh, [Replicate()]).full_tensor()
    got = m2n.redistribute(part, mesh, [Replicate()])
    ok = torch.allclose(got.full_tensor(), want, rtol=1e-5, atol=1e-5)
    if rank == 0:
        print(f"{'Partial -> Replicate':40s} {'PASS' if ok else 'FAIL'}", flush=True)
    failures += int(not ok)
    # Across meshes: rank 0's tensor to the last rank (DTensor refuses this).
    if world >= 2:
        first = DeviceMesh("cuda", [0])
        last = DeviceMesh("cuda", [world - 1])
        y = distribute_tensor(full, first, [Replicate()]) if rank == 0 else \
            DTensor.from_local(torch.empty(0, device="cuda"), first, [Replicate()],
                               run_check=False, shape=full.shape, stride=full.stride())
        moved = m2n.redistribute(y, last, [Replicate()])
        ok = moved is None or torch.equal(moved.to_local(), full)
        if rank == world - 1:
            print(f"{'cross-mesh rank 0 -> rank ' + str(world - 1):40s} {'PASS' if ok else 'FAIL'}",
                  flush=True)
        failures += int(not ok)
    dist.destroy_process_group()
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
