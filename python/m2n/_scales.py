"""Quantizing reshards' scaling modes (docs/fp8-scaling.md): their IR
spelling, block shapes and each rank's scale tensor."""
from __future__ import annotations

import re
from typing import Optional, Sequence, Tuple

from ._checks import _global_shape, _placements
from .layout import Mesh, local_box


def _scaling_ir(scaling) -> str:
    """The IR spelling of a scaling mode: "tensor", "mx" or "block(R, C)"
    (R, C positive; spaces optional)."""
    if isinstance(scaling, str):
        text = scaling.replace(" ", "")
        if text in ("tensor", "mx"):
            return text
        match = re.fullmatch(r"block\((\d+),(\d+)\)", text)
        if match and int(match.group(1)) > 0 and int(match.group(2)) > 0:
            return f"block({int(match.group(1))}, {int(match.group(2))})"
    raise ValueError(f"scaling must be 'tensor', 'block(R, C)' (positive R, C) or 'mx', "
                     f"got {scaling!r}")


def _block_shape(scaling: str, shape: Sequence[int]) -> Tuple[int, ...]:
    """The extents of one block of a tensor of `shape` (Scaling.h)."""
    block = [1] * len(shape)
    if scaling == "tensor":
        return tuple(max(d, 1) for d in shape)
    if scaling == "mx":
        block[-1] = 32
    else:
        rows, cols = (int(x) for x in re.findall(r"\d+", scaling))
        block[-2], block[-1] = rows, cols
    return tuple(block)


def scale_shape(rank: int, *, mesh: Mesh, placements, global_shape,
                scaling: str) -> Optional[Tuple[int, ...]]:
    """The shape of rank `rank`'s scales of a quantizing reshard into
    (mesh, placements) (the blocks its part of the tensor touches: a block
    cut by a shard boundary has its scale on both sides), or None outside
    the mesh: to allocate the `scales` of m2n.reshard(..., scaling=)."""
    scaling = _scaling_ir(scaling)
    placements = _placements(placements, "placements")
    shape = _global_shape(global_shape)
    box = local_box(mesh, placements, shape, int(rank))
    if box is None:
        return None
    if any(end == begin for begin, end in box):
        return tuple(0 for _ in box)
    if scaling == "tensor":
        return tuple(1 for _ in box)
    block = _block_shape(scaling, shape)
    return tuple((end - 1) // b - begin // b + 1 for (begin, end), b in zip(box, block))
