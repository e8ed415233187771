#!/usr/bin/env python3
"""Writes the IR fuzzers' seed corpus: every `// -----` split of the given
MLIR files, one file each (lit RUN lines and CHECK lines dropped).

  split_ir.py OUT_DIR FILE.mlir...
"""
import os
import re
import sys


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for path in sys.argv[2:]:
        stem = os.path.splitext(os.path.basename(path))[0]
        parent = os.path.basename(os.path.dirname(path))
        with open(path) as f:
            text = f.read()
        for n, chunk in enumerate(re.split(r"^// -----\s*$", text, flags=re.M)):
            lines = [l for l in chunk.splitlines()
                     if not re.match(r"\s*//\s*(RUN|CHECK|expected-)", l)]
            body = "\n".join(lines).strip()
            if body:
                with open(os.path.join(out, f"{parent}-{stem}-{n}.mlir"), "w") as f:
                    f.write(body + "\n")


if __name__ == "__main__":
    main()
