#!/usr/bin/env python3
"""JIT costs of the Python frontend: cold compile, disk-cache hit, and the
warm per-call host overhead (the time of a call minus the time of the
runtime's execute call it makes), on the host backend.

  python3 bench/python_jit.py
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
from m2n.api import _prepared  # noqa: E402


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
    lib = _native.runtime()
    execute = timed(lambda: _native.check(lib.m2n_host_execute(
        prepared.artifact.handle, 0, comm.size, prepared.src_pointers, prepared.src_bytes,
        prepared.dst_pointers, prepared.dst_bytes)), repeat)
    print(f"| {name} | {cold * 1e3:.1f} | {disk * 1e3:.2f} | {warm * 1e6:.1f} | "
          f"{execute * 1e6:.1f} | {(warm - execute) * 1e6:.1f} |")
    m2n.clear_memory_cache()


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
