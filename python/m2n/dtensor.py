"""DTensor in and out: m2n.redistribute(x, device_mesh, placements).

Reads the source layout from a torch DTensor (its DeviceMesh and
placements), reshards with m2n over a process-group communicator (one rank
per process, like DTensor itself) and returns a DTensor on the destination
mesh. Unlike DTensor.redistribute, the destination mesh may differ from the
source mesh (cross-mesh: trainer -> generator), as long as both live in the
communicator's group.
"""
from __future__ import annotations

from typing import Optional, Sequence

from . import api
from .comm import Communicator
from .layout import Mesh, Partial, Replicate, Shard

_default_comm: Optional[Communicator] = None


def _comm() -> Communicator:
    global _default_comm
    if _default_comm is None:
        _default_comm = Communicator.from_process_group()
    return _default_comm


def mesh_of(device_mesh) -> Mesh:
    """The m2n mesh of a torch DeviceMesh (global ranks, row-major)."""
    ranks = device_mesh.mesh
    return Mesh(list(ranks.shape), ranks=[int(r) for r in ranks.flatten().tolist()])


def placement_of(placement):
    """The m2n placement of a torch DTensor placement."""
    if isinstance(placement, Shard) and placement.boundaries is not None:
        raise ValueError(f"a DTensor has no placement for {placement!r}: DTensor splits by "
                         f"torch.chunk's rule only; reshard its local tensors with "
                         f"m2n.reshard instead")
    name = type(placement).__name__
    if name == "Shard":
        return Shard(int(placement.dim))
    if name == "Replicate":
        return Replicate()
    if name == "Partial":
        op = str(getattr(placement, "reduce_op", "sum")).lower()
        op = {"redopType.sum": "sum"}.get(op, op)
        if op not in ("sum", "max", "min"):
            raise ValueError(f"m2n reduces Partial(sum|max|min), not Partial({op})")
        return Partial(op)
    raise TypeError(f"m2n has no placement for {name}")


def redistribute(x, device_mesh, placements: Sequence, comm: Optional[Communicator] = None,
                 *, stream=None, options: str = ""):
    """`x` (a DTensor) moved to (device_mesh, placements). Every rank of the
    communicator calls it; ranks outside the destination mesh get None."""
    import torch
    from torch.distributed.tensor import DTensor

    if not isinstance(x, DTensor):
        raise TypeError(f"redistribute takes a DTensor, got {type(x).__name__}")
    comm = comm or _comm()
    rank = comm.rank
    src_mesh = mesh_of(x.device_mesh)
    src_placements = [placement_of(p) for p in x.placements]
    dst_mesh = mesh_of(device_mesh)
    dst_placements = [placement_of(p) for p in placements]
    shape = tuple(x.shape)
    dtype = str(x.dtype).replace("torch.", "")
    local = x.to_local().contiguous() if rank in src_mesh else None
    out = None
    if rank in dst_mesh:
        part = api.local_shape(rank, mesh=dst_mesh, placements=dst_placements,
                               global_shape=shape)
        out = torch.empty(part, dtype=x.dtype, device=f"cuda:{comm.devices[0]}")
    api.reshard(local, out, comm, stream, src_mesh=src_mesh, src_placements=src_placements,
                dst_mesh=dst_mesh, dst_placements=dst_placements, global_shape=shape,
                dtype=dtype, options=options)
    if out is None:
        return None
    strides, step = [], 1
    for d in reversed(shape):
        strides.insert(0, step)
        step *= d
    return DTensor.from_local(out, device_mesh, list(placements), run_check=False,
                              shape=torch.Size(shape), stride=tuple(strides))
