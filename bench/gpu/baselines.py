#!/usr/bin/env python3
"""Baselines for the rows of bench/gpu/make_bench_ir.py.

  torchrun --nproc-per-node N bench/gpu/baselines.py OUT.csv [--repeat R]
      [--sizes 8K,...,1G] [--label NAME] [--collectives-only] [--no-graph]

Every row is timed the way artifact_runner times m2n: CUDA events on each
rank's stream around B back-to-back calls (B sized for ~3 ms, the same on
every rank), after a warm-up and a barrier, R repetitions; a repetition
takes the slowest rank; the median, min and max per call are written. The
same B calls captured in one CUDA graph are timed again (NCCL collectives
capture; DTensor's redistribute does not, its graph column stays empty).

Rows: NCCL send/recv (2 ranks) and the copy engine of the same GPU pair
(cudaMemcpyPeerAsync through a peer mapping, 2 ranks), DTensor
redistribute, and all_gather / reduce_scatter / all_reduce / all_to_all at
--sizes, labelled --label (e.g. "NCCL (NCCL_MAX_CTAS=8)" when the environment
sets it); with --registered the collectives run again on buffers from
NCCL's allocator registered with the communicator (torch's MemPool), and
torch's SymmetricMemory one-shot / two-shot all-reduce where torch offers
them. A row whose mechanism is missing prints why and is left out.

On one GPU (--nproc-per-node 1) the collectives run over one rank: a check
of the script itself, not a baseline.
"""
import argparse
import os
import statistics
import sys

import torch
import torch.distributed as dist

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_bench_ir import MIB, parse_sizes  # noqa: E402


def event_ms(fn, calls):
    """Milliseconds per call of `calls` back-to-back calls, the slowest rank."""
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize()
    dist.barrier()
    torch.cuda.synchronize()
    start.record()
    for _ in range(calls):
        fn()
    stop.record()
    stop.synchronize()
    slowest = torch.tensor([start.elapsed_time(stop) / calls], device="cuda")
    dist.all_reduce(slowest, op=dist.ReduceOp.MAX)
    return slowest.item()


def batch_size(fn, repeat):
    """~3 ms of calls from one timed call, the same on every rank."""
    one = event_ms(fn, 1)
    calls = torch.tensor([max(1, min(20 * repeat, int(3.0 / max(one, 1e-3))))], device="cuda")
    dist.all_reduce(calls, op=dist.ReduceOp.MIN)
    return int(calls.item())


def spread(fn, calls, repeat):
    event_ms(fn, calls)  # an untimed batch
    times = sorted(event_ms(fn, calls) for _ in range(repeat))
    return statistics.median(times), times[0], times[-1]


def agree(ok):
    """Whether every rank succeeded: a rank that failed alone must not leave
    the others waiting in a collective the failed one never calls."""
    flag = torch.tensor([1 if ok else 0], device="cuda")
    dist.all_reduce(flag, op=dist.ReduceOp.MIN)
    return bool(flag.item())


def attempt(step):
    """(result, None) or (None, the exception) of `step()`."""
    try:
        return step(), None
    except Exception as error:  # noqa: BLE001 - reported by the caller
        torch.cuda.synchronize()
        return None, error


def describe(error):
    return f"{type(error).__name__}: {str(error).splitlines()[0][:120]}" if error else "on another rank"


def timed(fn, repeat, graph=True):
    """(median, min, max, graph median or None, batch) in ms per call; None
    where a rank could not run it."""
    _, error = attempt(fn)  # warm-up: NCCL communicators, DTensor caches
    if not agree(error is None):
        if dist.get_rank() == 0:
            print(f"  (failed: {describe(error)})")
        return None
    calls = batch_size(fn, repeat)
    median, low, high = spread(fn, calls, repeat)
    graphed = None
    if graph:
        def capture():
            g = torch.cuda.CUDAGraph()
            side = torch.cuda.Stream()
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                fn()  # graphs want one call on a side stream first
            torch.cuda.current_stream().wait_stream(side)
            torch.cuda.synchronize()
            with torch.cuda.graph(g):
                for _ in range(calls):
                    fn()
            return g
        g, error = attempt(capture)
        if agree(error is None):
            graphed = spread(g.replay, 1, repeat)[0] / calls
        elif dist.get_rank() == 0:
            print(f"  (no graph: {describe(error)})")
    return median, low, high, graphed, calls


def send_recv(size, rank):
    buf = torch.empty(size, dtype=torch.uint8, device="cuda")

    def run():
        if rank == 0:
            dist.send(buf, 1)
        else:
            dist.recv(buf, 0)
    return run


def peer_copy(size, rank):
    """Rank 0 pulls `size` bytes from rank 1's buffer with the copy engine
    (the IPC handle travels over the process group); rank 1 idles."""
    buf = torch.empty(size, dtype=torch.uint8, device="cuda")
    handles = [None, None]
    dist.all_gather_object(handles, buf.untyped_storage()._share_cuda_() if rank == 1 else None)
    if rank != 0:
        return lambda: buf  # keeps the shared buffer alive
    storage = torch.UntypedStorage._new_shared_cuda(*handles[1])
    # The view lives on the peer's device; copy_ between devices is a peer copy.
    peer = torch.empty(0, dtype=torch.uint8, device=storage.device).set_(storage, 0, (size,), (1,))
    return lambda: buf.copy_(peer, non_blocking=True)


def dtensor_transition(name, dtype, world):
    from torch.distributed.tensor import DTensor, Partial, Replicate, Shard
    from torch.distributed.device_mesh import init_device_mesh
    mesh = init_device_mesh("cuda", (world,))
    rows, cols = 8192, 8192
    placements = {"s0_to_s1": (Shard(0), Shard(1)), "s0_to_r": (Shard(0), Replicate()),
                  "p_to_s0": (Partial(), Shard(0)), "p_to_r": (Partial(), Replicate())}
    src, dst = placements[name]
    local_rows = rows // world if isinstance(src, Shard) else rows
    local = torch.randn(local_rows, cols, device="cuda").to(dtype)
    tensor = DTensor.from_local(local, mesh, [src], run_check=False)
    return lambda: tensor.redistribute(mesh, [dst])


def collective(kind, size, dtype, alloc=None):
    world = dist.get_world_size()
    n = size // torch.tensor([], dtype=dtype).element_size()
    make = alloc or (lambda count: torch.empty(count, dtype=dtype, device="cuda"))
    full = make(n)
    full.copy_(torch.randn(n, device="cuda").to(dtype))
    part = make(n // world)
    if kind == "all_gather":
        return lambda: dist.all_gather_into_tensor(full, part)
    if kind == "reduce_scatter":
        return lambda: dist.reduce_scatter_tensor(part, full)
    if kind == "all_to_all":
        # m2n's row: every rank holds 1/world of the tensor and exchanges it.
        received = make(n // world)
        part.copy_(full[: n // world])
        return lambda: dist.all_to_all_single(received, part)
    return lambda: dist.all_reduce(full)


def registered_allocator(dtype):
    """Tensors from NCCL's allocator, registered with the communicator."""
    backend = dist.distributed_c10d._get_default_group()._get_backend(torch.device("cuda"))
    pool = torch.cuda.MemPool(backend.mem_allocator)
    tensors = []

    def make(count):
        with torch.cuda.use_mem_pool(pool):
            t = torch.empty(count, dtype=dtype, device="cuda")
        tensors.append(t)
        return t
    return make, lambda: backend.register_mem_pool(pool), (pool, tensors)


def symm_mem_all_reduce(size, dtype, kind):
    import torch.distributed._symmetric_memory as symm_mem
    n = size // torch.tensor([], dtype=dtype).element_size()
    group = dist.group.WORLD.group_name
    buf = symm_mem.empty(n, dtype=dtype, device="cuda")
    symm_mem.rendezvous(buf, group)
    buf.copy_(torch.randn(n, device="cuda").to(dtype))
    if kind == "one_shot":
        return lambda: torch.ops.symm_mem.one_shot_all_reduce(buf, "sum", group)
    return lambda: torch.ops.symm_mem.two_shot_all_reduce_(buf, "sum", group)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--sizes", default="8K,64K,1M,16M,256M,1G")
    parser.add_argument("--collectives-only", action="store_true")
    parser.add_argument("--label", default="NCCL")
    parser.add_argument("--registered", action="store_true",
                        help="also NCCL on registered buffers and SymmetricMemory all-reduce")
    parser.add_argument("--no-graph", action="store_true")
    args = parser.parse_args()
    os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
    rank = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", device_id=torch.device("cuda", rank))
    rank, world = dist.get_rank(), dist.get_world_size()
    graph = not args.no_graph
    csv = open(args.out, "w") if rank == 0 else None
    if csv:
        csv.write("name,baseline,ms,ms_min,ms_max,graph_ms,batch\n")

    def row(name, baseline, make, use_graph=graph):
        """Times the call `make()` builds; a mechanism that fails on any rank
        is reported and skipped by every rank. Rows are written as measured."""
        fn, error = attempt(make)
        if not agree(error is None):
            if rank == 0:
                print(f"{name:32s} {baseline:34s} unavailable: {describe(error)}")
            return
        result = timed(fn, args.repeat, use_graph)
        if result is None or not csv:
            return
        median, low, high, graphed, calls = result
        g = f"{graphed:.6f}" if graphed else ""
        csv.write(f"{name},{baseline},{median:.6f},{low:.6f},{high:.6f},{g},{calls}\n")
        csv.flush()
        g = f", graph {graphed * 1e3:.1f} us" if graphed else ""
        print(f"{name:32s} {baseline:34s} {median * 1e3:10.1f} us [{low * 1e3:.1f}-{high * 1e3:.1f}]{g} "
              f"({args.repeat} x {calls})", flush=True)

    pairs = () if args.collectives_only or world != 2 else (256 * MIB, 1024 * MIB)
    for size in pairs:
        row(f"one_to_one__f32__{size}", "NCCL send/recv", lambda: send_recv(size, rank), use_graph=False)
        row(f"one_to_one__f32__{size}", "copy engine (cudaMemcpyPeerAsync)", lambda: peer_copy(size, rank))
    transitions = () if args.collectives_only else ("s0_to_s1", "s0_to_r", "p_to_s0", "p_to_r")
    for name in transitions:
        row(f"{name}__bf16__{8192 * 8192 * 2}", "DTensor redistribute",
            lambda: dtensor_transition(name, torch.bfloat16, world), use_graph=False)
    kinds = ("all_gather", "reduce_scatter", "all_reduce", "all_to_all")
    sizes = parse_sizes(args.sizes)
    for size in sizes:
        for kind in kinds:
            row(f"{kind}__bf16__{size}", args.label, lambda: collective(kind, size, torch.bfloat16))
            torch.cuda.empty_cache()
    if args.registered:
        # Every buffer from NCCL's allocator first, then one registration.
        def registered():
            make, register, keep = registered_allocator(torch.bfloat16)
            fns = [(size, kind, collective(kind, size, torch.bfloat16, make))
                   for size in sizes for kind in kinds]
            register()
            return fns, keep
        made, error = attempt(registered)
        if agree(error is None):
            fns, keep = made
            for size, kind, fn in fns:
                row(f"{kind}__bf16__{size}", f"{args.label} (registered)", lambda: fn)
            del fns, keep
            torch.cuda.empty_cache()
        elif rank == 0:
            print(f"registered buffers unavailable: {describe(error)}")
        for size in sizes:
            for shot in ("one_shot", "two_shot"):
                row(f"all_reduce__bf16__{size}", f"SymmetricMemory {shot}",
                    lambda: symm_mem_all_reduce(size, torch.bfloat16, shot))
    if csv:
        csv.close()
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
