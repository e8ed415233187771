"""A call's arguments checked before anything is compiled or run, and its
tensors against the artifact compiled for them: each problem an exception
that names it."""
from __future__ import annotations

from typing import List, Optional, Tuple

from . import jit
from ._tensors import _Tensor, _byte_range
from .comm import Communicator
from .layout import Shard


def _check_options(options) -> None:
    """`options` is a string of --m2n-pipeline options."""
    if not isinstance(options, str):
        raise TypeError(f"options is a string of --m2n-pipeline options (e.g. "
                        f"'max-ctas=8'), got {type(options).__name__} {options!r}")


def _check_comm(comm, what: str) -> None:
    if not isinstance(comm, Communicator):
        raise TypeError(f"{what}: comm must be an m2n.Communicator, got {type(comm).__name__}")


def _per_rank(tensors, comm: Communicator, what: str) -> List[Optional[_Tensor]]:
    if tensors is None or not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{what}: a communicator of {comm.size} local ranks takes a list of "
                        f"{comm.size} tensors (None for ranks outside the mesh)")
    if len(tensors) != comm.size:
        raise ValueError(f"{what}: expected {comm.size} entries (one per rank), got {len(tensors)}")
    return [None if t is None else _Tensor(t, f"{what}[{r}]") for r, t in enumerate(tensors)]


def _placements(placements, what: str) -> tuple:
    if placements is None or isinstance(placements, (str, bytes)) or \
            not hasattr(placements, "__iter__"):
        raise TypeError(f"{what} must be a sequence of m2n placements "
                        f"(Shard, Replicate, Partial), got {placements!r}")
    return tuple(placements)


def _global_shape(shape) -> Tuple[int, ...]:
    if isinstance(shape, (str, bytes)) or not hasattr(shape, "__iter__") or \
            not all(isinstance(d, int) and not isinstance(d, bool) for d in shape):
        raise TypeError(f"global_shape must be a sequence of ints, got {shape!r}")
    shape = tuple(shape)
    if not shape:
        raise ValueError("global_shape is empty; m2n moves tensors of rank >= 1")
    if any(d <= 0 for d in shape):
        raise ValueError(f"global_shape {list(shape)} has an extent < 1")
    elements = 1
    for d in shape:
        elements *= d
    if elements >= 2**63:
        raise ValueError(f"global_shape {list(shape)} has 2^63 or more elements")
    return shape


def _check_writable_and_disjoint(sources, destinations) -> None:
    """Destinations must be writable, and no destination may share bytes with
    a source or another destination on the same device (a reshard reads
    sources while it writes destinations). A sweep over the sorted byte
    ranges: a whole model's tensors at once stay cheap."""
    for t in destinations:
        if t is None:
            continue
        flags = getattr(t.value, "flags", None)
        if flags is not None and not flags.writeable:
            raise ValueError(f"{t.what} is read-only; a destination must be writable")
    ranges = sorted(((-1 if t.device is None else t.device, *_byte_range(t), written, i, t)
                     for written, tensors in ((True, destinations), (False, sources))
                     for i, t in enumerate(tensors) if t is not None and t.nbytes > 0),
                    key=lambda r: r[:5])
    reach = None  # The range reaching furthest so far on this device.
    for device, start, end, written, _, t in ranges:
        if reach is not None and reach[0] == device and start < reach[2] and \
                (written or reach[3]):
            a, b = (reach[5], t) if reach[3] else (t, reach[5])
            raise ValueError(f"{a.what} overlaps {b.what}; destinations must not share "
                             f"memory with sources or with each other")
        if reach is None or reach[0] != device or end > reach[2]:
            reach = (device, start, end, written, 0, t)


def _infer_global_shape(layouts, tensors_by_layout) -> Tuple[int, ...]:
    """The global shape if every Shard splits evenly or at explicit
    boundaries (checked afterwards), from the first tensor of a rank inside
    its mesh."""
    for (mesh, placements), tensors in zip(layouts, tensors_by_layout):
        present = [t for r, t in enumerate(tensors) if t is not None and r in mesh]
        if present:
            shape = list(present[0].shape)
            explicit = {p.dim: p.boundaries[-1] for p in placements
                        if isinstance(p, Shard) and p.boundaries is not None}
            for axis, p in enumerate(placements):
                if isinstance(p, Shard) and p.dim not in explicit:
                    shape[p.dim] *= mesh.dims[axis]
            for d, extent in explicit.items():
                shape[d] = extent
            return tuple(shape)
    raise ValueError("this process passed no tensor: pass global_shape= and dtype=")


def _check(tensors: List[Optional[_Tensor]], artifact: jit.Artifact, comm: Communicator,
           source: bool, dtype: str, what: str, reshard: int = 0) -> None:
    for rank in comm.local_ranks:
        t = tensors[rank]
        want = artifact.local_shape(rank, source, reshard)
        if want is None:
            if t is not None:
                raise ValueError(f"{what}[{rank}]: rank {rank} is outside the "
                                 f"{'source' if source else 'destination'} mesh; pass None")
            continue
        if t is None:
            raise ValueError(f"{what}[{rank}]: rank {rank} is in the "
                             f"{'source' if source else 'destination'} mesh and needs a "
                             f"tensor of shape {list(want)}")
        if t.shape != want:
            raise ValueError(f"{t.what} has shape {list(t.shape)}, rank {rank}'s part is "
                             f"{list(want)} (for uneven shards pass global_shape=)")
        if t.dtype != dtype:
            raise TypeError(f"{t.what} has dtype {t.dtype}, the other "
                            f"{'sources' if source else 'destinations'} have {dtype}")
        if not t.contiguous:
            raise ValueError(f"{t.what} is not contiguous (m2n moves row-major buffers)")
        if comm.backend == "host" and t.kind != "numpy":
            raise TypeError(f"{t.what}: the host backend takes numpy arrays")
        if comm.backend != "host":
            if t.kind != "torch" or t.device is None:
                raise TypeError(f"{t.what} must be a CUDA tensor")
            if t.device != comm.device_of(rank):
                raise ValueError(f"{t.what} is on cuda:{t.device}, rank {rank} runs on "
                                 f"cuda:{comm.device_of(rank)}")


def _check_scales(tensors: List[Optional[_Tensor]], artifact: jit.Artifact,
                  comm: Communicator, scaling: str, reshard: int = 0) -> None:
    """A quantizing reshard's scales: each rank's of the shape its blocks
    give (m2n_artifact_scale_shape), float32, or e8m0 bytes for mx."""
    dtypes = ("uint8", "float8_e8m0fnu") if scaling == "mx" else ("float32",)
    for rank in comm.local_ranks:
        t = tensors[rank]
        want = artifact.scale_shape(rank, reshard)
        if want is None:
            if t is not None:
                raise ValueError(f"scales[{rank}]: rank {rank} is outside the destination "
                                 f"mesh; pass None")
            continue
        if t is None:
            raise ValueError(f"scales[{rank}]: rank {rank} holds scales of shape "
                             f"{list(want)}; pass a tensor")
        if t.shape != want:
            raise ValueError(f"{t.what} has shape {list(t.shape)}, rank {rank}'s scales are "
                             f"{list(want)} (m2n.scale_shape)")
        if t.dtype not in dtypes:
            raise TypeError(f"{t.what} has dtype {t.dtype}; scaling={scaling!r} writes "
                            f"{' or '.join(dtypes)} scales")
        if not t.contiguous:
            raise ValueError(f"{t.what} is not contiguous")
        if comm.backend == "host" and t.kind != "numpy":
            raise TypeError(f"{t.what}: the host backend takes numpy arrays")
        if comm.backend != "host" and (t.kind != "torch" or t.device != comm.device_of(rank)):
            raise ValueError(f"{t.what} must be a CUDA tensor on cuda:{comm.device_of(rank)}")
