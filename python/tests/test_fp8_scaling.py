"""The independent quantizer of the scaling modes (fp8_reference.py) on
hand-computed cases, the same ones unittests/Base/ScalingTest.cpp gives
m2n's reference (include/m2n/Base/Scaling.h), and against m2n itself: the
plans of quantizing reshards run by m2n-sim (--dump-dst) match it bit for
bit, destination elements and scales (docs/fp8-scaling.md)."""
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

from fp8_reference import EMAX, FORMATS, block_shape, dequantize, is_nan, scaled_quantize

E4M3, E5M2 = "float8_e4m3fn", "float8_e5m2"


def test_blocks_with_edges_nan_and_infinity():
    nan, inf = np.float32("nan"), np.float32("inf")
    x = np.array([[896, -3, 1, 0.5, 0],
                  [1, 2, nan, 0.25, 0],
                  [-4, 8, 0, 0, inf]], dtype=np.float32)
    bits, scales, _ = scaled_quantize(x, ("block", 2, 2), E4M3)
    expected = np.array([[2, 1 / 448, 1], [8 / 448, 1, 1]], dtype=np.float32)
    assert scales.tobytes() == expected.tobytes()
    assert bits[0, 0] == 0x7E    # 896 / 2 = 448
    assert bits[0, 1] == 0xBC    # -1.5
    assert bits[1, 0] == 0x30    # 0.5
    assert bits[0, 2] == 0x7E    # 1 / (1/448)
    assert bits[1, 2] == 0x7F    # NaN stays NaN
    assert bits[2, 0] == 0xF6    # -224
    assert bits[2, 4] == 0x7E    # inf saturates (its block's scale is 1)
    assert bits[0, 4] == 0x00


@pytest.mark.parametrize("fmt,emax", [(E4M3, 8), (E5M2, 15)])
def test_mx_shared_exponents(fmt, emax):
    x = np.zeros((2, 64), dtype=np.float32)
    x[0, :32] = np.linspace(-1, 1, 32)   # amax 1: 2^(0 - emax)
    x[0, 32] = 512                       # amax 512: 2^(9 - emax)
    x[1, 0] = 1e-45                      # the smallest subnormal: clamped
    bits, scales, e8m0 = scaled_quantize(x, ("mx",), fmt)
    assert scales.shape == (2, 2) and e8m0.shape == (2, 2)
    assert scales[0, 0] == 2.0 ** -emax
    assert scales[0, 1] == 2.0 ** (9 - emax)
    assert scales[1, 0] == np.float32(2.0 ** -127)
    assert scales[1, 1] == 1                 # all zeros
    assert e8m0[0, 0] == 127 - emax and e8m0[1, 1] == 127
    # Powers of two divide exactly: the block's largest element is 1 x 2^emax.
    assert dequantize(bits[0, 31], fmt) == 2.0 ** emax


def test_one_scale_per_tensor():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((7, 9)).astype(np.float32)
    bits, scales, _ = scaled_quantize(x, ("tensor",), E4M3)
    assert scales.shape == (1, 1)
    assert scales[0, 0] == np.float32(np.abs(x).max()) / np.float32(448)
    # The largest magnitude lands on the format's largest finite value.
    peak = np.unravel_index(np.abs(x).argmax(), x.shape)
    assert abs(dequantize(bits[peak], E4M3)) == 448


@pytest.mark.parametrize("seed", range(20))
def test_dequantized_within_half_a_step(seed):
    """Random blocks: q x scale is within half the fp8 spacing of x (the
    rounding's bound), and no scale is zero, infinite or NaN."""
    rng = np.random.default_rng(seed)
    print("seed", seed)
    shape = (int(rng.integers(1, 40)), int(rng.integers(1, 5)) * 32)
    x = (rng.standard_normal(shape) * 10.0 ** rng.integers(-6, 6)).astype(np.float32)
    for mode in [("tensor",), ("block", int(rng.integers(1, 9)), int(rng.integers(1, 9))), ("mx",)]:
        for fmt in (E4M3, E5M2):
            bits, scales, _ = scaled_quantize(x, mode, fmt)
            assert np.all(np.isfinite(scales)) and np.all(scales > 0)
            # Each element's scale, broadcast back over its block.
            per_element = scales
            for d, b in enumerate(block_shape(x.shape, mode)):
                per_element = np.repeat(per_element, b, axis=d)
            per_element = per_element[tuple(slice(0, n) for n in x.shape)]
            v = x.astype(np.float64) / per_element
            f = FORMATS[fmt]
            exponent = np.floor(np.log2(np.maximum(np.abs(v), 1e-300)))
            spacing = 2.0 ** (np.maximum(exponent, 1 - f["bias"]) - f["mantissa_bits"])
            error = np.abs(dequantize(bits, fmt) - v)
            inside = np.abs(v) <= f["max"]
            assert np.all(error[inside] <= spacing[inside] / 2 * (1 + 1e-6))
            if mode[0] != "mx":  # amax maps to the largest finite value
                assert np.all(np.abs(v) <= f["max"] * (1 + 1e-6))
            else:  # OCP MX: amax / scale in [2^emax, 2^(emax+1)), clamped
                assert np.all(np.abs(v) < 2.0 ** (EMAX[fmt] + 1))


def _m2n_sim():
    """The build's m2n-sim (beside the libraries the tests load)."""
    lib = os.environ.get("M2N_LIB_DIR")
    root = Path(lib).parent if lib else Path(__file__).resolve().parents[2] / "build"
    tool = root / "bin" / "m2n-sim"
    if not tool.exists():
        pytest.skip(f"no m2n-sim at {tool}")
    return tool


def _as_float32(array, dtype):
    """A dumped source (bf16 as its uint16 bits) as float32 values."""
    if dtype == "bf16":
        return (array.astype(np.uint32) << 16).view(np.float32)
    return array.astype(np.float32)


# (name, source type, fp8, mode, shape, source mesh and placement, destination)
PLANS = [
    ("straddling", "bf16", E4M3, ("block", 2, 4), (4, 6), (3, 1), (2, 0)),
    ("deepseek_576", "bf16", E4M3, ("block", 128, 128), (576, 256), (4, 0), (2, 1)),
    ("mx_e5m2", "f16", E5M2, ("mx",), (7, 96), (5, 0), (2, 1)),
    ("tensor", "f32", E4M3, ("tensor",), (10, 3), (2, 0), (3, 1)),
]
IR_FP8 = {E4M3: "f8E4M3FN", E5M2: "f8E5M2"}


@pytest.mark.parametrize("name,source,fmt,mode,shape,src,dst", PLANS)
def test_m2n_sim_matches_the_independent_quantizer(tmp_path, name, source, fmt,
                                                   mode, shape, src, dst):
    """m2n's quantizing plan, run by m2n-sim (the C++ reference and the
    plan's three phases), bit for bit against this file's quantizer: every
    destination rank's elements and the scales it holds."""
    from m2n.layout import Mesh, Shard, local_box

    grid = tuple(-(-n // b) for n, b in zip(shape, block_shape(shape, mode)))
    if mode[0] == "tensor":
        grid = (1,) * len(shape)
    src_mesh, dst_mesh = Mesh([src[0]]), Mesh([dst[0]], ranks=list(range(src[0], src[0] + dst[0])))
    comm = src[0] + dst[0]
    text = "x".join(map(str, shape))
    scales = "x".join(map(str, grid))
    scale_type = "f8E8M0FNU" if mode[0] == "mx" else "f32"
    spelled = "block({}, {})".format(*mode[1:]) if mode[0] == "block" else mode[0]
    src_layout = f"#m2n.layout<#m2n.mesh<[{src[0]}]>, [shard<{src[1]}>]>"
    dst_layout = f"#m2n.layout<#m2n.mesh<[{dst[0]}], base = {src[0]}>, [shard<{dst[1]}>]>"
    q = f"!m2n.dist<{text}x{IR_FP8[fmt]}, {dst_layout}>"
    s = f"!m2n.dist<{scales}x{scale_type}, {dst_layout}>"
    w = f"!m2n.dist<{text}x{source}, {src_layout}>"
    ir = tmp_path / f"{name}.mlir"
    ir.write_text(
        f"func.func @f(%c: !m2n.comm<{comm}>, %w: {w}) -> ({q}, {s}) {{\n"
        f"  %q, %s = m2n.reshard %w on %c {{scaling = #m2n.scaling<{spelled}>}} "
        f": !m2n.comm<{comm}>, {w} -> {q}, {s}\n"
        f"  return %q, %s : {q}, {s}\n}}\n")
    out = tmp_path / "dump"
    run = subprocess.run([str(_m2n_sim()), str(ir), f"--dump-dst={out}"],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    values = _as_float32(np.load(out / "source.npy"), source)
    bits, ref_scales, e8m0 = scaled_quantize(values, mode, fmt)
    for rank in range(src[0], src[0] + dst[0]):
        box = local_box(dst_mesh, [Shard(dst[1])], shape, rank)
        region = tuple(slice(b, e) for b, e in box)
        got, want = np.load(out / f"rank{rank}.npy"), bits[region]
        # NaN as a NaN encoding, not by its bits (e5m2 has three).
        nan = is_nan(want, fmt)
        assert np.array_equal(is_nan(got, fmt), nan), f"rank {rank} NaNs"
        assert np.array_equal(got[~nan], want[~nan]), f"rank {rank} elements"
        # The blocks the rank's elements touch.
        block = block_shape(shape, mode)
        held = tuple(slice(b // k, -(-e // k)) if e > b else slice(0, 0)
                     for (b, e), k in zip(box, block))
        if mode[0] == "tensor":
            held = tuple(slice(0, 1) for _ in shape)
        got_scales = np.load(out / f"scales{rank}.npy")
        want = e8m0[held] if mode[0] == "mx" else ref_scales[held]
        assert got_scales.tobytes() == want.tobytes(), f"rank {rank} scales"


# m2n's compiled quantizing reshards (the Python frontend's IR, the
# pipeline, the runtime's host backend) against the independent quantizer.
# numpy has no fp8 dtype, so destinations are raw bytes handed to the
# runtime, as in test_fp8_casts.py.

def _aligned(array, alignment=64):
    raw = np.empty(array.nbytes + alignment, np.uint8)
    start = -raw.ctypes.data % alignment
    copy = raw[start:start + array.nbytes].view(array.dtype).reshape(array.shape)
    copy[...] = array
    return copy


def _shard(side):
    """The placement of a side (ranks, dim) or (ranks, dim, boundaries)."""
    from m2n import Shard
    return Shard(side[1], side[2] if len(side) > 2 else None)


def _run_quantizing(values, fmt, scaling, src, dst, seed_note="", options=""):
    """values (float32 or float16, global) from rows/cols sharded over
    `src` = (ranks, dim[, boundaries]) to `dst` = (ranks, dim[, boundaries])
    on the ranks after them, quantized with `scaling`: each destination
    rank's bytes and scales."""
    import m2n
    from m2n import Mesh, Shard, _native
    from m2n._prepared import compiled
    from m2n.layout import local_box

    shape = values.shape
    n = src[0] + dst[0]
    comm = m2n.Communicator.host(n)
    src_mesh = Mesh([src[0]])
    dst_mesh = Mesh([dst[0]], ranks=list(range(src[0], n)))
    artifact = compiled(comm, src_mesh, [_shard(src)], dst_mesh, [_shard(dst)], shape,
                        str(values.dtype), options=options, dst_dtype=fmt,
                        scaling=scaling)
    sources, outs, scales = [None] * n, [None] * n, [None] * n
    for rank in range(n):
        box = local_box(src_mesh, [_shard(src)], shape, rank)
        if box is not None:
            sources[rank] = _aligned(values[tuple(slice(b, e) for b, e in box)])
        box = local_box(dst_mesh, [_shard(dst)], shape, rank)
        if box is not None:
            outs[rank] = _aligned(np.full([e - b for b, e in box], 0x5A, np.uint8))
            shape_here = m2n.scale_shape(rank, mesh=dst_mesh, placements=[_shard(dst)],
                                         global_shape=shape, scaling=scaling)
            # The Python rule and the C library's agree.
            assert shape_here == artifact.scale_shape(rank)
            scales[rank] = _aligned(np.full(shape_here, np.nan, np.float32)
                                    if scaling != "mx" else
                                    np.full(shape_here, 0xFF, np.uint8))
    pointers = lambda arrays: [None if a is None else a.ctypes.data for a in arrays]
    sizes = lambda arrays: [0 if a is None else a.nbytes for a in arrays]
    comm.context(artifact).execute((0,), _native.buffers(
        pointers(sources), sizes(sources), pointers(outs), sizes(outs), pointers(scales),
        sizes(scales)))
    return dst_mesh, outs, scales


COMPILED = [
    # Blocks straddling both sides' uneven shards, a ragged last block.
    (E4M3, "block(4, 8)", (10, 21), (3, 1), (2, 0), "float32"),
    (E5M2, "block(4, 8)", (10, 21), (2, 0), (3, 1), "float16"),
    # DeepSeek-V3's blocks: rows into columns.
    (E4M3, "block(128, 128)", (256, 384), (2, 0), (3, 1), "float32"),
    (E5M2, "mx", (6, 96), (2, 0), (3, 1), "float32"),
    (E4M3, "mx", (5, 64), (2, 1), (2, 0), "float16"),
    (E4M3, "tensor", (9, 7), (3, 0), (2, 1), "float32"),
    # Explicit boundaries on both sides (an empty part, a part of one
    # column), blocks straddling them.
    (E4M3, "block(4, 8)", (10, 21), (3, 1, [0, 2, 2, 21]), (2, 0, [0, 7, 10]), "float32"),
    (E5M2, "mx", (5, 96), (2, 0, [0, 4, 5]), (3, 1, [0, 40, 41, 96]), "float16"),
]


# The default route, and the one where the source ranks (apart from the
# destinations here) quantize bands of each region into scratches.
@pytest.mark.parametrize("options", ["", "quantize-on-sources=true"])
@pytest.mark.parametrize("fmt,scaling,shape,src,dst,source", COMPILED)
def test_compiled_reshards_match_the_independent_quantizer(fmt, scaling, shape, src, dst,
                                                           source, options):
    """Zeros (whole blocks of them), NaN, an infinity, 30 binades: every
    destination element and every scale a rank holds, bit for bit (NaN as
    a NaN encoding)."""
    from m2n import Shard
    from m2n.layout import local_box

    seed = int(np.random.default_rng().integers(1 << 30))
    print(f"seed {seed}")
    rng = np.random.default_rng(seed)
    values = (rng.standard_normal(shape) * 2.0 ** rng.integers(-15, 15, shape))
    values[rng.random(shape) < 0.15] = 0.0
    values[:4, :8] = 0.0  # A whole block of zeros (scale 1).
    values.flat[rng.integers(values.size)] = np.nan
    values.flat[rng.integers(values.size)] = -np.inf
    values = values.astype(source)
    mode = (("block",) + tuple(int(x) for x in scaling[6:-1].split(","))
            if scaling.startswith("block") else (scaling,))
    bits, ref_scales, e8m0 = scaled_quantize(values.astype(np.float32), mode, fmt)
    dst_mesh, outs, scales = _run_quantizing(values, fmt, scaling, src, dst,
                                             options=options)
    block = block_shape(shape, mode)
    for rank, out in enumerate(outs):
        if out is None:
            continue
        box = local_box(dst_mesh, [_shard(dst)], shape, rank)
        want = bits[tuple(slice(b, e) for b, e in box)]
        nan = is_nan(want, fmt)
        assert np.array_equal(is_nan(out, fmt), nan), f"rank {rank} NaNs (seed {seed})"
        assert np.array_equal(out[~nan], want[~nan]), f"rank {rank} elements (seed {seed})"
        held = tuple(slice(b // k, -(-e // k)) for (b, e), k in zip(box, block))
        if mode[0] == "tensor":
            held = tuple(slice(0, 1) for _ in shape)
        expected = e8m0[held] if mode[0] == "mx" else ref_scales[held]
        assert scales[rank].tobytes() == expected.tobytes(), f"rank {rank} scales"


def test_scaling_is_checked_before_compiling():
    import m2n
    from m2n import Mesh, Shard

    comm = m2n.Communicator.host(2)
    src = [np.zeros((4, 8), np.float32), None]
    dst = [None, np.zeros((4, 8), np.float32)]
    layouts = dict(src_mesh=Mesh([1]), src_placements=[Shard(0)],
                   dst_mesh=Mesh([1], ranks=[1]), dst_placements=[Shard(0)])
    scales = [None, np.zeros((1, 1), np.float32)]
    with pytest.raises(TypeError, match="float8_e4m3fn or float8_e5m2 destinations"):
        m2n.reshard(src, dst, comm, scaling="block(4, 8)", scales=scales, **layouts)
    with pytest.raises(ValueError, match="scaling must be 'tensor', 'block"):
        m2n.reshard(src, dst, comm, scaling="blocks(4)", scales=scales, **layouts)
    with pytest.raises(ValueError, match="block\\(0, 8\\)|scaling must be"):
        m2n.reshard(src, dst, comm, scaling="block(0, 8)", scales=scales, **layouts)
    with pytest.raises(ValueError, match="pass scaling= too"):
        m2n.reshard(src, dst, comm, scales=scales, **layouts)
    with pytest.raises(ValueError, match="pass scales="):
        m2n.reshard(src, dst, comm, scaling="tensor", **layouts)
    with pytest.raises(ValueError, match="pass one of them"):
        m2n.reshard(src, dst, comm, scaling="tensor", scale=2.0, scales=scales, **layouts)


def test_scale_shapes_follow_the_blocks_a_rank_touches():
    import m2n
    from m2n import Mesh, Replicate, Shard

    # 10 rows over 4 ranks (torch.chunk: 3, 3, 3, 1); blocks of 4 rows:
    # rank 1 (rows 3-5) touches block rows 0 and 1, rank 3 (row 9) block
    # row 2 only; rank 4 is outside the mesh.
    mesh = Mesh([4])
    shapes = [m2n.scale_shape(r, mesh=mesh, placements=[Shard(0)], global_shape=(10, 21),
                              scaling="block(4, 8)") for r in range(5)]
    assert shapes == [(1, 3), (2, 3), (2, 3), (1, 3), None]
    assert m2n.scale_shape(0, mesh=Mesh([2]), placements=[Replicate()], global_shape=(5, 64),
                           scaling="mx") == (5, 2)
    assert m2n.scale_shape(1, mesh=Mesh([2]), placements=[Shard(1)], global_shape=(5, 64),
                           scaling="tensor") == (1, 1)


def test_the_runtime_refuses_missing_and_short_scales():
    """The C API names the problem: a quantizing reshard run without scale
    buffers, and a scale buffer too small for its rank."""
    import m2n
    from m2n import Mesh, Shard, _native
    from m2n._prepared import compiled

    comm = m2n.Communicator.host(2)
    artifact = compiled(comm, Mesh([1]), [Shard(0)], Mesh([1], ranks=[1]), [Shard(0)],
                        (4, 8), "float32", dst_dtype=E4M3, scaling="block(2, 4)")
    src = _aligned(np.ones((4, 8), np.float32))
    out = _aligned(np.zeros((4, 8), np.uint8))
    short = _aligned(np.zeros(3, np.float32))  # Rank 1 holds 2 x 2 scales.
    p = lambda arrays: [None if a is None else a.ctypes.data for a in arrays]
    n = lambda arrays: [0 if a is None else a.nbytes for a in arrays]
    context = comm.context(artifact)
    with pytest.raises(m2n.M2NError, match=r"bind it with its scale buffers \(m2n_buffers.scales\)"):
        context.execute((0,), _native.buffers(p([src, None]), n([src, None]),
                                              p([None, out]), n([None, out])))
    with pytest.raises(m2n.M2NError, match="rank 1 needs a scale buffer of 16 bytes, got 12"):
        context.execute((0,), _native.buffers(p([src, None]), n([src, None]), p([None, out]),
                                              n([None, out]), p([None, short]), n([None, short])))


def test_refit_passes_each_generator_tensors_scaling(monkeypatch):
    """m2n.refit hands a generator tensor's scaling and scale tensors to its
    reshard (a single cast scale skips it: its scales come from the data),
    refuses them on the trainer side, and the reshard checks them."""
    import sys
    import m2n
    from m2n import Mesh, Shard

    comm = m2n.Communicator.host(2)
    w = np.zeros((4, 8), np.float32)
    src_mesh, dst_mesh = Mesh([1]), Mesh([1], ranks=[1])
    trainer = {"w": m2n.Sharded([w, None], src_mesh, [Shard(0)]),
               "norm": m2n.Sharded([w, None], src_mesh, [Shard(0)])}
    scales = [None, np.zeros((1, 1), np.float32)]
    generator = {
        # numpy has no float8 dtype: the calls are only looked at here.
        "w": m2n.Sharded([None, np.zeros((4, 8), np.uint8)], dst_mesh, [Shard(0)],
                         scaling="block(4, 8)", scales=scales),
        "norm": m2n.Sharded([None, np.zeros((4, 8), np.float16)], dst_mesh, [Shard(0)]),
    }
    calls = []
    monkeypatch.setattr(sys.modules["m2n.refit"], "reshard_many",
                        lambda batch, comm, stream=None, options="": calls.extend(batch))
    m2n.refit(trainer, generator, comm, scale=0.5)
    quantized, cast = calls
    assert quantized["scaling"] == "block(4, 8)" and quantized["scales"] is scales
    assert "scale" not in quantized
    assert cast["scale"] == 0.5 and "scaling" not in cast
    with pytest.raises(ValueError, match="belong to the generator tensor"):
        m2n.refit(dict(trainer, w=m2n.Sharded([w, None], src_mesh, [Shard(0)],
                                              scaling="tensor")), generator, comm)
    monkeypatch.undo()
    # Through the real reshard_many: the reshard's own checks answer.
    float32_out = m2n.Sharded([None, np.zeros((4, 8), np.float32)], dst_mesh, [Shard(0)],
                              scaling="block(4, 8)", scales=scales)
    with pytest.raises(TypeError, match="float8_e4m3fn or float8_e5m2 destinations"):
        m2n.refit(trainer, {"w": float32_out}, comm, strict=False)
    no_scales = m2n.Sharded([None, np.zeros((4, 8), np.float32)], dst_mesh, [Shard(0)],
                            scaling="tensor")
    with pytest.raises(ValueError, match="pass scales="):
        m2n.refit(trainer, {"w": no_scales}, comm, strict=False)
