#!/usr/bin/env python3
"""Writes a random matrix of reshards and collectives as one .mlir file.

Every case is small and odd on purpose: 1-17 elements per rank, odd inner
dimensions, uneven shards of every dimension (torch.chunk's and explicit
boundaries with empty parts), every element type with sum,
max and min, on a communicator of 4 ranks (virtual ranks on one GPU). The
same file runs on the host backend in CI (m2n-run, test/Tools/m2n-run) and on
GPUs (test/GPU/run.sh through artifact_runner, guard bytes and all).

  random_matrix.py [--cases N] [--seed S] > matrix.mlir
"""
import argparse
import random

TYPES = ["f32", "f16", "bf16", "f64", "i8", "i16", "i32", "i64"]
OPS = ["sum", "max", "min"]
RANKS = 4


def layout(mesh, base, placements):
    text = ", ".join(placements)
    if base:
        return f"#m2n.layout<#m2n.mesh<[{', '.join(map(str, mesh))}], base = {base}>, [{text}]>"
    return f"#m2n.layout<#m2n.mesh<[{', '.join(map(str, mesh))}]>, [{text}]>"


def dist(shape, dtype, lay):
    dims = "x".join(map(str, shape))
    return f"!m2n.dist<{dims}x{dtype}, {lay}>"


def shape_for(rng, dims, parts):
    # Odd extents: 1-17 elements per part along a sharded dimension.
    return [rng.randint(1, 17) * (parts if d == 0 else 1) + rng.randint(0, parts - 1)
            if d == 0 else rng.choice([1, 3, 5, 7, 9, 13, 17]) for d in range(dims)]


def boundaries(rng, extent, parts):
    """Random explicit boundaries of `parts` parts (empty ones too)."""
    cuts = sorted(rng.randint(0, extent) for _ in range(parts - 1))
    return "[" + ", ".join(map(str, [0] + cuts + [extent])) + "]"


def shard(rng, d, extent, parts):
    """shard<d>, or one time in three shard<d, [explicit boundaries]>."""
    if rng.random() < 1 / 3:
        return f"shard<{d}, {boundaries(rng, extent, parts)}>"
    return f"shard<{d}>"


def case(rng, index):
    dtype = rng.choice(TYPES)
    op = rng.choice(OPS)
    kind = rng.choice(["all_reduce", "all_gather", "reduce_scatter", "all_to_all",
                       "reshard", "reshard"])
    dims = rng.randint(1, 3)
    k = rng.randint(1, RANKS)
    shape = shape_for(rng, dims, k)
    rng.shuffle(shape)
    d = rng.randrange(dims)
    name = f"c{index}_{kind}_{dtype}"
    comm = f"!m2n.comm<{RANKS}>"
    if kind == "all_reduce":
        src = layout([k], 0, [f"partial<{op}>"])
        dst = layout([k], 0, ["replicate"])
        body = f"m2n.all_reduce %x on %c mesh_axes = [0]"
    elif kind == "all_gather":
        src = layout([k], 0, [shard(rng, d, shape[d], k)])
        dst = layout([k], 0, ["replicate"])
        body = f"m2n.all_gather %x on %c mesh_axes = [0]"
    elif kind == "reduce_scatter":
        src = layout([k], 0, [f"partial<{op}>"])
        dst = layout([k], 0, [shard(rng, d, shape[d], k)])
        body = f"m2n.reduce_scatter %x on %c mesh_axes = [0] scatter_dim = {d}"
    elif kind == "all_to_all" and dims > 1:
        e = (d + rng.randint(1, dims - 1)) % dims
        src = layout([k], 0, [f"shard<{d}>"])
        dst = layout([k], 0, [f"shard<{e}>"])
        body = f"m2n.all_to_all %x on %c mesh_axes = [0] split_dim = {e}"
    else:
        # Any layout to any layout: meshes of 1-2 axes anywhere on the
        # communicator, overlapping or disjoint.
        def random_layout(allow_partial):
            axes = rng.choice([[1], [2], [3], [4], [2, 2], [1, 2], [2, 1]])
            size = 1
            for a in axes:
                size *= a
            base = rng.randint(0, RANKS - size)
            placements = []
            for _ in axes:
                choice = rng.random()
                if allow_partial and choice < 0.3:
                    placements.append(f"partial<{op}>")
                elif choice < 0.75:
                    placements.append(f"shard<{rng.randrange(dims)}>")
                else:
                    placements.append("replicate")
            # Explicit boundaries on the first axis splitting a dimension
            # (over every axis splitting it), one time in three.
            plain = list(placements)
            for axis, p in enumerate(plain):
                if not p.startswith("shard<"):
                    continue
                splitting = [a for a, q in enumerate(plain) if q == p]
                if splitting[0] == axis:
                    parts = 1
                    for a in splitting:
                        parts *= axes[a]
                    placements[axis] = shard(rng, int(p[6:-1]), shape[int(p[6:-1])], parts)
            return layout(axes, base, placements)
        src = random_layout(True)
        dst = random_layout(False)
        kind = "reshard"
        name = f"c{index}_reshard_{dtype}"
        body = "m2n.reshard %x on %c"
    return (f"func.func @{name}(%c: {comm}, %x: {dist(shape, dtype, src)}) {{\n"
            f"  %0 = {body} : {comm}, {dist(shape, dtype, src)} -> {dist(shape, dtype, dst)}\n"
            f"  return\n}}\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=240)
    parser.add_argument("--seed", type=int, default=20261201)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    print(f"// Generated by test/GPU/random_matrix.py --cases {args.cases} --seed {args.seed}")
    for index in range(args.cases):
        print(case(rng, index))


if __name__ == "__main__":
    main()
