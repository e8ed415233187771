"""A call as the compiler's structured request (m2n-c/Compiler.h,
m2n_compile_request): layouts, element types, casts and scalings by value;
the compiler builds the module from them. No IR text is composed here."""
from __future__ import annotations

import ctypes
import re
import struct
from typing import NamedTuple, Optional, Sequence, Tuple

from . import _native
from ._tensors import _IR_TYPES
from .layout import Mesh, c_placements

# m2n_scaling_kind.
_SCALING_KINDS = {None: 0, "tensor": 1, "mx": 3}  # block(R, C): 2


class ReshardSpec(NamedTuple):
    """One reshard of a request: checked layouts, the global shape, the
    sources' and destinations' dtypes (numpy / torch names), a cast's
    constant scale and a quantizing reshard's scaling ("tensor",
    "block(R, C)" or "mx", as _scales._scaling_ir spells it)."""
    src_mesh: Mesh
    src_placements: tuple
    dst_mesh: Mesh
    dst_placements: tuple
    shape: Tuple[int, ...]
    dtype: str
    dst_dtype: Optional[str] = None
    scale: Optional[float] = None
    scaling: Optional[str] = None


def _f32_bits(scale: Optional[float]) -> Optional[int]:
    """A cast's scale as the compiler takes it (float32): doubles that
    round to one float32 are one request."""
    return None if scale is None else struct.unpack("<I", struct.pack("<f", scale))[0]


def _layout(mesh: Mesh, placements, keep: list) -> _native.LayoutDesc:
    i64 = ctypes.c_int64
    shape = (i64 * len(mesh.dims))(*mesh.dims)
    ranks = None if mesh.ranks is None else (i64 * len(mesh.ranks))(*mesh.ranks)
    entries = _native.placement_array(c_placements(placements), keep)
    keep += [shape, ranks, entries]
    return _native.LayoutDesc(shape, len(mesh.dims), ranks, mesh.start_rank, entries)


class Request:
    """An m2n_compile_request of `specs` (reshard i of the artifact is
    specs[i]); with `group`, one m2n.group `name` of all of them. `text`:
    a canonical spelling of everything the request says (for cache keys)."""

    def __init__(self, name: str, comm_size: int, specs: Sequence[ReshardSpec],
                 group: bool):
        self.text = repr((name, comm_size, group, tuple(
            ((s.src_mesh.dims, s.src_mesh.start_rank, s.src_mesh.ranks,
              tuple(c_placements(s.src_placements))),
             (s.dst_mesh.dims, s.dst_mesh.start_rank, s.dst_mesh.ranks,
              tuple(c_placements(s.dst_placements))),
             s.shape, s.dtype, s.dst_dtype, _f32_bits(s.scale), s.scaling) for s in specs)))
        self._keep = []  # Every array the request points into.
        descs = (_native.ReshardDesc * len(specs))()
        for desc, s in zip(descs, specs):
            shape = (ctypes.c_int64 * len(s.shape))(*s.shape)
            self._keep.append(shape)
            desc.shape, desc.tensor_rank = shape, len(s.shape)
            desc.src_type = _IR_TYPES[s.dtype].encode()
            desc.dst_type = _IR_TYPES[s.dst_dtype or s.dtype].encode()
            desc.src = _layout(s.src_mesh, s.src_placements, self._keep)
            desc.dst = _layout(s.dst_mesh, s.dst_placements, self._keep)
            if s.scale is not None:
                desc.has_scale, desc.scale = 1, s.scale
            if s.scaling in _SCALING_KINDS:
                desc.scaling = _SCALING_KINDS[s.scaling]
            else:  # block(R, C)
                rows, cols = (int(x) for x in re.findall(r"\d+", s.scaling))
                desc.scaling, desc.block_rows, desc.block_cols = 2, rows, cols
        self._keep.append(descs)
        self.c = _native.CompileRequest(_native.COMPILE_REQUEST_VERSION, name.encode(),
                                        comm_size, descs, len(specs), int(group))

    def ir(self) -> str:
        """The module the compiler builds from the request (m2n_request_ir)."""
        return _native.request_ir(self.c)
