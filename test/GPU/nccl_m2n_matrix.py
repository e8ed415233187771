#!/usr/bin/env python3
"""Writes nccl_m2n's correctness matrix as m2n reshards, one .mlir file.

NVIDIA's nccl_m2n (nccl-extensions, nccl_m2n/tests/basic_api_test_core.h
and tests/README.md) checks ncclReshard over a matrix of cases at a world
size W: the first ranks of the communicator hold the source layout, the
others the destination layout (split_reverse_mesh the other way round),
each a 2-D mesh [d0, W_side / d0] with one axis sharding a tensor dimension
and the other replicating ("sr": Shard(d), Replicate(); "rs": Replicate(),
Shard(d)), or a 1-D mesh ("axis 0 is 1"), or every rank replicated; even
splits of the world or 3:1 and 1:3; 1-D to 3-D tensors of fp32, bf16 and
uint8. A case runs at W when its meshes divide their sides and its sharded
dimensions divide by their shard counts; else nccl_m2n skips it, and so
does this matrix (the skipped cases are listed in comments). This file
rebuilds that matrix from its description, case names included, so that
m2n runs what nccl_m2n runs: on the host backend in CI (m2n-run,
test/Tools/m2n-run/nccl-m2n-matrix.test) and on GPUs (test/GPU/run.sh).

  nccl_m2n_matrix.py --world W [--max-elements N] > matrix.mlir
"""
import argparse
import re

TYPES = {4: "f32", 2: "bf16", 1: "ui8"}
SHARDING_DIMS = [(0, 0), (0, 1), (1, 0), (1, 1)]
PLACEMENTS = [("sr", "sr"), ("rs", "rs"), ("sr", "rs"), ("rs", "sr")]


class Case:
    def __init__(self, group, dims, src_pl, dst_pl, src_dim0=0, dst_dim0=0,
                 sd=(-1, -1), esz=2, world_min=4, world_max=0, divisor=2,
                 ratio=(0, 0), dst_first=False, suffix=""):
        self.group, self.dims = group, list(dims)
        self.src_pl, self.dst_pl = src_pl, dst_pl
        self.src_dim0, self.dst_dim0 = src_dim0, dst_dim0
        self.sd, self.esz = sd, esz
        self.world_min, self.world_max, self.divisor = world_min, world_max, divisor
        self.ratio, self.dst_first = ratio, dst_first
        self.name = self._name() + suffix

    def _name(self):
        gd = "x".join(map(str, self.dims))
        if self.src_pl == "repl" and self.dst_pl == "repl":
            return f"{self.group}[gd={gd},esz={self.esz}]"
        if self.src_dim0 == 0 and self.dst_dim0 == 0:
            return f"{self.group}[gd={gd},sd={self.sd[0]}/{self.sd[1]},esz={self.esz}]"
        name = (f"{self.group}[gd={gd},m={self.src_dim0}x{self.dst_dim0}_"
                f"{self.src_pl}/{self.dst_pl},sd={self.sd[0]}/{self.sd[1]},esz={self.esz}")
        if self.ratio != (0, 0):
            name += f",ratio={self.ratio[0]}:{self.ratio[1]}"
        return name + "]"

    def layout_at(self, world):
        """(src side, dst side) at `world`, each (mesh, placements, base), or
        the reason nccl_m2n skips the case there."""
        if world < self.world_min:
            return "world below the case's minimum"
        if self.world_max and world > self.world_max:
            return "world above the case's maximum"
        if world % self.divisor:
            return "world not divisible by the case's factor"
        if self.ratio == (0, 0):
            src_total = world // 2
        else:
            src_total = world * self.ratio[0] // sum(self.ratio)
        dst_total = world - src_total
        if not src_total or not dst_total:
            return "a side without ranks"
        sides = []
        for total, pl, dim0, shard_dim in ((src_total, self.src_pl, self.src_dim0, self.sd[0]),
                                           (dst_total, self.dst_pl, self.dst_dim0, self.sd[1])):
            if pl == "repl":
                sides.append(([total], ["replicate"]))
                continue
            d0 = dim0 or 1
            if total % d0:
                return "a side's ranks not divisible by its mesh's first axis"
            d1 = total // d0
            shards = d1 if pl == "rs" else d0
            if self.dims[shard_dim] % shards:
                return "a sharded dimension not divisible by its shard count"
            shard = f"shard<{shard_dim}>"
            sides.append(([d0, d1], ["replicate", shard] if pl == "rs" else [shard, "replicate"]))
        src_base, dst_base = (dst_total, 0) if self.dst_first else (0, src_total)
        return (sides[0] + (src_base,), sides[1] + (dst_base,))

    def elements(self):
        n = 1
        for d in self.dims:
            n *= d
        return n


def placement_matrix(cases, group, dims, ns, ratio=(0, 0), esz=2, one_d=False):
    divisor = sum(ratio) if ratio != (0, 0) else 2
    for sd in [(0, 0)] if one_d else SHARDING_DIMS:
        for src_pl, dst_pl in PLACEMENTS:
            cases.append(Case(group, dims, src_pl, dst_pl, ns[0], ns[1], sd, esz,
                              divisor=divisor, ratio=ratio))


def build_cases():
    cases = []
    for esz in (4, 2, 1):
        cases.append(Case("full_replication", (200, 200), "repl", "repl", esz=esz))
    for sd in SHARDING_DIMS:
        for esz in (4, 2, 1):
            cases.append(Case("full_sharding", (200, 200), "rs", "rs", sd=sd, esz=esz))
    for ns in ((2, 4), (4, 2), (2, 2)):
        placement_matrix(cases, "2d_placement", (200, 200), ns)
    for ratio in ((3, 1), (1, 3)):
        placement_matrix(cases, "uneven_ratio", (240, 240), (2, 2), ratio)
    for dims in ((576, 576), (3072, 6144), (3072, 3072)):
        placement_matrix(cases, "tensor_size_sensitivity", dims, (4, 4))
    for dims in ((64, 128, 128), (128, 64, 64)):
        for sd in ((0, 0), (0, 1), (0, 2), (2, 0), (1, 0), (1, 1), (1, 2)):
            if dims == (64, 128, 128) and sd == (0, 1):
                continue  # cross_dim_regression's
            cases.append(Case("nd_tensors", dims, "rs", "rs", sd=sd))
    cases.append(Case("staging_slot_pressure", (64, 128, 128), "rs", "rs", sd=(0, 2),
                      world_max=4))
    cases.append(Case("pipe_lsa_fanout_reuse", (256, 128, 128), "sr", "rs", 4, 4, (0, 2),
                      world_min=8, world_max=8, divisor=8))
    for suffix in ("_first_use", "_prewarmed"):
        cases.append(Case("graph_capture", (64, 64), "rs", "rs", sd=(0, 0), esz=4,
                          suffix=suffix))
    for esz in (4, 2, 1):
        cases.append(Case("1d_full_sharding", (8192,), "rs", "rs", sd=(0, 0), esz=esz))
    for ns in ((2, 4), (4, 2), (2, 2)):
        placement_matrix(cases, "1d_2d_placement", (8192,), ns, one_d=True)
    for ratio in ((3, 1), (1, 3)):
        placement_matrix(cases, "1d_uneven_ratio", (16384,), (2, 2), ratio, one_d=True)
    for n in (16384, 1048576, 4194304):
        placement_matrix(cases, "1d_tensor_size_sensitivity", (n,), (4, 4), one_d=True)
    for src_pl, dst_pl in PLACEMENTS:
        cases.append(Case("cross_dim_regression", (200, 200), src_pl, dst_pl, 2, 4, (0, 1),
                          world_min=8))
    cases.append(Case("cross_dim_regression", (64, 128, 128), "rs", "rs", sd=(0, 1),
                      world_min=8))
    cases.append(Case("cross_dim_regression", (256, 7168, 2048), "rs", "rs", 8, 4, (0, 2),
                      world_min=256, world_max=256, divisor=256))
    cases.append(Case("window_null", (4096,), "rs", "rs", sd=(0, 0), esz=1, world_min=2))
    cases.append(Case("tiny_contribution", (4,), "repl", "repl", esz=1))
    cases.append(Case("stream_churn", (64, 64), "rs", "rs", sd=(0, 0), esz=4))
    cases.append(Case("stream_ordering", (64, 64), "rs", "rs", sd=(0, 0), esz=4))
    cases.append(Case("split_tiny_contribution", (4,), "repl", "repl", esz=1))
    cases.append(Case("split_reverse_mesh", (4096,), "rs", "rs", sd=(0, 0), esz=1,
                      dst_first=True))
    for esz in (2, 1):
        cases.append(Case("pack_lsa_hput", (4096,), "rs", "rs", sd=(0, 0), esz=esz,
                          world_min=2, world_max=2))
    cases.append(Case("pack_signal_bank", (4,), "rs", "rs", sd=(0, 0), esz=2, world_max=4))
    return cases


def layout_text(side):
    mesh, placements, base = side
    dims = ", ".join(map(str, mesh))
    mesh_text = f"#m2n.mesh<[{dims}], base = {base}>" if base else f"#m2n.mesh<[{dims}]>"
    return f"#m2n.layout<{mesh_text}, [{', '.join(placements)}]>"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--world", type=int, required=True)
    parser.add_argument("--max-elements", type=int, default=0,
                        help="leave out cases of more elements (listed as such)")
    args = parser.parse_args()
    cases = build_cases()
    print(f"// nccl_m2n's correctness matrix at world {args.world}: {len(cases)} cases"
          " (test/GPU/nccl_m2n_matrix.py).")
    emitted = 0
    for index, case in enumerate(cases):
        layout = case.layout_at(args.world)
        if isinstance(layout, str):
            print(f"// skipped {case.name}: {layout}")
            continue
        if args.max_elements and case.elements() > args.max_elements:
            print(f"// left out {case.name}: more than {args.max_elements} elements")
            continue
        shape = "x".join(map(str, case.dims)) + "x" + TYPES[case.esz]
        src = f"!m2n.dist<{shape}, {layout_text(layout[0])}>"
        dst = f"!m2n.dist<{shape}, {layout_text(layout[1])}>"
        comm = f"!m2n.comm<{args.world}>"
        func = f"case{index}_" + re.sub(r"[^A-Za-z0-9]+", "_", case.name).strip("_")
        print(f"// {case.name}")
        print(f"func.func @{func}(%c: {comm}, %x: {src}) -> {dst} {{")
        print(f"  %0 = m2n.reshard %x on %c : {comm}, {src} -> {dst}")
        print(f"  return %0 : {dst}")
        print("}")
        emitted += 1
    print(f"// {emitted} cases run at world {args.world}.")


if __name__ == "__main__":
    main()
