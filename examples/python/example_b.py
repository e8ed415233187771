#!/usr/bin/env python3
"""The NCCL M2N paper's Example B with m2n's Python API: a TP2 x PP2 trainer
on ranks 0-3 hands every pipeline stage's weight to one generator rank
(rank 4, TP1 x PP1). Stage s lives on ranks {2s, 2s+1}, rows split.

  python3 examples/python/example_b.py            # host backend (numpy)
  python3 examples/python/example_b.py --cuda     # torch, ranks over the GPUs
"""
import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))
import m2n  # noqa: E402
from m2n import Mesh, Replicate, Shard  # noqa: E402

parser = argparse.ArgumentParser()
parser.add_argument("--cuda", action="store_true", help="torch CUDA tensors")
args = parser.parse_args()
rows, cols, ranks = 1024, 512, 5
generator = Mesh([1], start_rank=4)

if args.cuda:
    import torch
    count = torch.cuda.device_count()
    comm = m2n.Communicator.from_devices([r % count for r in range(ranks)])
    new = lambda shape, r: torch.empty(*shape, dtype=torch.bfloat16,  # noqa: E731
                                       device=f"cuda:{comm.devices[r]}")
    stages = [torch.randn(rows, cols, dtype=torch.bfloat16) for _ in range(2)]
    to_rank = lambda t, r: t.to(f"cuda:{comm.devices[r]}")  # noqa: E731
    same = lambda a, b: torch.equal(a.cpu(), b)  # noqa: E731
else:
    import numpy as np
    comm = m2n.Communicator.host(ranks)
    new = lambda shape, r: np.empty(shape, np.float32)  # noqa: E731
    stages = [np.random.default_rng(s).standard_normal((rows, cols)).astype(np.float32)
              for s in range(2)]
    to_rank = lambda t, r: t.copy()  # noqa: E731
    same = np.array_equal

ok = True
for s, weight in enumerate(stages):
    tp = Mesh([2], ranks=[2 * s, 2 * s + 1])
    src = [None] * ranks
    for i, r in enumerate(tp.rank_list()):
        src[r] = to_rank(weight[i * rows // 2:(i + 1) * rows // 2], r)
    dst = [None] * 4 + [new((rows, cols), 4)]
    m2n.reshard(src, dst, comm, src_mesh=tp, src_placements=[Shard(0)],
                dst_mesh=generator, dst_placements=[Replicate()])
    if args.cuda:
        comm.synchronize()
    ok &= bool(same(dst[4], weight))
print(f"Example B ({'cuda' if args.cuda else 'host'}): {'PASS' if ok else 'FAIL'}")
sys.exit(0 if ok else 1)
