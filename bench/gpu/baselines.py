#!/usr/bin/env python3
"""Baselines for the rows of bench/gpu/make_bench_ir.py.

Run with `torchrun --nproc-per-node 2 bench/gpu/baselines.py OUT.csv`; with
more processes (`--collectives-only`: the 1-to-1 and DTensor rows are the
2-GPU rows) the collectives run over all of them. `--label` names the
baseline (e.g. "NCCL (NCCL_MAX_CTAS=8)" when the environment sets it).
Every row is timed the way artifact_runner times m2n: host clock around the
operation and a device synchronize, after a barrier; the slower rank counts;
the median of --repeat runs after one warm-up.
"""
import argparse
import os
import statistics
import sys
import time

import torch
import torch.distributed as dist

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_bench_ir import MIB  # noqa: E402

DTYPES = {"bf16": torch.bfloat16, "f32": torch.float32}


def timed(fn, repeat):
    fn()  # warm-up: NCCL communicators and DTensor caches
    times = []
    for _ in range(repeat):
        torch.cuda.synchronize()
        dist.barrier()
        start = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - start) * 1e3)
    slowest = torch.tensor(times, device="cuda")
    dist.all_reduce(slowest, op=dist.ReduceOp.MAX)
    return statistics.median(slowest.tolist())


def send_recv(size, rank):
    buf = torch.empty(size, dtype=torch.uint8, device="cuda")

    def run():
        if rank == 0:
            dist.send(buf, 1)
        else:
            dist.recv(buf, 0)
    return run


def dtensor_transition(name, dtype, rank):
    from torch.distributed.tensor import DTensor, Partial, Replicate, Shard
    from torch.distributed.device_mesh import init_device_mesh
    mesh = init_device_mesh("cuda", (2,))
    rows, cols = 8192, 8192
    placements = {"s0_to_s1": (Shard(0), Shard(1)), "s0_to_r": (Shard(0), Replicate()),
                  "p_to_s0": (Partial(), Shard(0)), "p_to_r": (Partial(), Replicate())}
    src, dst = placements[name]
    local_rows = rows // 2 if isinstance(src, Shard) else rows
    local = torch.randn(local_rows, cols, device="cuda").to(dtype)
    tensor = DTensor.from_local(local, mesh, [src], run_check=False)
    return lambda: tensor.redistribute(mesh, [dst])


def collective(kind, size, dtype):
    n = size // torch.tensor([], dtype=dtype).element_size()
    full = torch.randn(n, device="cuda").to(dtype)
    part = torch.empty(n // dist.get_world_size(), dtype=dtype, device="cuda")
    if kind == "all_gather":
        return lambda: dist.all_gather_into_tensor(full, part)
    if kind == "reduce_scatter":
        return lambda: dist.reduce_scatter_tensor(part, full)
    return lambda: dist.all_reduce(full)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--collectives-only", action="store_true")
    parser.add_argument("--label", default="NCCL")
    args = parser.parse_args()
    os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    torch.cuda.set_device(rank)
    rows = []
    pairs = () if args.collectives_only else (256 * MIB, 1024 * MIB)
    transitions = () if args.collectives_only else ("s0_to_s1", "s0_to_r", "p_to_s0", "p_to_r")
    for size in pairs:
        rows.append((f"one_to_one__f32__{size}", "NCCL send/recv",
                     timed(send_recv(size, rank), args.repeat)))
    for name in transitions:
        rows.append((f"{name}__bf16__{8192 * 8192 * 2}", "DTensor redistribute",
                     timed(dtensor_transition(name, torch.bfloat16, rank), args.repeat)))
    for size in (1 * MIB, 16 * MIB, 256 * MIB, 1024 * MIB):
        for kind in ("all_gather", "reduce_scatter", "all_reduce"):
            rows.append((f"{kind}__bf16__{size}", args.label,
                         timed(collective(kind, size, torch.bfloat16), args.repeat)))
            torch.cuda.empty_cache()
    if rank == 0:
        with open(args.out, "w") as f:
            f.write("name,baseline,ms\n")
            for name, baseline, ms in rows:
                f.write(f"{name},{baseline},{ms:.6f}\n")
                print(f"{name:32s} {baseline:22s} {ms:9.3f} ms")
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
