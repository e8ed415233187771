"""What m2n takes of numpy arrays and torch tensors: the dtypes it moves
and casts, shapes, addresses and alignment."""
from __future__ import annotations

from typing import Any




# numpy / torch dtype names -> m2n IR element types.
_IR_TYPES = {
    "float32": "f32", "float16": "f16", "bfloat16": "bf16", "float64": "f64",
    "int32": "i32", "int64": "i64", "int16": "i16", "int8": "i8",
    # Unsigned bytes: also how raw bytes move (max/min compare unsigned).
    "uint8": "ui8",
    # torch's OCP fp8 types (moved, never reduced; numpy has none).
    "float8_e4m3fn": "f8E4M3FN", "float8_e5m2": "f8E5M2",
    # OCP's MX scale type (power-of-two exponents): moved, never reduced.
    "float8_e8m0fnu": "f8E8M0FNU",
}


# The dtypes a reshard converts between on the way (an in-flight cast).
_CASTABLE = {"float32", "float16", "bfloat16", "float8_e4m3fn", "float8_e5m2"}


# Quantizing with scales from the data (docs/fp8-scaling.md): from these
# into these, the scales float32 (tensor, block) or e8m0 bytes (mx: uint8, or
# torch.float8_e8m0fnu).
_QUANTIZED = {"float8_e4m3fn", "float8_e5m2"}


_QUANTIZED_FROM = {"float32", "float16", "bfloat16"}


class _Tensor:
    """What m2n needs of a numpy array or a torch tensor."""

    def __init__(self, value: Any, what: str):
        self.value = value
        self.what = what
        module = type(value).__module__
        if module.startswith("numpy"):
            self.kind = "numpy"
            self.dtype = str(value.dtype)
            self.shape = tuple(value.shape)
            self.contiguous = bool(value.flags["C_CONTIGUOUS"])
            self.device = None
            self.nbytes = value.nbytes
        elif module.startswith("torch"):
            self.kind = "torch"
            self.dtype = str(value.dtype).replace("torch.", "")
            self.shape = tuple(value.shape)
            self.contiguous = bool(value.is_contiguous())
            self.device = value.device.index if value.is_cuda else None
            self.nbytes = value.numel() * value.element_size()
        else:
            raise TypeError(f"{what} must be a numpy array or a torch tensor, "
                            f"got {type(value).__name__}")
        if self.dtype not in _IR_TYPES:
            raise TypeError(f"{what} has dtype {self.dtype}, which m2n does not move "
                            f"(supported: {', '.join(_IR_TYPES)})")


def _signature(tensors):
    """Per-rank (type, shape, dtype) of a list of tensors: cheap to build and
    to hash, and what the slow path validated."""
    return tuple(None if t is None else (type(t), t.shape, t.dtype) for t in tensors)


def _alignment(pointers) -> int:
    """The largest power of two up to 16 that divides every nonzero address:
    what the compiler may assume of the buffers (its `buffer-align`; below 16
    no TMA item touches them), as Triton specializes on 16-divisible
    pointers."""
    align = 16
    for p in pointers:
        if p:
            align = min(align, p & -p)
    return align


def _itemsize(t) -> int:
    itemsize = getattr(t, "itemsize", None)  # numpy
    return int(itemsize) if itemsize is not None else t.element_size()


def _contiguous(t) -> bool:
    flags = getattr(t, "flags", None)
    return flags.c_contiguous if flags is not None else t.is_contiguous()


def _pointer(t) -> int:
    interface = getattr(t, "__array_interface__", None)
    return interface["data"][0] if interface is not None else t.data_ptr()


def _byte_range(t: "_Tensor"):
    return _pointer(t.value), _pointer(t.value) + t.nbytes
