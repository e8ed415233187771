#!/usr/bin/env python3
"""Planning, routing and compiling at scale (issue 19): how long m2n takes
on reshards whose communicator, rank count or tensor is huge.

    /usr/bin/python3 bench/scale.py [--build build] [--repeat 5]

Each row is the median wall time of --repeat runs, measured three ways:
  route     m2n-opt --m2n-plan-intersections --m2n-route-topology (a process)
  pipeline  m2n-opt --m2n-pipeline=artifact=... -o /dev/null (a process that
            also prints the lowered module: 8 MB of IR for the hand-off)
  api       the compiler's C API in this process (m2n_compile, what the
            Python JIT and m2n-refit --compile call): IR text to artifact
            bytes, nothing printed; the first call also builds the kernel's
            PTX, later calls of the same op set reuse it.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def reshard(name, comm, shape, elem, src, dst):
    dist = lambda layout: f"!m2n.dist<{shape}x{elem}, {layout}>"
    return (f"func.func @{name}(%c: !m2n.comm<{comm}>, %x: {dist(src)}) {{\n"
            f"  %0 = m2n.reshard %x on %c : !m2n.comm<{comm}>, {dist(src)} -> {dist(dst)}\n"
            f"  return\n}}\n")


def inputs():
    half = 32768
    return {
        # 32,768 trainer ranks hand 32768x1024 f32 row blocks to 32,768
        # generator ranks: 65,536 ranks take part.
        "handoff-65536": reshard(
            "handoff", 2 * half, f"{half}x1024", "f32",
            f"#m2n.layout<#m2n.mesh<[{half}]>, [shard<0>]>",
            f"#m2n.layout<#m2n.mesh<[{half}], base = {half}>, [shard<0>]>"),
        # The same hand-off between strided rank lists (even ranks to odd
        # ranks): meshes of explicit ranks, looked up through MeshIndex.
        "handoff-65536-strided": reshard(
            "strided", 2 * half, f"{half}x1024", "f32",
            "#m2n.layout<#m2n.mesh<[%d], ranks = [%s]>, [shard<0>]>"
            % (half, ", ".join(str(2 * i) for i in range(half))),
            "#m2n.layout<#m2n.mesh<[%d], ranks = [%s]>, [shard<0>]>"
            % (half, ", ".join(str(2 * i + 1) for i in range(half)))),
        # A comm<2^24> of which two ranks take part.
        "comm-2p24-two-ranks": reshard(
            "two", 2**24, "1024", "f32",
            "#m2n.layout<#m2n.mesh<[1]>, [replicate]>",
            f"#m2n.layout<#m2n.mesh<[1], base = {2**24 - 1}>, [replicate]>"),
        # The same with comm<2>: the floor of a compile.
        "comm-2-two-ranks": reshard(
            "two", 2, "1024", "f32",
            "#m2n.layout<#m2n.mesh<[1]>, [replicate]>",
            "#m2n.layout<#m2n.mesh<[1], base = 1>, [replicate]>"),
        # 2^40 f32 (4 TiB) from two ranks to two others, 4 MiB chunks.
        "four-tib": reshard(
            "huge", 4, str(2**40), "f32",
            "#m2n.layout<#m2n.mesh<[2]>, [shard<0>]>",
            "#m2n.layout<#m2n.mesh<[2], base = 2>, [shard<0>]>"),
    }


def timed(command, repeat):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", default=str(ROOT / "build"))
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--api", help=argparse.SUPPRESS)  # Internal: one input.
    args = parser.parse_args()
    opt = os.path.join(args.build, "bin", "m2n-opt")
    os.environ.setdefault("M2N_LIB_DIR", os.path.join(args.build, "lib"))
    sys.path.insert(0, str(ROOT / "python"))
    from m2n import _native

    if args.api:
        text, times = Path(args.api).read_text(), []
        for _ in range(args.repeat + 1):
            start = time.perf_counter()
            artifact = _native.compile_ir(text, "")
            times.append(time.perf_counter() - start)
        print(len(artifact), *times)
        return

    print(f"| input | route (process) | pipeline (process) | api, first call in the process | api, median of later calls | artifact |")
    print("|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as work:
        for name, text in inputs().items():
            path = os.path.join(work, name + ".mlir")
            Path(path).write_text(text)
            route = timed([opt, path, "--m2n-plan-intersections", "--m2n-route-topology",
                           "-o", os.devnull], args.repeat)
            pipeline = timed([opt, path, f"--m2n-pipeline=artifact={work}/{name}.m2n",
                              "-o", os.devnull], args.repeat)
            # A fresh process per input: its first call builds the kernel.
            out = subprocess.run([sys.executable, __file__, "--build", args.build,
                                  "--api", path, "--repeat", str(args.repeat)],
                                 check=True, capture_output=True, text=True).stdout.split()
            api = [float(t) for t in out[1:]]
            size = int(out[0])
            print(f"| {name} | {route:.3f} s | {pipeline:.3f} s | {api[0]:.3f} s | "
                  f"{statistics.median(api[1:]):.3f} s | {size} B |", flush=True)


if __name__ == "__main__":
    main()
