#!/usr/bin/env python3
"""Prints the PTX held by the gpu.binary ops of an MLIR file (or stdin).

gpu-module-to-binary{format=isa} stores the PTX as an escaped string in the
`assembly` of a #gpu.object; this undoes the escaping so that FileCheck and
ptxas can read it.
"""
import re
import sys


def main():
    text = open(sys.argv[1]).read() if len(sys.argv) > 1 and sys.argv[1] != "-" else sys.stdin.read()
    found = False
    for match in re.finditer(r'assembly = "((?:[^"\\]|\\.)*)"', text, re.S):
        found = True
        body = re.sub(r"\\([0-9A-Fa-f]{2})",
                      lambda m: chr(int(m.group(1), 16)), match.group(1))
        sys.stdout.write(body.replace("\\\\", "\\"))
    if not found:
        sys.stderr.write("extract_ptx: no gpu.binary assembly in the input\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
