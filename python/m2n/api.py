"""m2n.reshard and m2n.local_shape, the paper's Listing 1 API (the collectives
are in collectives.py, reshard_many in _many.py).

A communicator that runs several ranks in this process (Communicator.host,
Communicator.from_devices) takes one tensor per rank: `src` and `dst` are
sequences of comm.size entries, None for a rank outside that mesh.
"""
from __future__ import annotations

from typing import Optional, Sequence, Tuple

from ._checks import _check_comm, _check_options, _global_shape, _placements
from ._prepared import _Misaligned, _Prepared, _execute, _one_call_at_a_time, _prepare, _prepared
from ._process_group import _reshard_in_group
from ._tensors import _signature
from .comm import Communicator
from .layout import Mesh, Placement, local_box


@_one_call_at_a_time(2)
def reshard(src, dst, comm: Communicator, stream=None, *, src_mesh: Mesh,
            src_placements: Sequence[Placement], dst_mesh: Mesh,
            dst_placements: Sequence[Placement], global_shape: Optional[Sequence[int]] = None,
            options: str = "", dtype=None, stable_buffers: bool = False,
            scale: Optional[float] = None, scaling: Optional[str] = None,
            scales=None) -> None:
    """Moves the tensor from (src_mesh, src_placements) to (dst_mesh,
    dst_placements): dst[r] receives rank r's part of the destination layout.
    Destinations of another float dtype than the sources (float32, float16,
    bfloat16, float8_e4m3fn, float8_e5m2) get every element converted on
    the way, dst = dst_dtype(float32(src) * scale) (round to nearest even,
    fp8 saturating), e.g. a bf16 trainer's weights into an fp8 generator;
    `scale` (a float, rounded to float32; default 1) needs such a cast and
    is compiled into the reshard.
    Quantizing with scales from the data (docs/fp8-scaling.md): with
    scaling= ('tensor', 'block(R, C)', e.g. DeepSeek-V3's 'block(128, 128)',
    or 'mx'), float32/float16/bfloat16 sources go into float8_e4m3fn or
    float8_e5m2 destinations as to_fp8(x / scale), each block's scale
    computed from the data of this very call (amax / the fp8 type's largest
    value; for mx a power of two) and written to scales[r]: rank r's
    scales of the blocks its part touches (shape: m2n.scale_shape; float32,
    or uint8 / float8_e8m0fnu e8m0 bytes for mx).
    `stream` (CUDA backend): one stream per rank, or None for each device's
    current stream. `options`: --m2n-pipeline options (strategy=, max-ctas=,
    topology=, ...).

    With a process-group communicator, src and dst are this rank's tensors
    (None outside a mesh; a rank outside both passes global_shape= and
    dtype=); every rank of the group must call. New buffers are bound
    collectively: each call agrees through one small all-reduce whether some
    rank's buffers changed, unless stable_buffers=True promises that every
    rank reuses the buffers of its first call."""
    _check_options(options)
    _check_comm(comm, "reshard")
    if comm.backend == "cuda-processes":
        return _reshard_in_group(src, dst, comm, stream, src_mesh, src_placements, dst_mesh,
                                 dst_placements, global_shape, options, dtype, stable_buffers,
                                 scale, scaling, scales)
    try:
        key = (id(comm), src_mesh, tuple(src_placements), dst_mesh, tuple(dst_placements),
               None if global_shape is None else tuple(global_shape), options,
               _signature(src), _signature(dst), scale, scaling,
               None if scales is None else _signature(scales))
        prepared = _prepared.get(key)
    except (TypeError, AttributeError):  # Not tensors: the slow path says why.
        prepared = None

    def prepare() -> _Prepared:
        return _prepare(src, dst, comm, src_mesh, src_placements, dst_mesh, dst_placements,
                        global_shape, options, scale=scale, scaling=scaling, scales=scales)

    def refresh(p: _Prepared) -> None:
        p.fresh = False
        p.refresh(src, p.last_src, p.src_pointers, "src")
        p.refresh(dst, p.last_dst, p.dst_pointers, "dst")
        if p.quantizing:
            p.refresh(scales, p.last_scales, p.scale_pointers, "scales", aligned=False)

    if prepared is None or prepared.comm is not comm:
        prepared = prepare()
        _prepared[key] = prepared
    try:
        refresh(prepared)
    except _Misaligned:  # Buffers less aligned than the first call's.
        prepared = prepare()
        _prepared[key] = prepared
        refresh(prepared)
    prepared.recheck(src, dst, scales if prepared.quantizing else None)
    _execute(prepared, src, dst, comm, stream, scales if prepared.quantizing else None)


def local_shape(rank: int, *, mesh: Mesh, placements,
                global_shape) -> Optional[Tuple[int, ...]]:
    """Rank `rank`'s part of a tensor of `global_shape` in (mesh, placements),
    or None outside the mesh: m2n's split rule (torch.chunk's: parts of
    ceil(n / k), the last ones short or empty; or a Shard's explicit
    boundaries), to allocate a reshard's destination. Computed here, without
    compiling anything."""
    placements = _placements(placements, "placements")
    box = local_box(mesh, placements, _global_shape(global_shape), int(rank))
    return None if box is None else tuple(end - begin for begin, end in box)
