"""One process per rank through the process-group communicator, also with
several processes on one GPU (not a pytest file: run it with
`torchrun --nproc-per-node 5 python/tests/gpu_process_group_check.py`, as
test/GPU/python_gpu.sh does). With more processes than GPUs the group is
gloo's (NCCL takes one rank per GPU); each process runs on GPU
rank % count. A bf16 weight TP2 -> TP3 on 5 ranks: moved as it is, cast to
fp8 with a fixed scale, and quantized with scales from the data (block and
mx), each checked bit for bit against the independent quantizer; the
quantizing reshard is called twice with different weights."""
import os
import sys
from pathlib import Path

import numpy as np
import torch
import torch.distributed as dist

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import fp8_reference as ref  # noqa: E402
import m2n  # noqa: E402
from m2n import Mesh, Shard  # noqa: E402

WORLD = 5
SHAPE = (256, 384)


def main() -> int:
    rank = int(os.environ["RANK"])
    world = int(os.environ["WORLD_SIZE"])
    if world != WORLD:
        print(f"run with --nproc-per-node {WORLD}", file=sys.stderr)
        return 2
    gpus = torch.cuda.device_count()
    torch.cuda.set_device(rank % gpus)
    dist.init_process_group("nccl" if world <= gpus else "gloo")
    comm = m2n.Communicator.from_process_group()
    device = f"cuda:{rank % gpus}"
    src_mesh, dst_mesh = Mesh([2]), Mesh([3], start_rank=2)
    failures = 0

    def report(name, ok):
        nonlocal failures
        flags = [None] * world
        dist.all_gather_object(flags, bool(ok))
        if rank == 0:
            bad = [r for r, f in enumerate(flags) if not f]
            print(f"{name:44s} {'PASS' if not bad else f'FAIL on ranks {bad}'}", flush=True)
        failures += int(not all(flags))

    def weight(call):
        generator = torch.Generator().manual_seed(call)
        w = (torch.randn(SHAPE, generator=generator) * 2.0 ** (4 * call - 2)).to(torch.bfloat16)
        w[:128, :128] = 0  # A block of zeros: scale 1.
        return w

    def source(w):
        return w[128 * rank:128 * (rank + 1)].contiguous().to(device) if rank < 2 else None

    cols = slice(128 * (rank - 2), 128 * (rank - 1)) if rank >= 2 else None
    layouts = dict(src_mesh=src_mesh, src_placements=[Shard(0)], dst_mesh=dst_mesh,
                   dst_placements=[Shard(1)], global_shape=SHAPE)

    # Moved as it is (every process passes its own tensors only).
    w = weight(0)
    dst = torch.zeros(256, 128, dtype=torch.bfloat16, device=device) if rank >= 2 else None
    m2n.reshard(source(w), dst, comm, **layouts)
    torch.cuda.synchronize()
    report("bf16 TP2 -> TP3", dst is None or torch.equal(dst.cpu(), w[:, cols]))

    # Cast with a fixed scale: the senders do not hold the fp8 dtype.
    scale = 0.375
    dst = torch.zeros(256, 128, dtype=torch.float8_e4m3fn, device=device) if rank >= 2 else None
    m2n.reshard(source(w), dst, comm, scale=scale, **layouts)
    torch.cuda.synchronize()
    ok = True
    if dst is not None:
        want = ref.quantize((w[:, cols].float().numpy() * np.float32(scale)).astype(np.float64),
                            "float8_e4m3fn")
        ok = np.array_equal(dst.cpu().view(torch.uint8).numpy(), want)
    report("bf16 -> float8_e4m3fn, scale 0.375", ok)

    # Quantized with scales from the data, twice.
    for fmt, scaling in (("float8_e4m3fn", "block(128, 128)"), ("float8_e5m2", "mx")):
        mode = ("block", 128, 128) if scaling.startswith("block") else ("mx",)
        dst = torch.zeros(256, 128, dtype=getattr(torch, fmt), device=device) \
            if rank >= 2 else None
        scales = torch.zeros(
            m2n.scale_shape(rank, mesh=dst_mesh, placements=[Shard(1)], global_shape=SHAPE,
                            scaling=scaling),
            dtype=torch.uint8 if mode[0] == "mx" else torch.float32, device=device) \
            if rank >= 2 else None
        for call in range(2):
            w = weight(call + 1)
            m2n.reshard(source(w), dst, comm, scaling=scaling, scales=scales, **layouts)
            torch.cuda.synchronize()
            ok = True
            if dst is not None:
                bits, want_scales, e8m0 = ref.scaled_quantize(w.float().numpy(), mode, fmt)
                block = (128, 128) if mode[0] == "block" else (1, 32)
                held = (slice(0, 256 // block[0]),
                        slice(cols.start // block[1], cols.stop // block[1]))
                expected = e8m0[held] if mode[0] == "mx" else want_scales[held]
                ok = (np.array_equal(dst.cpu().view(torch.uint8).numpy(), bits[:, cols]) and
                      scales.cpu().numpy().tobytes() == expected.tobytes())
            report(f"quantizing {scaling} into {fmt}, call {call}", ok)

    # A rank that disagrees about the cast is refused on every rank.
    try:
        m2n.reshard(source(w), None if rank < 2 else
                    torch.zeros(256, 128, dtype=torch.float8_e4m3fn, device=device), comm,
                    scale=0.5 if rank == 0 else 0.25, **layouts)
        refused = False
    except ValueError as error:
        refused = "different scale= or scaling=" in str(error)
    report("different scale= on one rank: refused", refused)
    dist.destroy_process_group()
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
