#!/usr/bin/env python3
"""Compilation cost of many reshards: one JIT compilation per tensor
(m2n.reshard for each) against one for all of them (m2n.reshard_many), cold
(no disk cache, a fresh memory cache for each side), on the host backend.
Each reshard is a different shape (a refit's tensors are), TP2 rows to
DP2 x TP2 columns of f32; both sides are timed the same way, in the same
process, with the MLIR context already created.

  python3 bench/reshard_many.py [N ...]     (default: 8 32 128)
"""
import platform
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))
import numpy as np  # noqa: E402

import m2n  # noqa: E402
from m2n import Mesh, Replicate, Shard  # noqa: E402


def calls(n, first_rows):
    batch = []
    for i in range(n):
        rows = 2 * (first_rows + i)
        w = np.arange(rows * 16, dtype=np.float32).reshape(rows, 16)
        batch.append(dict(src=[w[:rows // 2].copy(), w[rows // 2:].copy(), None, None],
                          dst=[np.zeros((rows, 8), np.float32) for _ in range(4)],
                          src_mesh=Mesh([2]), src_placements=[Shard(0)],
                          dst_mesh=Mesh([2, 2]), dst_placements=[Replicate(), Shard(1)]))
    return batch


def check(batch):
    for call in batch:
        whole = np.concatenate([s for s in call["src"] if s is not None])
        for r, out in enumerate(call["dst"]):
            np.testing.assert_array_equal(out, whole[:, 8 * (r % 2):8 * (r % 2) + 8])


def main():
    sizes = [int(a) for a in sys.argv[1:]] or [8, 32, 128]
    m2n.set_cache_dir(None)
    comm = m2n.Communicator.host(4)
    m2n.reshard_many(calls(1, 1000), comm)  # Creates the MLIR context.
    print(f"# {platform.node()}, {m2n.compiler_version()}")
    print("| reshards | one compile each (ms) | reshard_many (ms) | speedup |")
    print("|---|---|---|---|")
    first = 8
    for n in sizes:
        separate = calls(n, first)
        m2n.clear_memory_cache()
        start = time.perf_counter()
        for call in separate:
            m2n.reshard(**call, comm=comm)
        each = time.perf_counter() - start
        check(separate)
        together = calls(n, first)  # The same shapes, compiled afresh.
        m2n.clear_memory_cache()
        start = time.perf_counter()
        m2n.reshard_many(together, comm)
        many = time.perf_counter() - start
        check(together)
        print(f"| {n} | {each * 1e3:.0f} | {many * 1e3:.0f} | {each / many:.1f}x |")
        first += n


if __name__ == "__main__":
    main()
