"""The layout-level IR of a call, the compiler's input: one m2n.reshard per
tensor, and an m2n.group of them for reshard_many."""
from __future__ import annotations

import struct
from typing import Optional, Tuple

from ._scales import _global_scale_shape
from ._tensors import _IR_TYPES
from .layout import Mesh, Shard, layout_ir


def _reshard_parts(src_mesh: Mesh, src_placements, dst_mesh: Mesh, dst_placements, shape,
                   dtype: str, dst_dtype: Optional[str] = None,
                   scale: Optional[float] = None,
                   scaling: Optional[str] = None) -> Tuple[str, str, str, Optional[str]]:
    """The source and destination types of one m2n.reshard, its attributes
    (the scale of a cast as its float32 bits, a quantizing scaling) and, for
    a quantizing reshard, the type of its scales."""
    extents = "x".join(str(d) for d in shape) + "x"
    dst_layout = layout_ir(dst_mesh, dst_placements, len(shape))
    src_type = (f"!m2n.dist<{extents}{_IR_TYPES[dtype]}, "
                f"{layout_ir(src_mesh, src_placements, len(shape))}>")
    dst_type = f"!m2n.dist<{extents}{_IR_TYPES[dst_dtype or dtype]}, {dst_layout}>"
    attrs, scales_type = "", None
    if scale is not None:
        bits = struct.unpack("<I", struct.pack("<f", scale))[0]
        attrs = f" {{scale = 0x{bits:08X} : f32}}"
    if scaling is not None:
        attrs = f" {{scaling = #m2n.scaling<{scaling}>}}"
        blocks = "x".join(str(d) for d in _global_scale_shape(scaling, shape)) + "x"
        element = "f8E8M0FNU" if scaling == "mx" else "f32"
        # The result's mesh and placements without explicit boundaries: each
        # rank holds the scales of the blocks its part touches.
        chunked = [Shard(p.dim) if isinstance(p, Shard) else p for p in dst_placements]
        scales_type = (f"!m2n.dist<{blocks}{element}, "
                       f"{layout_ir(dst_mesh, chunked, len(shape))}>")
    return src_type, dst_type, attrs, scales_type


def _reshard_ir(name: str, size: int, *layouts, **kwargs) -> str:
    """One function of layout-level IR holding one m2n.reshard (a cast when
    dst_dtype differs from dtype)."""
    return _group_ir(name, size, [(layouts, kwargs)], group=False)


def _group_ir(name: str, size: int, reshards, group: bool = True) -> str:
    """One function of layout-level IR holding an m2n.reshard per
    (layouts, keyword arguments) of `reshards` in order (they are the
    artifact's reshards 0, 1, ...) and, with `group`, the m2n.group of all
    of them, named `name`: compiled into one program per rank."""
    comm_type = f"!m2n.comm<{size}>"
    parts = [_reshard_parts(*layouts, **kwargs) for layouts, kwargs in reshards]
    arguments = "".join(f", %x{i}: {src}" for i, (src, _, _, _) in enumerate(parts))
    # A quantizing reshard's second result: its scales.
    body = "".join(
        f"  %{i}{f', %s{i}' if scales else ''} = m2n.reshard %x{i} on %c{attrs} : "
        f"{comm_type}, {src} -> {dst}{f', {scales}' if scales else ''}\n"
        for i, (src, dst, attrs, scales) in enumerate(parts))
    if group:
        members = ", ".join(f"%{i}" for i in range(len(parts)))
        types = ", ".join(dst for _, dst, _, _ in parts)
        body += f'  m2n.group "{name}"({members}) : {types}\n'
    return f"func.func @{name}(%c: {comm_type}{arguments}) {{\n{body}  return\n}}\n"


def _aligned(options: str, alignment: int) -> str:
    return f"{options} buffer-align={alignment}".strip() if alignment < 16 else options
