"""A whole-model refit as one group against the same tensors one call each.

    build/bin/m2n-refit examples/refit/qwen3-32b.json --trainer tp=2,pp=2 \
        --generator tp=2 --shrink 4 --emit-calls refit.json
    python3 bench/refit_group.py refit.json [--cuda] [--repeat 5] [--csv FILE]

Every tensor of the refit (m2n-refit --emit-calls: names, shapes, dtypes,
both layouts) gets a fresh random global value, its trainer parts as
sources and poisoned generator parts as destinations. One compilation
(m2n.reshard_many: one artifact) serves both sides:

  * group:     m2n.reshard_many(calls)              one launch per rank
  * per call:  m2n.reshard_many(calls, group=False) one launch per tensor
  * with --dst-dtype, also the cast as a pass of its own: the group into
    temporaries of the source dtype, then torch converting each tensor

Both are checked against the global values (every destination, after a
poisoning), then timed the same way in the same run: CUDA events around
`--iterations` back-to-back refits after a warm-up, median over `--repeat`
(the host backend: wall clock the same way). With --cuda, rank r runs on
GPU r % (GPUs): on one GPU every rank is a virtual rank.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "python"))

import m2n  # noqa: E402
from m2n import Mesh, Partial, Replicate, Shard  # noqa: E402
from m2n.layout import local_box  # noqa: E402

TORCH_DTYPES = {"bf16": "bfloat16", "f16": "float16", "f32": "float32",
                "f8E4M3FN": "float8_e4m3fn", "f8E5M2": "float8_e5m2"}


def placement(text: str):
    """A placement as m2n's IR spells it: replicate, partial<op>, shard<d>
    or shard<d, [b0, ...]> (explicit boundaries)."""
    if text == "replicate":
        return Replicate()
    kind, arg = text[:-1].split("<", 1)
    if kind != "shard":
        return Partial(arg)
    dim, _, bounds = arg.partition(",")
    boundaries = json.loads(bounds) if bounds.strip() else None
    return Shard(int(dim), boundaries)


def layout(spec):
    return Mesh(spec["mesh"], ranks=spec["ranks"]), [placement(p) for p in spec["placements"]]


class Refit:
    """The refit's tensors: global values, sources, destinations, calls.
    torch tensors on GPUs; numpy arrays on the host backend, where bf16
    moves as float16 (numpy has no bf16; the same bytes move)."""

    def __init__(self, spec, comm, cuda: bool, seed: int, dst_dtype=None, scale=None):
        self.spec, self.comm, self.cuda = spec, comm, cuda
        self.dst_dtype, self.scale = dst_dtype, scale
        n = comm.size
        self.values, self.calls, self.bytes = [], [], 0
        if cuda:
            import torch
            generator = torch.Generator().manual_seed(seed)
        else:
            import numpy as np
            rng = np.random.default_rng(seed)
        for t in spec["tensors"]:
            shape = tuple(t["shape"])
            if cuda:
                dtype = getattr(torch, TORCH_DTYPES[t["dtype"]])
                value = torch.randn(shape, generator=generator).to(dtype)
            else:
                dtype = {"f32": np.float32}.get(t["dtype"], np.float16)
                value = rng.standard_normal(shape, dtype=np.float32).astype(dtype)
            src_mesh, src_placements = layout(t["src"])
            dst_mesh, dst_placements = layout(t["dst"])
            src, dst = [None] * n, [None] * n
            for r in range(n):
                box = local_box(src_mesh, src_placements, shape, r)
                if box is not None:
                    part = value[tuple(slice(b, e) for b, e in box)]
                    src[r] = part.contiguous().to(f"cuda:{comm.devices[r]}") if cuda \
                        else np.ascontiguousarray(part)
                box = local_box(dst_mesh, dst_placements, shape, r)
                if box is not None:
                    local = tuple(e - b for b, e in box)
                    dst[r] = torch.empty(local, dtype=getattr(torch, dst_dtype) if dst_dtype
                                         else dtype, device=f"cuda:{comm.devices[r]}") \
                        if cuda else np.empty(local, dtype)
                    self.bytes += dst[r].nbytes if not cuda else \
                        dst[r].numel() * dst[r].element_size()
            self.values.append(value)
            call = dict(src=src, dst=dst, src_mesh=src_mesh, src_placements=src_placements,
                        dst_mesh=dst_mesh, dst_placements=dst_placements, global_shape=shape)
            if dst_dtype and scale is not None:
                call["scale"] = scale
            self.calls.append(call)

    def poison(self):
        for call in self.calls:
            for d in call["dst"]:
                if d is None:
                    continue
                if self.cuda:
                    import torch
                    d.view(torch.uint8).fill_(0xFF)
                else:
                    d.view("uint8").fill(0xFF)

    def check(self):
        for t, value, call in zip(self.spec["tensors"], self.values, self.calls):
            for r, d in enumerate(call["dst"]):
                if d is None:
                    continue
                box = local_box(call["dst_mesh"], call["dst_placements"], tuple(t["shape"]), r)
                want = value[tuple(slice(b, e) for b, e in box)]
                if self.cuda and self.dst_dtype:
                    import torch
                    want = (want.float() * (1.0 if self.scale is None else self.scale)).to(
                        getattr(torch, self.dst_dtype))
                if self.cuda:
                    import torch
                    same = torch.equal(d.cpu().view(torch.uint8),
                                       want.contiguous().view(torch.uint8))
                else:
                    same = d.tobytes() == want.tobytes()
                if not same:
                    raise SystemExit(f"refit_group: {t['name']} rank {r}: wrong values")


def timed(run, synchronize, cuda: bool, iterations: int, repeat: int):
    """Median and spread (ms per refit) of `repeat` timings of `iterations`
    back-to-back runs, after a warm-up; CUDA events on GPUs."""
    run()
    synchronize()
    samples = []
    for _ in range(repeat):
        if cuda:
            import torch
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(iterations):
                run()
            end.record()
            synchronize()
            samples.append(start.elapsed_time(end) / iterations)
        else:
            begin = time.perf_counter()
            for _ in range(iterations):
                run()
            samples.append((time.perf_counter() - begin) * 1e3 / iterations)
    return statistics.median(samples), min(samples), max(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("calls", help="m2n-refit --emit-calls output")
    parser.add_argument("--cuda", action="store_true", help="torch CUDA tensors (virtual ranks)")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--iterations", type=int, default=3)
    parser.add_argument("--seed", type=int, default=20261201)
    parser.add_argument("--csv", help="append the two rows to this CSV")
    parser.add_argument("--dst-dtype", help="the generator's dtype (torch name, e.g. "
                        "float8_e4m3fn): every tensor cast on the way (--cuda)")
    parser.add_argument("--scale", type=float, help="the cast's factor")
    args = parser.parse_args()
    spec = json.loads(Path(args.calls).read_text())
    n = spec["ranks"]
    if args.cuda:
        import torch
        count = torch.cuda.device_count()
        comm = m2n.Communicator.from_devices([r % count for r in range(n)])
        synchronize = comm.synchronize
        where = f"{count} GPU(s) ({torch.cuda.get_device_name(0)}), {n} ranks"
    else:
        comm = m2n.Communicator.host(n)
        synchronize = lambda: None  # noqa: E731
        where = f"host backend, {n} ranks"
    if args.dst_dtype and not args.cuda:
        raise SystemExit("refit_group: --dst-dtype needs --cuda (numpy has no bf16/fp8)")
    refit = Refit(spec, comm, args.cuda, args.seed, args.dst_dtype, args.scale)
    cast = f", cast to {args.dst_dtype} x {args.scale or 1.0}" if args.dst_dtype else ""
    print(f"refit_group: {spec['model']}, {len(refit.calls)} tensors, trainer {spec['trainer']} "
          f"-> generator {spec['generator']}{cast}; {where}; {refit.bytes / 1e9:.3f} GB into the "
          f"generator's tensors; seed {args.seed}", flush=True)
    begin = time.perf_counter()
    m2n.reshard_many(refit.calls, comm)  # Compile (one artifact), bind, launch.
    synchronize()
    first = time.perf_counter() - begin
    print(f"first call (compile {m2n.stats.compiles} artifact(s), bind, run): {first:.2f} s",
          flush=True)
    rows = []
    for name, group in (("group", True), ("per call", False)):
        refit.poison()
        m2n.reshard_many(refit.calls, comm, group=group)
        synchronize()
        refit.check()
        median, low, high = timed(lambda: m2n.reshard_many(refit.calls, comm, group=group),
                                  synchronize, args.cuda, args.iterations, args.repeat)
        rows.append((name, median, low, high))
        refit.poison()  # Checked again after the timed runs.
        m2n.reshard_many(refit.calls, comm, group=group)
        synchronize()
        refit.check()
    if args.dst_dtype:
        # The cast as a pass of its own: the same group moving the source
        # dtype into temporaries, then torch converting each tensor.
        import torch
        plain = [dict(call, dst=[None if d is None else torch.empty(
            d.shape, dtype=call["src"][next(r for r, x in enumerate(call["src"])
                                            if x is not None)].dtype, device=d.device)
            for d in call["dst"]]) for call in refit.calls]
        for call in plain:
            call.pop("scale", None)
        factor = 1.0 if args.scale is None else args.scale

        def reshard_then_cast():
            m2n.reshard_many(plain, comm)
            for call, temporaries in zip(refit.calls, plain):
                for d, t in zip(call["dst"], temporaries["dst"]):
                    if d is not None:
                        d.copy_((t.float() * factor).to(d.dtype))

        refit.poison()
        reshard_then_cast()
        synchronize()
        refit.check()
        median, low, high = timed(reshard_then_cast, synchronize, args.cuda, args.iterations,
                                  args.repeat)
        rows.append(("group, then a torch cast pass", median, low, high))
    print(f"\n| launch | ms per refit (median) | min | max | GB/s | vs per call |")
    print(f"|---|---|---|---|---|---|")
    per_call = rows[1][1]
    for name, median, low, high in rows:
        print(f"| {name} | {median:.3f} | {low:.3f} | {high:.3f} | "
              f"{refit.bytes / (median * 1e-3) / 1e9:.1f} | {per_call / median:.2f}x |")
    print(f"\n(both checked bit for bit before and after timing; {args.iterations} back-to-back "
          f"refits per sample, {args.repeat} samples, "
          f"{'CUDA events' if args.cuda else 'wall clock'})")
    if args.csv:
        new = not os.path.exists(args.csv)
        with open(args.csv, "a") as out:
            if new:
                out.write("model,tensors,ranks,backend,launch,ms_median,ms_min,ms_max,bytes\n")
            for name, median, low, high in rows:
                out.write(f"{spec['model']},{len(refit.calls)},{n},"
                          f"{'cuda' if args.cuda else 'host'},{name},{median:.4f},{low:.4f},"
                          f"{high:.4f},{refit.bytes}\n")


if __name__ == "__main__":
    main()
