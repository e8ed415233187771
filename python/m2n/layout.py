"""Meshes and placements: the layouts of the NCCL M2N paper's API.

A Mesh lays communicator ranks out on a grid (row-major); a layout gives one
placement per mesh axis: Shard(d), Replicate() or Partial(op). They turn into
the attributes of m2n's IR (`#m2n.mesh<...>`, `shard<d>`, ...). Shard(d,
boundaries=[...]) (or sizes=[...]) splits d at explicit boundaries instead of
torch.chunk's: a vocabulary padded per rank, experts split by cost.
"""
from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import Optional, Sequence, Tuple, Union


def _index(value, what: str) -> int:
    """`value` as an int: Python and numpy integers only (operator.index), so
    that 2.7, "2" or True are refused instead of rounded or parsed."""
    if isinstance(value, bool):
        raise TypeError(f"{what} must be an integer, got {value!r}")
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"{what} must be an integer, got {value!r} "
                        f"({type(value).__name__})") from None


def _indices(values, what: str) -> Tuple[int, ...]:
    if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
        raise TypeError(f"{what} must be a sequence of integers, got {values!r}")
    return tuple(_index(v, f"{what}[{i}]") for i, v in enumerate(values))


@dataclass(frozen=True)
class Mesh:
    """A grid of ranks: Mesh([2, 2], start_rank=4) holds ranks 4-7, or
    Mesh([2], ranks=[0, 5]) an explicit list (row-major)."""

    dims: Tuple[int, ...]
    start_rank: int = 0
    ranks: Union[Tuple[int, ...], None] = None

    def __init__(self, dims: Sequence[int], start_rank: int = 0,
                 ranks: Union[Sequence[int], None] = None):
        dims = _indices(dims, "mesh dims")
        if not dims or any(d <= 0 for d in dims):
            raise ValueError(f"mesh dims must be positive, got {list(dims)}")
        start_rank = _index(start_rank, "start_rank")
        if start_rank < 0:
            raise ValueError(f"start_rank must not be negative, got {start_rank}")
        size = 1
        for d in dims:
            size *= d
        if ranks is not None:
            ranks = _indices(ranks, "mesh ranks")
            if len(ranks) != size:
                raise ValueError(f"mesh {list(dims)} needs {size} ranks, got {len(ranks)}")
            if len(set(ranks)) != size or min(ranks) < 0:
                raise ValueError(f"mesh ranks must be distinct and not negative: {list(ranks)}")
        object.__setattr__(self, "dims", dims)
        object.__setattr__(self, "start_rank", int(start_rank))
        object.__setattr__(self, "ranks", ranks)

    @property
    def size(self) -> int:
        n = 1
        for d in self.dims:
            n *= d
        return n

    def rank_list(self) -> Tuple[int, ...]:
        return self.ranks if self.ranks is not None else tuple(
            range(self.start_rank, self.start_rank + self.size))

    @property
    def max_rank(self) -> int:
        """The largest rank, without listing a contiguous mesh's ranks."""
        return max(self.ranks) if self.ranks is not None else self.start_rank + self.size - 1

    def index(self, rank: int) -> Optional[int]:
        """Rank `rank`'s row-major position in the mesh, or None outside it."""
        if self.ranks is not None:
            return self.ranks.index(rank) if rank in self.ranks else None
        position = rank - self.start_rank
        return position if 0 <= position < self.size else None

    def __contains__(self, rank: int) -> bool:
        return self.index(rank) is not None


@dataclass(frozen=True)
class Shard:
    """The tensor dimension `dim` is split across the mesh axis: by
    torch.chunk's rule, or at explicit `boundaries` (parts + 1 offsets from 0
    to the extent, not decreasing; empty parts allowed) over every part of
    the mesh axes splitting `dim`, numbered row-major (the first axis
    outermost). `sizes=[...]` gives the parts' sizes instead. The first mesh
    axis splitting `dim` carries them; the others are plain Shard(dim)."""
    dim: int
    boundaries: Optional[Tuple[int, ...]] = None

    def __init__(self, dim: int, boundaries: Optional[Sequence[int]] = None, *,
                 sizes: Optional[Sequence[int]] = None):
        object.__setattr__(self, "dim", _index(dim, "Shard dim"))
        if boundaries is not None and sizes is not None:
            raise ValueError("Shard takes boundaries= or sizes=, not both")
        if sizes is not None:
            sizes = _indices(sizes, "Shard sizes")
            if any(n < 0 for n in sizes):
                raise ValueError(f"Shard sizes must not be negative, got {list(sizes)}")
            boundaries = [0]
            for n in sizes:
                boundaries.append(boundaries[-1] + n)
        if boundaries is not None:
            boundaries = _indices(boundaries, "Shard boundaries")
            if len(boundaries) < 2:
                raise ValueError(f"Shard boundaries need one more entry than parts, got "
                                 f"{list(boundaries)}")
            if boundaries[0] != 0:
                raise ValueError(f"Shard boundaries start at {boundaries[0]}, not 0")
            for i in range(1, len(boundaries)):
                if boundaries[i] < boundaries[i - 1]:
                    raise ValueError(f"Shard boundaries decrease ({boundaries[i - 1]} then "
                                     f"{boundaries[i]})")
        object.__setattr__(self, "boundaries", boundaries)

    def __repr__(self) -> str:
        if self.boundaries is None:
            return f"Shard({self.dim})"
        return f"Shard({self.dim}, boundaries={list(self.boundaries)})"


@dataclass(frozen=True)
class Replicate:
    """Every rank along the mesh axis holds the same data."""


REDUCE_OPS = ("sum", "max", "min")


@dataclass(frozen=True)
class Partial:
    """Every rank along the mesh axis holds a contribution; the tensor is
    their reduction with `op` (sum, max or min)."""
    op: str = "sum"

    def __post_init__(self):
        if not isinstance(self.op, str):
            raise TypeError(f"Partial op must be a string, one of {REDUCE_OPS}, got {self.op!r}")
        if self.op not in REDUCE_OPS:
            raise ValueError(f"Partial op must be one of {REDUCE_OPS}, got {self.op!r}")


Placement = Union[Shard, Replicate, Partial]


def check_placements(mesh: Mesh, placements: Sequence[Placement], tensor_rank: int) -> None:
    """What inferring a global shape from the local tensors needs of the
    placements (one per mesh axis, each of m2n's, dimensions in range);
    TypeError or ValueError naming the problem. The layout's other rules
    (explicit boundaries, extents) are the C library's (check_extents)."""
    if not isinstance(mesh, Mesh):
        raise TypeError(f"expected an m2n.Mesh, got {type(mesh).__name__}")
    placements = tuple(placements)
    if len(placements) != len(mesh.dims):
        raise ValueError(f"mesh {list(mesh.dims)} has {len(mesh.dims)} axes but "
                         f"{len(placements)} placements were given")
    for p in placements:
        if not isinstance(p, (Shard, Replicate, Partial)):
            raise TypeError(f"placements must be m2n.Shard, m2n.Replicate or m2n.Partial, "
                            f"got {type(p).__name__}")
        if isinstance(p, Shard) and not 0 <= p.dim < tensor_rank:
            raise ValueError(f"Shard({p.dim}) of a {tensor_rank}-dimensional tensor")


def c_placements(placements):
    """The placements as m2n_placement values (kind, dim, reduction,
    boundaries), what the C APIs take."""
    return [(0, p.dim, 0, p.boundaries) if isinstance(p, Shard) else
            (1, -1, 0, None) if isinstance(p, Replicate) else
            (2, -1, REDUCE_OPS.index(p.op), None) for p in placements]


def check_extents(mesh: Mesh, placements: Sequence[Placement],
                  global_shape: Sequence[int]) -> None:
    """The placements fit a tensor of `global_shape` (explicit boundaries
    end at their dimension's extent ...): the C library's rule, ValueError
    naming the problem."""
    from . import _native
    _native.local_box(mesh.dims, None, 0, c_placements(placements),
                      tuple(int(n) for n in global_shape), -1)


def local_box(mesh: Mesh, placements: Sequence[Placement], global_shape: Sequence[int],
              rank: int) -> Optional[Tuple[Tuple[int, int], ...]]:
    """Rank `rank`'s part of a tensor of `global_shape` in (mesh, placements)
    as a (begin, end) range per dimension, or None outside the mesh.

    DTensor's split rule, computed by m2n's C library (Layout::localBox,
    through m2n_layout_local_box: one definition for the compiler, the
    runtime and Python): mesh axes apply in order, Shard(d) on an axis of
    size k gives the rank at index i the i-th torch.chunk of dimension d's
    current extent (chunk ceil(n/k), so the first parts are the larger ones
    and trailing parts may be empty); explicit boundaries give part p (row-
    major over the axes splitting d) the range [b[p], b[p + 1]). Replicate
    and Partial leave the extent whole."""
    from . import _native
    shape = tuple(int(n) for n in global_shape)
    check_placements(mesh, placements, len(shape))
    index = mesh.index(rank)
    if index is None:
        check_extents(mesh, placements, shape)
        return None
    box = _native.local_box(mesh.dims, None, 0, c_placements(placements), shape, index)
    offsets, sizes = box
    return tuple((o, o + n) for o, n in zip(offsets, sizes))
