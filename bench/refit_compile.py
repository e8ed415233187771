#!/usr/bin/env python3
"""A whole-model refit through the one compiler (issue 30): DeepSeek-V3's
1025 tensors on 256 ranks, compiled by --m2n-pipeline, against the direct
compiler it replaced (given as an older m2n-refit binary), in one run.

    /usr/bin/python3 bench/refit_compile.py [--build build] [--repeat 5]
        [--baseline OLD/build/bin/m2n-refit]

Rows (wall times, best and median of --repeat):
  m2n-opt     `m2n-opt refit.mlir --m2n-pipeline=chunk-bytes=0 artifact=F
              -o /dev/null`: a process that parses the emitted module,
              runs the pipeline with every verifier, prints the lowered
              module (to /dev/null) and writes the artifact
  m2n-opt, kernel cache warm
              the same with kernel-cache-dir=D, D filled by a run before:
              the kernel's PTX is read back instead of built by LLVM
  api         `m2n-refit --compile`: the compiler API in process (what the
              Python JIT calls), as m2n-refit reports it: the best of
              --repeat runs after a first one, and that first run (which
              also builds the kernel's PTX)
  baseline    the same refit through the older binary's --compile (the
              direct compiler, DirectCompile.cpp, removed by issue 30), as
              it reports itself
  processes   wall times of whole processes measured the same way on both
              sides: `m2n-refit --compile` now and the older binary's
              (JSON in, artifact out, process start and the kernel's PTX
              included); the m2n-opt row is also compared with the older
              process (the last column)
The artifacts of m2n-opt and the API must be the same bytes.
"""
import argparse
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REFIT = ["examples/refit/deepseek-v3.json", "--trainer", "tp=8,pp=8,dp=2,ep=16",
         "--generator", "tp=8,dp=16", "--topology",
         "examples/topologies/gb200-nvl72-x4.json", "--strategy", "hierarchical"]


def timed(command):
    start = time.perf_counter()
    subprocess.run(command, cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    return (time.perf_counter() - start) * 1e3


def reported(command, pattern):
    out = subprocess.run(command, cwd=ROOT, check=True, capture_output=True,
                         text=True).stdout
    match = re.search(pattern, out)
    if not match:
        sys.exit(f"no timing in the output of {command[0]}:\n{out}")
    return [float(g) for g in match.groups()]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default="build")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--baseline", help="an older m2n-refit with the direct compiler")
    args = parser.parse_args()
    build = ROOT / args.build / "bin"
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        ir, api, opt = tmp / "refit.mlir", tmp / "api.m2n", tmp / "opt.m2n"
        best, first = reported(
            [build / "m2n-refit", *REFIT, "--emit-mlir", ir, "--compile", api,
             "--repeat", str(args.repeat)],
            r"through --m2n-pipeline: (\d+) ms .*?first run, which built the kernel: (\d+) ms")
        def m2n_opt(extra=""):
            return timed([build / "m2n-opt", ir,
                          f"--m2n-pipeline=chunk-bytes=0 artifact={opt} {extra}",
                          "-o", "/dev/null"])
        runs = [m2n_opt() for _ in range(args.repeat)]
        if api.read_bytes() != opt.read_bytes():
            sys.exit("m2n-opt and the compiler API wrote different artifacts")
        cache = f"kernel-cache-dir={tmp / 'kernels'}"
        m2n_opt(cache)
        cached = [m2n_opt(cache) for _ in range(args.repeat)]
        if api.read_bytes() != opt.read_bytes():
            sys.exit("m2n-opt with the kernel cache wrote a different artifact")
        size = api.stat().st_size
        rows = [("m2n-opt --m2n-pipeline (a process)", min(runs), statistics.median(runs), None, size),
                ("compiler API (m2n-refit --compile)", best, None, first, size)]
        if args.baseline:
            old = tmp / "old.m2n"
            obest, ofirst = reported(
                [args.baseline, *REFIT, "--compile", old, "--repeat", str(args.repeat)],
                r"threads: (\d+) ms .*?first run, which built the kernel: (\d+) ms")
            rows.append(("baseline: the direct compiler (removed)", obest, None, ofirst,
                         old.stat().st_size))
            new_runs = [timed([build / "m2n-refit", *REFIT, "--compile", tmp / "p.m2n"])
                        for _ in range(args.repeat)]
            old_runs = [timed([args.baseline, *REFIT, "--compile", old])
                        for _ in range(args.repeat)]
            rows.append(("process: m2n-refit --compile", min(new_runs),
                         statistics.median(new_runs), None, size))
            rows.append(("process: the direct compiler's m2n-refit --compile", min(old_runs),
                         statistics.median(old_runs), None, old.stat().st_size))
        rows.append(("m2n-opt, kernel cache warm (a process)", min(cached),
                     statistics.median(cached), None, size))
    print("DeepSeek-V3 refit, 1025 tensors, 256 ranks (trainer tp=8,pp=8,dp=2,ep=16 -> "
          "generator tp=8,dp=16, gb200-nvl72-x4), chunk-bytes=0")
    print("| path | best ms | median ms | first run ms | artifact MB | best / baseline "
          "| best / baseline process |")
    print("|---|---|---|---|---|---|---|")
    base = rows[2][1] if args.baseline else None
    process = rows[4][1] if args.baseline else None
    for i, (name, b, med, fst, sz) in enumerate(rows):
        ratio = f"{b / base:.2f}x" if base and i in (0, 1, 2, 5) else "-"
        ratio += f" | {b / process:.2f}x" if process and i in (0, 3, 4, 5) else " | -"
        print(f"| {name} | {b:.0f} | {med:.0f} | " if med is not None else f"| {name} | {b:.0f} | - | ",
              end="")
        print(f"{fst:.0f} | " if fst is not None else "- | ", end="")
        print(f"{sz / 1e6:.1f} | {ratio} |")


if __name__ == "__main__":
    main()
