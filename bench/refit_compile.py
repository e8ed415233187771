#!/usr/bin/env python3
"""A whole-model refit through the one compiler (issue 30): DeepSeek-V3's
1025 tensors on 256 ranks, compiled by --m2n-pipeline, against the direct
compiler it replaced (given as an older m2n-refit binary), in one run.

    /usr/bin/python3 bench/refit_compile.py [--build build] [--repeat 5]
        [--baseline OLD/build/bin/m2n-refit]

Rows (wall times, best and median over --repeat rounds; every round runs
each row once, in turn, so that the machine's load weighs on all alike):
  m2n-opt     `m2n-opt refit.mlir --m2n-pipeline=chunk-bytes=0 artifact=F
              -o /dev/null`: a process that parses the emitted module,
              runs the pipeline with every verifier, builds the kernel's PTX
              with LLVM, prints the lowered module (to /dev/null) and writes
              the artifact; against the baseline's first compile in its
              process (which also builds the kernel)
  m2n-opt, kernel cache warm
              the same with kernel-cache-dir=D, D filled before: the
              kernel's PTX is read back instead of built; against the
              baseline's second compile in its process (kernel cached)
  api         `m2n-refit --compile --repeat 1`: the compiler API in process
              (what the Python JIT calls), as m2n-refit reports it: its
              second run (kernel built in the process already) and its first
  baseline    the same refit through the older binary's --compile (the
              direct compiler, DirectCompile.cpp, removed by issue 30), as
              it reports itself, second and first run
  processes   whole `m2n-refit --compile` processes, now and the older
              binary's (JSON in, artifact out, process start and the
              kernel's PTX included)
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
        old = tmp / "old.m2n"
        subprocess.run([build / "m2n-refit", *REFIT, "--emit-mlir", ir], cwd=ROOT,
                       check=True, stdout=subprocess.DEVNULL)
        cache = f"kernel-cache-dir={tmp / 'kernels'}"

        def m2n_opt(extra=""):
            return timed([build / "m2n-opt", ir,
                          f"--m2n-pipeline=chunk-bytes=0 artifact={opt} {extra}",
                          "-o", "/dev/null"])

        def compiled(binary, out, pattern):
            return reported([binary, *REFIT, "--compile", out, "--repeat", "1"], pattern)

        m2n_opt(cache)  # Fills the kernel cache.
        # Round robin: every row once per round, so that the machine's load
        # (a shared 2-core VM swings 2x within minutes) weighs on all alike.
        rows = {name: [] for name in ("opt", "opt-warm", "api", "api-first", "base",
                                      "base-first", "process", "base-process")}
        for _ in range(args.repeat):
            rows["opt"].append(m2n_opt())
            rows["opt-warm"].append(m2n_opt(cache))
            best, first = compiled(
                build / "m2n-refit", api,
                r"through --m2n-pipeline: (\d+) ms .*?first run, which built the kernel: (\d+) ms")
            rows["api"].append(best)
            rows["api-first"].append(first)
            rows["process"].append(timed([build / "m2n-refit", *REFIT, "--compile", tmp / "p.m2n"]))
            if args.baseline:
                best, first = compiled(
                    args.baseline, old,
                    r"threads: (\d+) ms .*?first run, which built the kernel: (\d+) ms")
                rows["base"].append(best)
                rows["base-first"].append(first)
                rows["base-process"].append(timed([args.baseline, *REFIT, "--compile", old]))
            if api.read_bytes() != opt.read_bytes():
                sys.exit("m2n-opt and the compiler API wrote different artifacts")
        size = api.stat().st_size
        old_size = old.stat().st_size if args.baseline else None

    def cells(name, against=None):
        values = rows[name]
        best, median = min(values), statistics.median(values)
        ratio = "-"
        if against and rows[against]:
            ratio = (f"{best / min(rows[against]):.2f}x / "
                     f"{median / statistics.median(rows[against]):.2f}x")
        return best, median, ratio

    print("DeepSeek-V3 refit, 1025 tensors, 256 ranks (trainer tp=8,pp=8,dp=2,ep=16 -> "
          f"generator tp=8,dp=16, gb200-nvl72-x4), chunk-bytes=0, {args.repeat} rounds")
    print("| path | best ms | median ms | artifact MB | best / baseline, median / baseline |")
    print("|---|---|---|---|---|")
    table = [("m2n-opt --m2n-pipeline (a process, builds the kernel)", "opt", "base-first", size),
             ("m2n-opt, kernel cache warm (a process)", "opt-warm", "base", size),
             ("compiler API (m2n-refit --compile), its second compile (kernel cached)", "api", "base", size),
             ("compiler API, its first run (builds the kernel)", "api-first", "base-first", size),
             ("process: m2n-refit --compile", "process", "base-process", size)]
    if args.baseline:
        table += [("baseline: the direct compiler (removed), its second compile (kernel cached)",
                   "base", None, old_size),
                  ("baseline: its first run (builds the kernel)", "base-first", None, None),
                  ("process: the direct compiler's m2n-refit --compile", "base-process",
                   None, None)]
    for label, name, against, sz in table:
        if not rows[name]:
            continue
        best, median, ratio = cells(name, against if args.baseline else None)
        mb = f"{sz / 1e6:.1f}" if sz else "-"
        print(f"| {label} | {best:.0f} | {median:.0f} | {mb} | {ratio} |")


if __name__ == "__main__":
    main()
