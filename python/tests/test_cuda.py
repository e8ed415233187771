"""The Python frontend on GPUs with torch CUDA tensors (marker `cuda`; run
on the GPU machine). Ranks go round-robin over the visible GPUs, several per
GPU when there are fewer GPUs than ranks (virtual ranks)."""
import pytest

import m2n
from m2n import Mesh, Replicate, Shard

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.cuda


def devices(ranks):
    count = torch.cuda.device_count()
    return [r % count for r in range(ranks)]


def test_all_gather_bf16():
    comm = m2n.Communicator.from_devices(devices(2))
    parts = [torch.randn(256, 512, dtype=torch.bfloat16, device=f"cuda:{d}")
             for d in comm.devices]
    out = [torch.full((512, 512), float("nan"), dtype=torch.bfloat16, device=f"cuda:{d}")
           for d in comm.devices]
    m2n.all_gather(parts, out, comm, dim=0)
    comm.synchronize()
    whole = torch.cat([p.cpu() for p in parts])
    for o in out:
        assert torch.equal(o.cpu(), whole)


def test_reshard_many_one_artifact():
    """Two reshards of different dtypes through one artifact on GPUs."""
    comm = m2n.Communicator.from_devices(devices(2))
    a = torch.randn(64, 96, dtype=torch.bfloat16)
    b = torch.randint(0, 256, (33, 7), dtype=torch.uint8)
    dev = [f"cuda:{d}" for d in comm.devices]
    out_a = [torch.full((64, 96), float("nan"), dtype=torch.bfloat16, device=d) for d in dev]
    out_b = [torch.zeros(33, 7, dtype=torch.uint8, device=d) for d in dev]
    before = m2n.stats.compiles
    m2n.reshard_many([
        dict(src=[a[:32].to(dev[0]), a[32:].to(dev[1])], dst=out_a, src_mesh=Mesh([2]),
             src_placements=[Shard(0)], dst_mesh=Mesh([2]), dst_placements=[Replicate()]),
        dict(src=[b[:, :4].contiguous().to(dev[0]), b[:, 4:].contiguous().to(dev[1])],
             dst=out_b, src_mesh=Mesh([2]), src_placements=[Shard(1)], dst_mesh=Mesh([2]),
             dst_placements=[Replicate()], global_shape=(33, 7)),
    ], comm)
    comm.synchronize()
    assert m2n.stats.compiles <= before + 1
    for o in out_a:
        assert torch.equal(o.cpu(), a)
    for o in out_b:
        assert torch.equal(o.cpu(), b)


def test_reshard_many_one_launch_rebinds_and_replays_in_a_graph():
    """A group of 24 small reshards (one launch per rank): new destinations
    rebind it, and a CUDA graph that captured it replays it."""
    comm = m2n.Communicator.from_devices(devices(4))
    dev = [f"cuda:{d}" for d in comm.devices]
    weights = [torch.randn(8 + i, 12 + 2 * i) for i in range(24)]

    def calls():
        outs = [[torch.full(w.shape, float("nan"), device=d) for d in dev] for w in weights]
        batch = [dict(src=[w[:, :w.shape[1] // 2].contiguous().to(dev[0]),
                           w[:, w.shape[1] // 2:].contiguous().to(dev[1]), None, None],
                      dst=out, src_mesh=Mesh([2]), src_placements=[Shard(1)],
                      dst_mesh=Mesh([4]), dst_placements=[Replicate()]) for w, out in
                 zip(weights, outs)]
        return batch, outs

    def check(outs):
        for w, out in zip(weights, outs):
            for o in out:
                assert torch.equal(o.cpu(), w)

    for _ in range(2):  # The second call binds new destinations.
        batch, outs = calls()
        m2n.reshard_many(batch, comm)
        comm.synchronize()
        check(outs)
    batch, outs = calls()
    m2n.reshard_many(batch, comm)  # Bind outside the capture.
    comm.synchronize()
    for out in outs:
        for o in out:
            o.fill_(float("nan"))
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        m2n.reshard_many(batch, comm)
    for _ in range(2):
        for out in outs:
            for o in out:
                o.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        check(outs)


@pytest.mark.parametrize("src_dtype,dst_dtype,scale,shape", [
    ("bfloat16", "float8_e4m3fn", 0.25, (130, 96)), ("bfloat16", "float8_e5m2", None, (130, 96)),
    ("float32", "bfloat16", 3.0, (130, 96)), ("float8_e4m3fn", "float32", None, (130, 96)),
    ("float16", "bfloat16", None, (130, 96)),
    # Odd rows: vector heads and tails, and runs whose sides cannot align.
    ("bfloat16", "float8_e4m3fn", 0.5, (33, 70)), ("float8_e5m2", "float16", None, (17, 46)),
    ("float32", "float8_e4m3fn", 2.0, (9, 1030))])
def test_casts_on_the_way(src_dtype, dst_dtype, scale, shape):
    """A TP2 trainer's weights into a DP2 x TP2 generator of another dtype,
    converted by the kernel: torch computes the expectation (float32
    product, round to nearest even; the values stay inside fp8's range)."""
    comm = m2n.Communicator.from_devices(devices(6))
    dev = [f"cuda:{d}" for d in comm.devices]
    rows, cols = shape
    w = (torch.randn(rows, cols) * 4).to(getattr(torch, src_dtype))
    top = (rows + 1) // 2
    half = (cols + 1) // 2
    src = [w[:top].to(dev[0]), w[top:].to(dev[1])] + [None] * 4
    widths = [half, cols - half]
    dst = [None, None] + [torch.full((rows, widths[(r - 2) % 2]), float("nan"))
                          .to(getattr(torch, dst_dtype)).to(dev[r]) for r in range(2, 6)]
    m2n.reshard(src, dst, comm, src_mesh=Mesh([2]), src_placements=[Shard(0)],
                dst_mesh=Mesh([2, 2], start_rank=2), dst_placements=[Replicate(), Shard(1)],
                scale=scale, global_shape=shape)
    comm.synchronize()
    want = (w.float() * (1.0 if scale is None else scale)).to(getattr(torch, dst_dtype))
    for r in range(2, 6):
        first = 0 if (r - 2) % 2 == 0 else half
        part = want[:, first:first + widths[(r - 2) % 2]].contiguous()
        assert torch.equal(dst[r].cpu().view(torch.uint8), part.view(torch.uint8))


@pytest.mark.parametrize("fmt", ["float8_e4m3fn", "float8_e5m2"])
@pytest.mark.parametrize("source", ["float32", "bfloat16"])
def test_fp8_edges_match_an_independent_quantizer(fmt, source):
    """The kernel's cvt.rn.satfinite on every edge of the format (ties at
    every spacing, subnormals, the saturation boundary, infinities, NaN)
    against the quantizer written from the OFP8 definitions."""
    import numpy as np
    import fp8_reference as ref
    from test_fp8_casts import edges
    comm = m2n.Communicator.from_devices(devices(2))
    dev = [f"cuda:{d}" for d in comm.devices]
    for scale in (1.0, 0.375):
        values = edges(fmt) / np.float32(scale)
        values = values[:len(values) // 4 * 4].reshape(-1, 2)
        w = torch.from_numpy(values).to(getattr(torch, source))
        top = w.shape[0] // 2
        src = [w[:top].to(dev[0]), w[top:].to(dev[1])]
        dst = [torch.zeros(w.shape, dtype=getattr(torch, fmt), device=d) for d in dev]
        m2n.reshard(src, dst, comm, src_mesh=Mesh([2]), src_placements=[Shard(0)],
                    dst_mesh=Mesh([2]), dst_placements=[Replicate()], scale=scale)
        comm.synchronize()
        product = (w.float() * scale).numpy()
        want = ref.quantize(product.astype(np.float64), fmt)
        nan = np.isnan(product)
        for d in dst:
            got = d.cpu().view(torch.uint8).numpy()
            assert ref.is_nan(got[nan], fmt).all()
            wrong = np.flatnonzero((got != want) & ~nan)
            assert wrong.size == 0, (
                f"{wrong.size} differ, first {product.ravel()[wrong[0]]!r} -> "
                f"{got.ravel()[wrong[0]]:#04x}, reference {want.ravel()[wrong[0]]:#04x}")


def test_reduce_scatter_and_all_reduce_f32():
    comm = m2n.Communicator.from_devices(devices(2))
    parts = [torch.randint(-8, 8, (1024, 256), device=f"cuda:{d}").float() for d in comm.devices]
    total = sum(p.cpu() for p in parts)
    shards = [torch.empty(512, 256, device=f"cuda:{d}") for d in comm.devices]
    m2n.reduce_scatter(parts, shards, comm, dim=0)
    full = [torch.empty(1024, 256, device=f"cuda:{d}") for d in comm.devices]
    m2n.all_reduce(parts, full, comm)
    comm.synchronize()
    for r in range(2):
        assert torch.equal(shards[r].cpu(), total[512 * r:512 * (r + 1)])
        assert torch.equal(full[r].cpu(), total)


def test_example_a_on_virtual_ranks():
    comm = m2n.Communicator.from_devices(devices(8))
    w = torch.randn(4096, 1024, dtype=torch.bfloat16)
    src = [w[1024 * r:1024 * (r + 1)].to(f"cuda:{comm.devices[r]}") for r in range(4)] + [None] * 4
    dst = [None] * 4 + [torch.empty(2048, 1024, dtype=torch.bfloat16,
                                    device=f"cuda:{comm.devices[r]}") for r in range(4, 8)]
    m2n.reshard(src, dst, comm, src_mesh=Mesh([1, 4]), src_placements=[Replicate(), Shard(0)],
                dst_mesh=Mesh([2, 2], start_rank=4), dst_placements=[Replicate(), Shard(0)])
    comm.synchronize()
    for i in range(4):
        tp = i % 2
        assert torch.equal(dst[4 + i].cpu(), w[2048 * tp:2048 * (tp + 1)])


def test_tensor_on_the_wrong_device():
    if torch.cuda.device_count() < 2:
        pytest.skip("needs two GPUs")
    comm = m2n.Communicator.from_devices([0, 1])
    parts = [torch.ones(64, device="cuda:1"), torch.ones(64, device="cuda:1")]
    out = [torch.empty(128, device="cuda:0"), torch.empty(128, device="cuda:1")]
    with pytest.raises(ValueError, match=r"src\[0\] is on cuda:1, rank 0 runs on cuda:0"):
        m2n.all_gather(parts, out, comm)


def test_host_tensors_are_refused():
    comm = m2n.Communicator.from_devices(devices(2))
    with pytest.raises(TypeError, match="must be a CUDA tensor"):
        m2n.all_gather([torch.ones(4)] * 2, [torch.empty(8) for _ in range(2)], comm)


def test_memory_cache_cleared_between_calls():
    """The JIT may drop an artifact whose runtime context the communicator
    still holds: the context keeps its artifact alive."""
    import gc
    comm = m2n.Communicator.from_devices(devices(2))
    parts = [torch.randn(64, 32, device=f"cuda:{d}") for d in comm.devices]
    out = [torch.empty(128, 32, device=f"cuda:{d}") for d in comm.devices]
    for _ in range(3):
        m2n.all_gather(parts, out, comm, dim=0)
        comm.synchronize()
        m2n.clear_memory_cache()
        gc.collect()
        m2n.reduce_scatter(out, parts, comm, dim=0)  # Another artifact between.
        comm.synchronize()
        m2n.clear_memory_cache()
        gc.collect()
    whole = torch.cat([p.cpu() for p in parts])
    m2n.all_gather(parts, out, comm, dim=0)
    comm.synchronize()
    for o in out:
        assert torch.equal(o.cpu(), whole)


@pytest.mark.parametrize("ranks", [2, 4])
def test_own_copy_on_the_copy_engine(ranks):
    """copy-engine=true: each rank's own partial is copied by the copy engine
    before its kernel; with 4 ranks peers wait for it (reduce-share)."""
    comm = m2n.Communicator.from_devices(devices(ranks))
    parts = [torch.randint(-8, 8, (1024, 512), device=f"cuda:{d}").float()
             for d in comm.devices]
    total = sum(p.cpu() for p in parts)
    out = [torch.full((1024, 512), float("nan"), device=f"cuda:{d}") for d in comm.devices]
    for _ in range(3):  # Later calls reuse the bound buffers.
        m2n.all_reduce(parts, out, comm, options="copy-engine=true")
    comm.synchronize()
    for o in out:
        assert torch.equal(o.cpu(), total)


def test_views_at_any_alignment():
    # Tensors that start 2, 4 and 8 bytes past a 16-byte boundary (views of
    # larger allocations): compiled for that alignment (no TMA on them),
    # including a warm call that brings less aligned tensors than the first.
    comm = m2n.Communicator.from_devices(devices(4))
    parts = [torch.randint(-8, 8, (33, 130), dtype=torch.int32).to(torch.bfloat16)
             for _ in range(4)]
    total = sum(p.float() for p in parts).to(torch.bfloat16)

    def at(values, offset, device):
        base = torch.zeros(values.numel() + offset, dtype=values.dtype, device=device)
        view = base[offset:].view(values.shape)
        view.copy_(values.to(device))
        return view

    for offset in (0, 4, 2, 1, 0):
        src = [at(p, offset, f"cuda:{d}") for p, d in zip(parts, comm.devices)]
        out = [at(torch.zeros(33, 130, dtype=torch.bfloat16), (offset + 3) % 8, f"cuda:{d}")
               for d in comm.devices]
        m2n.all_reduce(src, out, comm)
        gathered = [at(torch.zeros(132, 130, dtype=torch.bfloat16), offset, f"cuda:{d}")
                    for d in comm.devices]
        m2n.all_gather(src, gathered, comm)
        comm.synchronize()
        for o, g in zip(out, gathered):
            assert torch.equal(o.cpu(), total)
            assert torch.equal(g.cpu(), torch.cat(parts))


@pytest.mark.parametrize("fmt,scaling", [("float8_e4m3fn", "block(128, 128)"),
                                         ("float8_e5m2", "mx")])
def test_quantizing_reshard_computes_scales_from_each_call(fmt, scaling):
    """A bf16 weight TP2 -> TP3 on 5 ranks quantized with scales from the
    data: two calls with different weights each get their own scales, both
    bit for bit against the independent quantizer (one binding, launched
    twice)."""
    import numpy as np
    import fp8_reference as ref
    comm = m2n.Communicator.from_devices(devices(5))
    dev = [f"cuda:{d}" for d in comm.devices]
    shape = (256, 384)
    src_mesh, dst_mesh = Mesh([2]), Mesh([3], start_rank=2)
    mode = ("block", 128, 128) if scaling.startswith("block") else ("mx",)
    src = [torch.empty(128, 384, dtype=torch.bfloat16, device=dev[r]) if r < 2 else None
           for r in range(5)]
    dst = [None, None] + [torch.zeros(256, 128, dtype=getattr(torch, fmt), device=dev[r])
                          for r in range(2, 5)]
    scales = [None if r < 2 else torch.zeros(
        m2n.scale_shape(r, mesh=dst_mesh, placements=[Shard(1)], global_shape=shape,
                        scaling=scaling),
        dtype=torch.uint8 if mode[0] == "mx" else torch.float32, device=dev[r])
        for r in range(5)]
    for call in range(2):
        w = (torch.randn(shape) * 2.0 ** (4 * call - 2)).to(torch.bfloat16)
        w[:128, :128] = 0  # A block of zeros: scale 1.
        for r in range(2):
            src[r].copy_(w[128 * r:128 * (r + 1)])
        m2n.reshard(src, dst, comm, src_mesh=src_mesh, src_placements=[Shard(0)],
                    dst_mesh=dst_mesh, dst_placements=[Shard(1)], scaling=scaling,
                    scales=scales)
        comm.synchronize()
        bits, want_scales, e8m0 = ref.scaled_quantize(w.float().numpy(), mode, fmt)
        for r in range(2, 5):
            cols = slice(128 * (r - 2), 128 * (r - 1))
            got = dst[r].cpu().view(torch.uint8).numpy()
            assert np.array_equal(got, bits[:, cols]), f"call {call}, rank {r}"
            block = (128, 128) if mode[0] == "block" else (1, 32)
            held = (slice(0, 256 // block[0]),
                    slice(cols.start // block[1], cols.stop // block[1]))
            expected = e8m0[held] if mode[0] == "mx" else want_scales[held]
            assert scales[r].cpu().numpy().tobytes() == expected.tobytes(), \
                f"call {call}, rank {r} scales"

