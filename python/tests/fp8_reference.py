"""An FP8 quantizer written from the format definitions (OCP 8-bit floating
point, OFP8: E4M3FN and E5M2) and PTX's `cvt.rn.satfinite`, independent of
m2n's code: the reference its casts are checked against, bit for bit.

E4M3FN: 1 sign, 4 exponent bits (bias 7), 3 mantissa bits; no infinities,
S.1111.111 is NaN, the largest finite magnitude is S.1111.110 = 448.
E5M2: 1 sign, 5 exponent bits (bias 15), 2 mantissa bits, IEEE-like:
S.11111.00 is infinity, S.11111.{01,10,11} NaN, the largest finite is
S.11110.11 = 57344. Exponent field 0: subnormals, magnitude m * 2^(1 - bias -
mantissa bits). Conversion: round to nearest, ties to even; satfinite: a
magnitude beyond the largest finite (infinity included) becomes the largest
finite; NaN stays NaN.

Unlike m2n's host executor, which picks the nearest of the 128 encodings,
this computes the rounding arithmetically: the value's quantum (the spacing
of the format at its exponent), rint() of value / quantum, then the fields.
"""
import numpy as np

FORMATS = {
    "float8_e4m3fn": dict(exponent_bits=4, mantissa_bits=3, bias=7, max=448.0),
    "float8_e5m2": dict(exponent_bits=5, mantissa_bits=2, bias=15, max=57344.0),
}


def quantize(values, fmt: str) -> np.ndarray:
    """float64 values (exact float32 products) -> fp8 bits (uint8)."""
    f = FORMATS[fmt]
    m_bits, bias, largest = f["mantissa_bits"], f["bias"], f["max"]
    x = np.asarray(values, dtype=np.float64).ravel()
    sign = np.where(np.signbit(x), 0x80, 0).astype(np.uint8)
    magnitude = np.abs(x)
    nan = np.isnan(x)
    magnitude = np.where(nan | np.isinf(x), largest, magnitude)
    min_exponent = 1 - bias  # Of the normal numbers.
    with np.errstate(divide="ignore"):
        exponent = np.floor(np.log2(np.where(magnitude > 0, magnitude, 1.0)))
    # log2 of a float64 can land one off at exact powers of two: correct it.
    exponent = np.where(2.0 ** exponent > magnitude, exponent - 1, exponent)
    exponent = np.where(2.0 ** (exponent + 1) <= magnitude, exponent + 1, exponent)
    quantum = 2.0 ** (np.maximum(exponent, min_exponent) - m_bits)
    rounded = np.rint(magnitude / quantum) * quantum  # rint: ties to even.
    rounded = np.minimum(rounded, largest)  # satfinite
    # Fields of the rounded magnitude (rounding may have carried into the
    # next binade).
    with np.errstate(divide="ignore"):
        e = np.floor(np.log2(np.where(rounded > 0, rounded, 1.0)))
    e = np.where(2.0 ** e > rounded, e - 1, e)
    normal = (rounded >= 2.0 ** min_exponent)
    field = np.where(normal, e + bias, 0).astype(np.int64)
    mantissa = np.where(normal, rounded / 2.0 ** (e - m_bits) - 2 ** m_bits,
                        rounded / 2.0 ** (min_exponent - m_bits)).astype(np.int64)
    bits = (field << m_bits | mantissa).astype(np.uint8)
    # NaN: checked as a NaN encoding, not by its bits (docs/python.md).
    bits = np.where(nan, 0x7F, bits).astype(np.uint8)
    return (bits | sign).reshape(np.shape(values))


def dequantize(bits, fmt: str) -> np.ndarray:
    """fp8 bits -> float64 (NaN for NaN encodings, inf for E5M2's)."""
    f = FORMATS[fmt]
    e_bits, m_bits, bias = f["exponent_bits"], f["mantissa_bits"], f["bias"]
    b = np.asarray(bits, dtype=np.int64)
    negative = (b >> 7) & 1
    field = (b >> m_bits) & ((1 << e_bits) - 1)
    mantissa = b & ((1 << m_bits) - 1)
    value = np.where(field == 0, mantissa * 2.0 ** (1 - bias - m_bits),
                     (2 ** m_bits + mantissa) * 2.0 ** (field - bias - m_bits))
    top = field == (1 << e_bits) - 1
    if fmt == "float8_e4m3fn":
        value = np.where(top & (mantissa == (1 << m_bits) - 1), np.nan, value)
    else:
        value = np.where(top, np.where(mantissa == 0, np.inf, np.nan), value)
    return np.where(negative == 1, -value, value)


def is_nan(bits, fmt: str) -> np.ndarray:
    return np.isnan(dequantize(bits, fmt))


# Scaling modes (docs/fp8-scaling.md), written from their definitions:
# DeepSeek-V3's block quantization (scale = amax / fp8 max, stored as
# weight_scale_inv) and OCP MX v1.0 (shared exponent floor(log2 amax) -
# emax of the element format, an E8M0 scale).
EMAX = {"float8_e4m3fn": 8, "float8_e5m2": 15}


def block_shape(shape, mode):
    """The extents of one block: mode is ("tensor",), ("block", R, C) or
    ("mx",)."""
    if mode[0] == "tensor":
        return tuple(max(n, 1) for n in shape)
    if mode[0] == "block":
        return (1,) * (len(shape) - 2) + (mode[1], mode[2])
    return (1,) * (len(shape) - 1) + (32,)


def scaled_quantize(x, mode, fmt):
    """float32 array -> (fp8 bits, f32 scales shaped as the blocks, and for
    mx the scales' E8M0 bits)."""
    x = np.asarray(x, dtype=np.float32)
    block = block_shape(x.shape, mode)
    grid = tuple(-(-n // b) for n, b in zip(x.shape, block))
    if mode[0] == "tensor":
        grid = (1,) * x.ndim
    index = np.indices(x.shape)
    flat_block = np.ravel_multi_index(
        tuple(index[d] // block[d] for d in range(x.ndim)), grid).ravel()
    amax = np.zeros(int(np.prod(grid)), dtype=np.float32)
    magnitude = np.abs(x).ravel()
    magnitude = np.where(np.isnan(magnitude), np.float32(0), magnitude)
    np.maximum.at(amax, flat_block, magnitude)
    usable = (amax > 0) & np.isfinite(amax)
    e8m0 = None
    if mode[0] == "mx":
        _, exponent = np.frexp(np.where(usable, amax, np.float32(1)))
        shared = np.clip(exponent.astype(np.int64) - 1 - EMAX[fmt], -127, 127)
        shared = np.where(usable, shared, 0)
        scales = np.ldexp(np.float32(1), shared).astype(np.float32)
        e8m0 = (shared + 127).astype(np.uint8).reshape(grid)
    else:
        with np.errstate(under="ignore"):
            scales = (amax / np.float32(FORMATS[fmt]["max"])).astype(np.float32)
        scales = np.where(usable & (scales > 0), scales, np.float32(1))
    with np.errstate(over="ignore", under="ignore"):
        quotient = (x.ravel() / scales[flat_block]).astype(np.float32)
    bits = quantize(quotient.astype(np.float64), fmt).reshape(x.shape)
    return bits, scales.reshape(grid), e8m0
