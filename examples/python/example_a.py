#!/usr/bin/env python3
"""The NCCL M2N paper's Example A with m2n's Python API: a trainer with TP4
on ranks 0-3 hands a weight to a generator with DP2 x TP2 on ranks 4-7.

  python3 examples/python/example_a.py            # host backend (numpy)
  python3 examples/python/example_a.py --cuda     # torch, ranks over the GPUs

One process runs all eight ranks (on GPUs: rank r on GPU r % count).
"""
import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))
import m2n  # noqa: E402
from m2n import Mesh, Replicate, Shard  # noqa: E402

parser = argparse.ArgumentParser()
parser.add_argument("--cuda", action="store_true", help="torch CUDA tensors")
parser.add_argument("--rows", type=int, default=4096)
parser.add_argument("--cols", type=int, default=1024)
args = parser.parse_args()

src_mesh = Mesh([1, 4], start_rank=0)   # trainer TP4
dst_mesh = Mesh([2, 2], start_rank=4)   # generator DP2 x TP2
rows, cols = args.rows, args.cols

if args.cuda:
    import torch
    count = torch.cuda.device_count()
    comm = m2n.Communicator.from_devices([r % count for r in range(8)])
    weight = torch.randn(rows, cols, dtype=torch.bfloat16)
    src = [weight[r * rows // 4:(r + 1) * rows // 4].to(f"cuda:{comm.devices[r]}")
           for r in range(4)] + [None] * 4
    dst = [None] * 4 + [torch.empty(rows // 2, cols, dtype=torch.bfloat16,
                                    device=f"cuda:{comm.devices[r]}") for r in range(4, 8)]
    as_host = lambda t: t.cpu()  # noqa: E731
    same = torch.equal
else:
    import numpy as np
    comm = m2n.Communicator.host(8)
    weight = np.random.default_rng(0).standard_normal((rows, cols)).astype(np.float32)
    src = [weight[r * rows // 4:(r + 1) * rows // 4].copy() for r in range(4)] + [None] * 4
    dst = [None] * 4 + [np.empty((rows // 2, cols), np.float32) for _ in range(4)]
    as_host = lambda t: t  # noqa: E731
    same = np.array_equal

start = time.perf_counter()
m2n.reshard(src, dst, comm, src_mesh=src_mesh, src_placements=[Replicate(), Shard(0)],
            dst_mesh=dst_mesh, dst_placements=[Replicate(), Shard(0)])
if args.cuda:
    comm.synchronize()
first = time.perf_counter() - start

ok = True
for i in range(4):
    tp = i % 2  # DP x TP grid, row-major: ranks 4,5 = TP 0,1 of DP 0.
    ok &= bool(same(as_host(dst[4 + i]), weight[tp * rows // 2:(tp + 1) * rows // 2]))
print(f"Example A ({'cuda' if args.cuda else 'host'}): {'PASS' if ok else 'FAIL'}; "
      f"first call {first * 1e3:.1f} ms (compile {sum(m2n.stats.compile_seconds) * 1e3:.1f} ms "
      f"or a disk-cache hit)")
sys.exit(0 if ok else 1)
