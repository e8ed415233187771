#!/usr/bin/env python3
"""JIT costs of the Python frontend: cold compile, disk-cache hit, and the
warm per-call host overhead (the time of a call minus the time of the
runtime call it makes), on the host backend (numpy) or, with --cuda, with
torch CUDA tensors on the GPUs of this machine (two ranks, one per GPU, or
two virtual ranks on one GPU).

  python3 bench/python_jit.py [--cuda]
"""
import ctypes
import platform
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))
import numpy as np  # noqa: E402

import m2n  # noqa: E402
from m2n import Mesh, Replicate, Shard, _native  # noqa: E402
from m2n._prepared import _prepared  # noqa: E402


def timed(fn, repeat):
    fn()
    start = time.perf_counter()
    for _ in range(repeat):
        fn()
    return (time.perf_counter() - start) / repeat


def case(name, comm, call, repeat=5000):
    m2n.set_cache_dir(tempfile.mkdtemp())
    start = time.perf_counter()
    call()
    cold = time.perf_counter() - start
    m2n.clear_memory_cache()
    start = time.perf_counter()
    call()
    disk = time.perf_counter() - start
    warm = timed(call, repeat)
    prepared = next(iter(_prepared.values()))
    context = comm.context(prepared.artifact)
    execute = timed(lambda: context.execute((prepared.reshard,), prepared.buffers), repeat)
    print(f"| {name} | {cold * 1e3:.1f} | {disk * 1e3:.2f} | {warm * 1e6:.1f} | "
          f"{execute * 1e6:.1f} | {(warm - execute) * 1e6:.1f} |")
    m2n.clear_memory_cache()


def timed_each(fn, repeat, synchronize):
    """Mean host time of fn, the device drained between calls (a full launch
    queue would make a call wait for the GPU)."""
    fn()
    synchronize()
    total = 0.0
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        total += time.perf_counter() - start
        synchronize()
    return total / repeat


def cuda_case(name, comm, call, repeat=2000):
    import torch
    synchronize = torch.cuda.synchronize
    m2n.set_cache_dir(tempfile.mkdtemp())
    start = time.perf_counter()
    call()
    synchronize()
    cold = time.perf_counter() - start
    m2n.clear_memory_cache()
    start = time.perf_counter()
    call()
    synchronize()
    disk = time.perf_counter() - start
    warm = timed_each(call, repeat, synchronize)
    prepared = next(iter(_prepared.values()))
    lib = _native.runtime()
    context = comm.context(prepared.artifact)
    group = context.group((prepared.reshard,))
    streams = (ctypes.c_void_p * comm.size)(
        *[torch.cuda.current_stream(d).cuda_stream for d in comm.devices])
    launch = timed_each(
        lambda: _native.check(lib.m2n_group_launch(context.handle, group, streams)),
        repeat, synchronize)
    print(f"| {name} | {cold * 1e3:.1f} | {disk * 1e3:.2f} | {warm * 1e6:.1f} | "
          f"{launch * 1e6:.1f} | {(warm - launch) * 1e6:.1f} |")
    m2n.clear_memory_cache()


def run_cuda():
    import torch
    devices = [0, 1] if torch.cuda.device_count() >= 2 else [0, 0]
    print(f"m2n JIT with torch CUDA tensors; {torch.cuda.get_device_name(0)} x "
          f"{torch.cuda.device_count()}, ranks on devices {devices}, "
          f"Python {platform.python_version()}, torch {torch.__version__}, "
          f"{m2n.compiler_version()}")
    print("| call | cold compile ms | disk-cache hit ms | warm call us | runtime launch us | "
          "host overhead us |")
    print("|---|---|---|---|---|---|")
    two = m2n.Communicator.from_devices(devices)
    src = [torch.ones(256, device=f"cuda:{d}") for d in devices]
    dst = [torch.zeros(512, device=f"cuda:{d}") for d in devices]
    cuda_case("all_gather 2 ranks, 1 KiB", two, lambda: m2n.all_gather(src, dst, two))
    mesh = Mesh([2])
    cuda_case("reshard Shard(0)->Replicate, 2 ranks", two, lambda: m2n.reshard(
        src, dst, two, src_mesh=mesh, src_placements=[Shard(0)], dst_mesh=mesh,
        dst_placements=[Replicate()]))
    big = [torch.ones(1 << 20, device=f"cuda:{d}") for d in devices]
    big_out = [torch.zeros(2 << 20, device=f"cuda:{d}") for d in devices]
    cuda_case("all_gather 2 ranks, 8 MiB", two, lambda: m2n.all_gather(big, big_out, two),
              repeat=500)


if "--cuda" in sys.argv[1:]:
    run_cuda()
    sys.exit(0)

print(f"m2n JIT on the host backend; {platform.processor() or platform.machine()}, "
      f"Python {platform.python_version()}, {m2n.compiler_version()}")
print("| call | cold compile ms | disk-cache hit ms | warm call us | runtime execute us | "
      "host overhead us |")
print("|---|---|---|---|---|---|")
two = m2n.Communicator.host(2)
src = [np.ones(256, np.float32) for _ in range(2)]
dst = [np.zeros(512, np.float32) for _ in range(2)]
case("all_gather 2 ranks, 1 KiB", two, lambda: m2n.all_gather(src, dst, two))
mesh = Mesh([2])
case("reshard Shard(0)->Replicate, 2 ranks", two, lambda: m2n.reshard(
    src, dst, two, src_mesh=mesh, src_placements=[Shard(0)], dst_mesh=mesh,
    dst_placements=[Replicate()]))
eight = m2n.Communicator.host(8)
w = [np.ones((16, 32), np.float32) for _ in range(4)] + [None] * 4
out = [None] * 4 + [np.zeros((32, 32), np.float32) for _ in range(4)]
a_src, a_dst = Mesh([1, 4]), Mesh([2, 2], start_rank=4)
case("Example A, 8 ranks", eight, lambda: m2n.reshard(
    w, out, eight, src_mesh=a_src, src_placements=[Replicate(), Shard(0)], dst_mesh=a_dst,
    dst_placements=[Replicate(), Shard(0)]), repeat=2000)
