"""The collectives: reshards between two placements over a 1-D mesh (all
ranks by default)."""
from __future__ import annotations

from typing import Optional, Sequence

from ._checks import _check_comm
from .api import reshard
from .comm import Communicator
from .layout import Mesh, Partial, Placement, Replicate, Shard


_collective_layouts = {}


def _layouts(comm: Communicator, mesh: Optional[Mesh], src: Placement, dst: Placement):
    """(mesh, [src], [dst]) of a collective, built once per shape of call."""
    key = (getattr(comm, "size", None), mesh, src, dst)
    layouts = _collective_layouts.get(key)
    if layouts is None:
        _check_comm(comm, "collective")
        layouts = (mesh if mesh is not None else Mesh([comm.size]), (src,), (dst,))
        _collective_layouts[key] = layouts
    return layouts


def _collective(src, dst, comm, stream, mesh, source: Placement, destination: Placement,
                kwargs) -> None:
    m, s, d = _layouts(comm, mesh, source, destination)
    reshard(src, dst, comm, stream, src_mesh=m, src_placements=s, dst_mesh=m,
            dst_placements=d, **kwargs)


def all_gather(src, dst, comm: Communicator, stream=None, *, dim: int = 0,
               boundaries: Optional[Sequence[int]] = None,
               mesh: Optional[Mesh] = None, **kwargs) -> None:
    """Shard(dim) -> Replicate over a 1-D mesh (all ranks by default); the
    parts split at `boundaries` where given (uneven parts, empty ones
    too)."""
    _collective(src, dst, comm, stream, mesh, Shard(dim, boundaries), Replicate(), kwargs)


def reduce_scatter(src, dst, comm: Communicator, stream=None, *, dim: int = 0,
                   boundaries: Optional[Sequence[int]] = None, op: str = "sum",
                   mesh: Optional[Mesh] = None, **kwargs) -> None:
    """Partial(op) -> Shard(dim), split at `boundaries` where given."""
    _collective(src, dst, comm, stream, mesh, Partial(op), Shard(dim, boundaries), kwargs)


def all_reduce(src, dst, comm: Communicator, stream=None, *, op: str = "sum",
               mesh: Optional[Mesh] = None, **kwargs) -> None:
    """Partial(op) -> Replicate."""
    _collective(src, dst, comm, stream, mesh, Partial(op), Replicate(), kwargs)


def all_to_all(src, dst, comm: Communicator, stream=None, *, split_dim: int,
               concat_dim: int, mesh: Optional[Mesh] = None, **kwargs) -> None:
    """Shard(concat_dim) -> Shard(split_dim): each rank splits its part along
    split_dim and gathers the others' along concat_dim."""
    if split_dim == concat_dim and not isinstance(split_dim, bool):
        # Shard(d) -> Shard(d) is no layout change (m2n.all_to_all refuses it
        # too); torch's equal-dim all_to_all permutes chunks, which no layout
        # pair expresses: say so instead of returning the input.
        raise ValueError(
            f"all_to_all: split_dim and concat_dim are both {split_dim}: "
            f"Shard({split_dim}) -> Shard({split_dim}) moves nothing; an "
            f"all_to_all splits one dimension and concatenates another")
    _collective(src, dst, comm, stream, mesh, Shard(concat_dim), Shard(split_dim), kwargs)
