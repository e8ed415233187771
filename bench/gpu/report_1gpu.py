#!/usr/bin/env python3
"""The 1-GPU form of the GPU benchmark: every row of bench/gpu/run.sh on one
GPU (virtual ranks: rank r of every row lives on GPU 0), as one table.

  report_1gpu.py DEFAULT.csv [--variant LABEL=CSV ...] [--before LABEL=CSV]

Each column is artifact_runner's median (host-timed: one launch, then
synchronize) of the same row compiled another way, measured in the same
run. `--before` is the same rows compiled by an older m2n and run by its
own runner in the same session: the regression column is its time over
this one's (> 1: faster now). The 1-to-1 rows (rank 0 -> rank 1, both on
GPU 0) are also set against cudaMemcpyAsync device to device on GPU 0 of
the same size (the same_gpu_copy REF rows), timed the same way.
"""
import argparse
import csv

from report import TITLES, human, key


def read(path):
    rows = {}
    with open(path) as f:
        for row in csv.DictReader(f):
            rows[row["name"].lstrip("@").split("#")[0]] = row
    return rows


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("default")
    parser.add_argument("--variant", action="append", default=[])
    parser.add_argument("--before")
    args = parser.parse_args()
    columns = [("default", read(args.default))]
    for spec in args.variant:
        label, path = spec.split("=", 1)
        columns.append((label, read(path)))
    before = None
    if args.before:
        label, path = args.before.split("=", 1)
        before = (label, read(path))
    refs = {int(name.split("__")[2]): float(row["ms"])
            for name, row in columns[0][1].items() if name.startswith("same_gpu_copy")}

    head = ["operation", "size"] + [f"{label} ms (GB/s)" for label, _ in columns]
    if before:
        head += [f"{before[0]} ms", f"{before[0]} / default"]
    head += ["cudaMemcpyAsync ms (GB/s)", "best / memcpy"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for name, row in columns[0][1].items():
        if row["status"] == "REF":
            continue
        kind, dtype, size = key(name)
        cells = [f"{TITLES.get(kind, kind)} {dtype}", human(size)]
        best = None
        for _, rows in columns:
            other = rows.get(name)
            if not other:
                cells.append("-")
                continue
            ms = float(other["ms"])
            status = "" if other["status"] == "PASS" else f" {other['status']}"
            cells.append(f"{ms:.3f} ({size / ms / 1e6:.1f}){status}")
            if other["status"] == "PASS":
                best = ms if best is None else min(best, ms)
        if before:
            old = before[1].get(name)
            if old:
                ratio = float(old["ms"]) / float(row["ms"])
                cells += [f"{float(old['ms']):.3f}", f"{ratio:.2f}x"]
            else:
                cells += ["-", "-"]
        if kind == "one_to_one" and size in refs and best:
            cells += [f"{refs[size]:.3f} ({size / refs[size] / 1e6:.1f})",
                      f"{refs[size] / best * 100:.0f}%"]
        else:
            cells += ["-", "-"]
        print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
