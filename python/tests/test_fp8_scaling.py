"""The independent quantizer of the scaling modes (fp8_reference.py) on
hand-computed cases, the same ones unittests/Base/ScalingTest.cpp gives
m2n's reference (include/m2n/Base/Scaling.h): two implementations written
apart that agree on the contract of docs/fp8-scaling.md."""
import numpy as np
import pytest

from fp8_reference import EMAX, FORMATS, block_shape, dequantize, scaled_quantize

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
