"""m2n's casts to FP8 on the host backend against an independent quantizer
(fp8_reference.py, from the format definitions): random values and every
edge a quantizer gets wrong (ties at every spacing, subnormals, the
saturation boundary, infinities, NaN, signed zeros), from float32 and
float16 sources, with scales; bit for bit. numpy has no fp8 dtype, so the
destinations are raw bytes handed to the runtime."""

import numpy as np
import pytest

import m2n
from m2n import Mesh, Replicate, Shard, _native
from m2n._prepared import compiled

import fp8_reference as ref

FORMATS = ["float8_e4m3fn", "float8_e5m2"]


def aligned(array, alignment=64):
    """A copy of `array` whose data starts on an `alignment`-byte boundary
    (the compiled reshard's buffer alignment)."""
    raw = np.empty(array.nbytes + alignment, np.uint8)
    start = -raw.ctypes.data % alignment
    copy = raw[start:start + array.nbytes].view(array.dtype).reshape(array.shape)
    copy[...] = array
    return copy


def cast(parts, dst_dtype, scale):
    """Two ranks, rows sharded -> replicated on both, converted on the way:
    each rank's destination bytes."""
    comm = m2n.Communicator.host(2)
    rows = sum(p.shape[0] for p in parts)
    shape = (rows,) + parts[0].shape[1:]
    artifact = compiled(comm, Mesh([2]), [Shard(0)], Mesh([2]), [Replicate()], shape,
                        str(parts[0].dtype), dst_dtype=dst_dtype, scale=scale)
    parts = [aligned(p) for p in parts]
    out = [aligned(np.full(shape, 0xAA, np.uint8)) for _ in range(2)]
    comm.context(artifact).execute((0,), _native.buffers(
        [a.ctypes.data for a in parts], [a.nbytes for a in parts],
        [a.ctypes.data for a in out], [a.nbytes for a in out]))
    return out


def edges(fmt):
    """Every fp8 magnitude, the midpoints between neighbours (ties), points
    just either side of them, the saturation boundary and beyond."""
    finite = ref.dequantize(np.arange(0x80, dtype=np.uint8), fmt)
    finite = np.sort(finite[np.isfinite(finite)])
    mids = (finite[1:] + finite[:-1]) / 2
    largest = ref.FORMATS[fmt]["max"]
    top = [largest, largest * 1.03, largest * 1.0625, largest * 1.07, largest * 2, 1e30,
           np.inf, np.nan, 0.0, 2.0 ** -30]
    values = np.concatenate([finite, mids, np.nextafter(mids, 0), np.nextafter(mids, np.inf),
                             top]).astype(np.float32)
    return np.concatenate([values, -values])


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("source", ["float32", "float16"])
def test_casts_match_an_independent_quantizer(fmt, source):
    rng = np.random.default_rng(2026)
    seed = int(rng.integers(1 << 30))
    print(f"seed {seed}")
    values_rng = np.random.default_rng(seed)
    for scale in (1.0, 0.375, 448.0 / 3.0, 2.0 ** -7):
        values = np.concatenate([
            edges(fmt) / np.float32(scale),
            values_rng.standard_normal(4000).astype(np.float32) * np.float32(
                ref.FORMATS[fmt]["max"] / 4 / scale),
            values_rng.standard_normal(1000).astype(np.float32) * np.float32(2.0 ** -12),
        ])
        with np.errstate(over="ignore"):  # Beyond float16: infinities, kept.
            values = values.astype(source)
        if len(values) % 2:
            values = values[:-1]
        w = values.reshape(-1, 2)
        half = w.shape[0] // 2
        parts = [np.ascontiguousarray(w[:half]), np.ascontiguousarray(w[half:2 * half])]
        whole = np.concatenate(parts)
        product = whole.astype(np.float32) * np.float32(scale)  # One f32 rounding.
        want = ref.quantize(product.astype(np.float64), fmt)
        for got in cast(parts, fmt, scale):
            nan = np.isnan(product)
            assert ref.is_nan(got[nan], fmt).all(), "a NaN input must stay NaN"
            mismatch = np.flatnonzero((got != want) & ~nan)
            assert mismatch.size == 0, (
                f"scale {scale}: {mismatch.size} values differ, first "
                f"{product.ravel()[mismatch[0]]!r} -> {got.ravel()[mismatch[0]]:#04x}, "
                f"reference {want.ravel()[mismatch[0]]:#04x}")


def test_the_reference_knows_the_formats():
    # Values from the OFP8 definitions, so that the reference is checked too.
    e4m3, e5m2 = "float8_e4m3fn", "float8_e5m2"
    assert ref.quantize(np.array([448.0, 464.0, 1e9, np.inf, -np.inf]), e4m3).tolist() == [
        0x7E, 0x7E, 0x7E, 0x7E, 0xFE]
    assert ref.quantize(np.array([2.0 ** -9, 2.0 ** -10, 1.5 * 2.0 ** -10, -0.0]),
                        e4m3).tolist() == [0x01, 0x00, 0x01, 0x80]
    assert ref.quantize(np.array([1.0, 1.0625, 1.1875, 240.0]), e4m3).tolist() == [
        0x38, 0x38, 0x3A, 0x77]
    assert ref.quantize(np.array([57344.0, 61440.0, np.inf, 2.0 ** -16, 1.0]), e5m2).tolist() == [
        0x7B, 0x7B, 0x7B, 0x01, 0x3C]
    assert np.isnan(ref.dequantize(np.array([0x7F, 0xFF]), e4m3)).all()
    assert ref.dequantize(np.array([0x7C, 0x7E]), e5m2)[0] == np.inf
    assert np.isnan(ref.dequantize(np.array([0x7E]), e5m2)).all()
