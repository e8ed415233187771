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
