#!/usr/bin/env python3
"""Checks m2n-sim's .npy dumps against DTensor semantics, independently of m2n.

The global tensor follows m2n-sim's fill rule: element g (row-major linear
index) of contributor q holds g * (q + 1), so the logical value of a sum over
k contributors is g*k*(k+1)/2, of a max g*k, of a min g. Each destination
rank's local shard is cut the way DTensor does it: mesh axes in order, each
Shard(d) taking chunk i of torch.chunk (chunk size ceil(n/k)) of the current
local extent of dimension d.
"""

import argparse
import os
import sys

import numpy as np


def ints(text):
    return [int(x) for x in text.split(",")] if text else []


def local_shard(tensor, mesh_shape, placements, coords):
    for axis, placement in enumerate(placements):
        if not placement.startswith("S"):
            continue
        dim, parts, index = int(placement[1:]), mesh_shape[axis], coords[axis]
        chunk = -(-tensor.shape[dim] // parts)
        tensor = np.take(tensor, range(index * chunk,
                                       min((index + 1) * chunk, tensor.shape[dim])),
                         axis=dim)
    return tensor


def to_storage(values, dtype):
    """The values as m2n stores them (bf16 as uint16 bit patterns)."""
    if dtype == "bf16":
        bits = values.astype(np.float32).view(np.uint32).astype(np.uint64)
        bits = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
        return bits.astype(np.uint16)
    numpy_type = {"f16": np.float16, "f32": np.float32, "f64": np.float64,
                  "i8": np.int8, "i16": np.int16, "i32": np.int32,
                  "i64": np.int64}[dtype]
    if dtype.startswith("i"):
        return values.astype(np.int64).astype(numpy_type)
    return values.astype(numpy_type)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("dir")
    parser.add_argument("--shape", required=True)
    parser.add_argument("--dtype", required=True)
    parser.add_argument("--mesh", required=True, help="destination mesh shape")
    parser.add_argument("--ranks", required=True,
                        help="destination ranks, row-major")
    parser.add_argument("--placements", required=True,
                        help="destination placements: R or S<dim>, comma separated")
    parser.add_argument("--contributors", type=int, default=1)
    parser.add_argument("--reduction", default="sum")
    args = parser.parse_args()

    shape, mesh_shape, ranks = ints(args.shape), ints(args.mesh), ints(args.ranks)
    placements = args.placements.split(",")
    k = args.contributors
    g = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape)
    logical = {"sum": g * k * (k + 1) // 2, "max": g * k, "min": g}[args.reduction]

    checked = 0
    for linear, rank in enumerate(ranks):
        coords = np.unravel_index(linear, mesh_shape)
        expected = to_storage(local_shard(logical, mesh_shape, placements, coords),
                              args.dtype)
        got = np.load(os.path.join(args.dir, f"rank{rank}.npy"))
        if got.shape != expected.shape or got.dtype != expected.dtype:
            print(f"rank {rank}: got {got.dtype}{list(got.shape)}, expected "
                  f"{expected.dtype}{list(expected.shape)}")
            return 1
        if not np.array_equal(got, expected):
            print(f"rank {rank}: values differ from the DTensor shard")
            return 1
        checked += got.size
    print(f"check_shards: OK, {len(ranks)} ranks, {checked} elements")
    return 0


if __name__ == "__main__":
    sys.exit(main())
