"""Checks that libm2n_runtime.so stands alone (issue 15): it needs no
library of the compiler (no libMLIR, libLLVM, libm2n_compiler), exports its
C API only, and contains no code of the compiler's planning libraries.
Usage: runtime_stands_alone.py LIBRARY"""
import re
import subprocess
import sys

# What the runtime may need at load time: the C and C++ runtimes.
ALLOWED_NEEDED = re.compile(
    r"^(libc|libm|libdl|libpthread|librt|libstdc\+\+|libgcc_s|ld-linux[-\w]*)\.so")
# Code of the compiler that must never be inside the runtime.
COMPILER_SYMBOLS = re.compile(
    r"\b(mlir|llvm)::|m2n::(lowerSchedule|TopologyRouter|IntersectionPlanner|"
    r"ReshardSimulator|estimateSchedule|chunkSchedule|addDataDependencies|"
    r"verifyPlan|checkDestination|sourceBytes)\b")


def run(*command):
    return subprocess.run(command, check=True, capture_output=True,
                          text=True).stdout


def main(library):
    problems = []
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]",
                        run("readelf", "-d", library))
    problems += [f"needs {name}" for name in needed
                 if not ALLOWED_NEEDED.match(name)]
    # Symbol-version nodes (type A, "M2N_RUNTIME_0.1") are not functions.
    exported = [fields[-1] for fields in
                (line.split() for line in
                 run("nm", "-D", "--defined-only", library).splitlines())
                if fields[-2] != "A"]
    problems += [f"exports {name}" for name in exported
                 if not name.startswith("m2n_")]
    for line in run("nm", "-C", library).splitlines():
        if COMPILER_SYMBOLS.search(line):
            problems.append(f"contains compiler code: {line.strip()}")
    print(f"{library}: needs {', '.join(needed)}; exports {len(exported)} "
          "symbols")
    for problem in problems[:40]:
        print("runtime_stands_alone:", problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
