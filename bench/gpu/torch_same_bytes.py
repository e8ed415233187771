#!/usr/bin/env python3
"""What torch needs on one GPU for the bytes of m2n's virtual-rank rows.

  python3 bench/gpu/torch_same_bytes.py OUT.csv [--ranks 2] [--sizes 1M,256M]
      [--repeat R]

The reference of issue 35's whole-GPU reductions: for a collective of R
virtual ranks of S bytes each (make_bench_ir.py's rows), the element-wise
work every rank's result needs, done by torch on the whole GPU:
  * reduce_scatter: each rank's S/R-byte share, the sum of the R ranks'
    inputs there (torch.add, then R - 2 in-place adds in bf16);
  * all_reduce: each rank's S bytes, the same sum;
  * all_gather: each rank's copy of the other ranks' S-byte inputs;
  * all_to_all: each rank's copy of S bytes.
Timed as artifact_runner times m2n: CUDA events around B back-to-back
calls (B sized for ~3 ms), after a warm-up, R repetitions, median / min /
max per call; then the same B calls in one CUDA graph. The CSV has
baselines.py's columns, so report.py joins it as a baseline file.
"""
import argparse
import os
import statistics
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_bench_ir import parse_sizes  # noqa: E402


def per_call_ms(fn, calls):
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize()
    start.record()
    for _ in range(calls):
        fn()
    stop.record()
    stop.synchronize()
    return start.elapsed_time(stop) / calls


def measure(fn, repeat):
    """(median, min, max, graph median, batch) in ms per call."""
    fn()
    calls = max(1, min(20 * repeat, int(3.0 / max(per_call_ms(fn, 1), 1e-3))))
    per_call_ms(fn, calls)  # an untimed batch
    times = sorted(per_call_ms(fn, calls) for _ in range(repeat))
    graph = torch.cuda.CUDAGraph()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        fn()
    torch.cuda.current_stream().wait_stream(side)
    with torch.cuda.graph(graph):
        for _ in range(calls):
            fn()
    graphed = statistics.median(per_call_ms(graph.replay, 1) for _ in range(repeat)) / calls
    return statistics.median(times), times[0], times[-1], graphed, calls


def work(kind, size, ranks):
    """The calls one launch of `kind` over `ranks` virtual ranks of `size`
    bytes (bf16) needs, as one function."""
    elements = size // 2
    inputs = [torch.randn(elements, device="cuda").to(torch.bfloat16) for _ in range(ranks)]
    if kind in ("reduce_scatter", "all_reduce"):
        share = elements // ranks if kind == "reduce_scatter" else elements
        outputs = [torch.empty(share, dtype=torch.bfloat16, device="cuda") for _ in range(ranks)]

        def run():
            for r, out in enumerate(outputs):
                at = r * share if kind == "reduce_scatter" else 0
                torch.add(inputs[0][at:at + share], inputs[1][at:at + share], out=out)
                for other in inputs[2:]:
                    out.add_(other[at:at + share])
        return run
    copies = ranks - 1 if kind == "all_gather" else 1
    outputs = [torch.empty(elements * copies, dtype=torch.bfloat16, device="cuda") for _ in range(ranks)]

    def run():
        for r, out in enumerate(outputs):
            for c in range(copies):
                out[c * elements:(c + 1) * elements].copy_(inputs[(r + 1 + c) % ranks])
    return run


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out")
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--sizes", default="1M,256M")
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    if args.ranks < 2:
        parser.error("--ranks must be at least 2")
    label = f"torch on the whole GPU ({torch.cuda.get_device_name()})"
    with open(args.out, "w") as csv:
        csv.write("name,baseline,ms,ms_min,ms_max,graph_ms,batch\n")
        for kind in ("all_gather", "reduce_scatter", "all_reduce", "all_to_all"):
            for size in parse_sizes(args.sizes):
                median, low, high, graphed, calls = measure(work(kind, size, args.ranks), args.repeat)
                csv.write(f"{kind}__bf16__{size},{label},{median:.6f},{low:.6f},{high:.6f},{graphed:.6f},{calls}\n")
                print(f"{kind:15s} {size:>11d} B  {median * 1e3:9.1f} us  graph {graphed * 1e3:9.1f} us")
                torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
