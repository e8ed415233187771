#!/usr/bin/env python3
"""The Python JIT's first compile in a fresh process, for one or more m2n
source trees (each with its build/lib), measured in alternating processes so
that all see the same load:

    /usr/bin/python3 bench/python_cold.py [--rounds 10] TREE [TREE...]

Each process loads the compiler and runtime libraries, then times its first
`m2n.all_gather` (2 host ranks, 1 KiB, an empty cache directory: the kernel
is built) and the `m2n_compile` call inside it. Prints min and median.
"""
import argparse
import re
import statistics
import subprocess
import sys

CHILD = r"""
import sys, tempfile, time
sys.path.insert(0, sys.argv[1] + "/python")
import numpy as np
import m2n
from m2n import _native
m2n.set_cache_dir(tempfile.mkdtemp())
_native.compiler(); _native.runtime()
spent = []
compile_request = _native.compile_request
def timed(*args, **kwargs):
    start = time.perf_counter()
    try:
        return compile_request(*args, **kwargs)
    finally:
        spent.append(time.perf_counter() - start)
_native.compile_request = timed
two = m2n.Communicator.host(2)
src = [np.ones(256, np.float32) for _ in range(2)]
dst = [np.zeros(512, np.float32) for _ in range(2)]
start = time.perf_counter()
m2n.all_gather(src, dst, two)
print(f"call {1e3 * (time.perf_counter() - start):.3f} compile {1e3 * sum(spent):.3f}")
"""


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("trees", nargs="+")
    args = parser.parse_args()
    times = {tree: [] for tree in args.trees}
    for _ in range(args.rounds):
        for tree in args.trees:
            out = subprocess.run([sys.executable, "-c", CHILD, tree], check=True,
                                 capture_output=True, text=True).stdout
            match = re.search(r"call ([\d.]+) compile ([\d.]+)", out)
            times[tree].append((float(match.group(1)), float(match.group(2))))
    print(f"first compile in a fresh process, {args.rounds} rounds")
    print("| tree | first call min / median ms | its compile min / median ms |")
    print("|---|---|---|")
    for tree, values in times.items():
        calls = [v[0] for v in values]
        compiles = [v[1] for v in values]
        print(f"| {tree} | {min(calls):.1f} / {statistics.median(calls):.1f} | "
              f"{min(compiles):.1f} / {statistics.median(compiles):.1f} |")


if __name__ == "__main__":
    main()
