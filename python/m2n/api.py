"""m2n.reshard and the collectives, the paper's Listing 1 API.

A communicator that runs several ranks in this process (Communicator.host,
Communicator.from_devices) takes one tensor per rank: `src` and `dst` are
sequences of comm.size entries, None for a rank outside that mesh.
"""
from __future__ import annotations

import ctypes
import functools
import math
import re
import struct
import weakref
import zlib
from typing import Any, List, Optional, Sequence, Tuple

from . import _native, jit
from .comm import Communicator
from .layout import (Mesh, Partial, Placement, Replicate, Shard, check_extents, layout_ir,
                     local_box)

# The dtypes a reshard converts between on the way (an in-flight cast).
_CASTABLE = {"float32", "float16", "bfloat16", "float8_e4m3fn", "float8_e5m2"}

# Quantizing with scales from the data (docs/fp8-scaling.md): from these
# into these, the scales float32 (tensor, block) or e8m0 bytes (mx: uint8, or
# torch.float8_e8m0fnu).
_QUANTIZED = {"float8_e4m3fn", "float8_e5m2"}
_QUANTIZED_FROM = {"float32", "float16", "bfloat16"}


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


def _global_scale_shape(scaling: str, shape: Sequence[int]) -> Tuple[int, ...]:
    if scaling == "tensor":
        return tuple(1 for _ in shape)
    block = _block_shape(scaling, shape)
    return tuple(-(-d // b) for d, b in zip(shape, block))


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


def _byte_range(t: "_Tensor"):
    return _pointer(t.value), _pointer(t.value) + t.nbytes


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


class _Prepared:
    """Everything a warm call needs: the artifact, the byte counts and the
    pointer arrays (refilled per call) of one (layouts, tensors) signature;
    a quantizing reshard's scales too."""

    def __init__(self, artifact: jit.Artifact, sources, destinations, comm: Communicator,
                 alignment: int, reshard: int = 0, scales=None):
        n = comm.size
        self.artifact = artifact
        self.reshard = reshard  # Its index in the artifact.
        self.comm = comm
        self.src_bytes = (ctypes.c_size_t * n)(*[t.nbytes if t else 0 for t in sources])
        self.dst_bytes = (ctypes.c_size_t * n)(*[t.nbytes if t else 0 for t in destinations])
        self.src_pointers = (ctypes.c_void_p * n)()
        self.dst_pointers = (ctypes.c_void_p * n)()
        self.quantizing = scales is not None
        self.scale_bytes = (ctypes.c_size_t * n)(*[t.nbytes if t else 0
                                                   for t in (scales or [None] * n)])
        self.scale_pointers = (ctypes.c_void_p * n)()
        self.last_scales = [None] * n
        # Weak references to the arrays whose pointers the arrays hold: a
        # numpy array's buffer and strides never change, so the same object
        # needs no new look; torch tensors are asked every call (set_ can
        # move them).
        self.numpy = any(t is not None and t.kind == "numpy" for t in sources)
        self.bound = None  # Process-group mode: the pointers last bound.
        self.alignment = alignment  # What the artifact assumes of the buffers.
        self.last_src = [None] * n
        self.last_dst = [None] * n
        self.fresh = False  # Whether refresh saw a new numpy array.
        # The pointers _check_writable_and_disjoint last accepted.
        # (ctypes reads a null pointer back as None.)
        self.checked = (tuple(t and _pointer(t.value) or None for t in sources),
                        tuple(t and _pointer(t.value) or None for t in destinations),
                        tuple(t and _pointer(t.value) or None for t in (scales or [None] * n)))

    def recheck(self, src, dst, scales=None) -> None:
        """After refresh: new buffers (torch tensors at other addresses, or
        new numpy arrays, which may be read-only views) are checked for
        writability and overlap as the first call's were."""
        pointers = (tuple(self.src_pointers), tuple(self.dst_pointers),
                    tuple(self.scale_pointers))
        written = [(dst, "dst")] + ([(scales, "scales")] if scales is not None else [])
        if pointers == self.checked and not self.fresh:
            # The same numpy arrays may have been made read-only since.
            for tensors, what in written:
                for r, t in enumerate(tensors):
                    flags = getattr(t, "flags", None) if self.numpy else None
                    if flags is not None and not flags.writeable:
                        raise ValueError(f"{what}[{r}] is read-only; a destination must be "
                                         f"writable")
            return
        _check_writable_and_disjoint(
            [None if t is None else _Tensor(t, f"src[{r}]") for r, t in enumerate(src)],
            [None if t is None else _Tensor(t, f"{what}[{r}]")
             for tensors, what in written for r, t in enumerate(tensors)])
        self.checked = pointers

    def refresh(self, tensors, last, pointers, what: str, aligned: bool = True) -> None:
        """Refills `pointers` from `tensors`; self.fresh says whether a numpy
        array is a new object (it may be a read-only view of old memory).
        `aligned`: the reshard was compiled for their alignment (scales are
        only element-aligned: the runtime checks that)."""
        numpy = self.numpy
        for r, t in enumerate(tensors):
            if t is None or (numpy and last[r] is not None and last[r]() is t):
                continue
            self.fresh = self.fresh or numpy
            if not _contiguous(t):
                raise ValueError(f"{what}[{r}] is not contiguous (m2n moves row-major buffers)")
            pointer = _pointer(t)
            # Less aligned than compiled for: compile again, unless it is not
            # even aligned to its elements (the runtime refuses that).
            if aligned and pointer % self.alignment and pointer % _itemsize(t) == 0:
                raise _Misaligned()
            pointers[r] = pointer
            last[r] = weakref.ref(t) if numpy else None


_prepared = {}


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


class _Misaligned(Exception):
    """A warm call's buffer lacks the alignment its artifact assumes."""


def _itemsize(t) -> int:
    itemsize = getattr(t, "itemsize", None)  # numpy
    return int(itemsize) if itemsize is not None else t.element_size()


def _contiguous(t) -> bool:
    flags = getattr(t, "flags", None)
    return flags.c_contiguous if flags is not None else t.is_contiguous()


def _pointer(t) -> int:
    interface = getattr(t, "__array_interface__", None)
    return interface["data"][0] if interface is not None else t.data_ptr()


def _one_call_at_a_time(comm_index: int):
    """Runs the call under its communicator's lock (argument `comm_index`,
    or comm=): threads sharing a communicator share its prepared calls."""
    def wrap(function):
        @functools.wraps(function)
        def serialized(*args, **kwargs):
            comm = kwargs["comm"] if "comm" in kwargs else (
                args[comm_index] if len(args) > comm_index else None)
            lock = getattr(comm, "_lock", None) if isinstance(comm, Communicator) else None
            if lock is None:  # Not a communicator: the call says why.
                return function(*args, **kwargs)
            with lock:
                return function(*args, **kwargs)
        return serialized
    return wrap


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


def _execute(prepared: _Prepared, src, dst, comm: Communicator, stream,
             scales=None) -> None:
    """Runs a prepared reshard on the host backend or this process's GPUs."""
    n = comm.size
    lib = _native.runtime()
    if comm.backend == "host":
        if prepared.quantizing:
            _native.check(lib.m2n_host_execute_scaled(
                prepared.artifact.handle, 1, (ctypes.c_int * 1)(prepared.reshard), n,
                prepared.src_pointers, prepared.src_bytes, prepared.dst_pointers,
                prepared.dst_bytes, prepared.scale_pointers, prepared.scale_bytes))
            return
        _native.check(lib.m2n_host_execute(prepared.artifact.handle, prepared.reshard, n,
                                           prepared.src_pointers, prepared.src_bytes,
                                           prepared.dst_pointers, prepared.dst_bytes))
        return
    for r in range(n):  # A tensor may have moved to another device.
        for t, what in ((src[r], "src"), (dst[r], "dst"),
                        (scales[r] if scales is not None else None, "scales")):
            if t is not None and t.device.index != comm.devices[r]:
                raise ValueError(f"{what}[{r}] is on {t.device}, rank {r} runs on "
                                 f"cuda:{comm.devices[r]}")
    streams = _streams(comm, stream)
    context = comm.cuda_context(prepared.artifact)
    if prepared.quantizing:
        # The runtime binds (tables of amaxes, items) when the buffers differ
        # from those the reshard is bound to; every launch computes its
        # scales from its data.
        _native.check(lib.m2n_cuda_execute_scaled(
            context, prepared.reshard, prepared.src_pointers, prepared.src_bytes,
            prepared.dst_pointers, prepared.dst_bytes, prepared.scale_pointers,
            prepared.scale_bytes, (ctypes.c_void_p * n)(*streams)))
        return
    _native.check(lib.m2n_cuda_execute(context, prepared.reshard,
                                       prepared.src_pointers, prepared.src_bytes,
                                       prepared.dst_pointers, prepared.dst_bytes,
                                       (ctypes.c_void_p * n)(*streams)))


def compiled(comm: Communicator, src_mesh: Mesh, src_placements, dst_mesh: Mesh,
             dst_placements, global_shape, dtype: str, options: str = "",
             dst_dtype: Optional[str] = None, scale: Optional[float] = None,
             scaling: Optional[str] = None) -> jit.Artifact:
    """The artifact of a reshard (JIT-compiled on first use, then cached);
    dst_dtype and scale: an in-flight cast; scaling: a quantizing one."""
    src_placements = _placements(src_placements, "src_placements")
    dst_placements = _placements(dst_placements, "dst_placements")
    shape = _global_shape(global_shape)
    key = (comm.size, comm.backend, src_mesh, src_placements, dst_mesh, dst_placements,
           shape, dtype, options, dst_dtype, scale, scaling)

    def build_ir() -> str:
        return _reshard_ir("reshard", comm.size, src_mesh, src_placements, dst_mesh,
                           dst_placements, shape, dtype, dst_dtype, scale, scaling)

    return jit.get(key, build_ir, options, comm.target)


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


class _Call:
    """One reshard of a call, checked: its tensors, layouts, shape, dtype and
    the alignment its buffers have."""

    def __init__(self, src, dst, comm, src_mesh, src_placements, dst_mesh, dst_placements,
                 global_shape, dtype=None, alignment=None, scale=None, scaling=None,
                 scales=None, agreed=None):
        if not isinstance(comm, Communicator):
            raise TypeError(f"comm must be an m2n.Communicator, got {type(comm).__name__}")
        sources = _per_rank(src, comm, "src")
        destinations = _per_rank(dst, comm, "dst")
        src_placements = _placements(src_placements, "src_placements")
        dst_placements = _placements(dst_placements, "dst_placements")
        if global_shape is not None:
            global_shape = _global_shape(global_shape)
        for t in sources + destinations:
            if t is not None and not t.shape:
                raise ValueError(f"{t.what} is 0-dimensional; m2n moves tensors of rank >= 1 "
                                 f"(reshape a scalar to [1])")
        if scaling is None and scales is not None:
            raise ValueError("scales= is the output of a quantizing reshard: pass scaling= "
                             "too ('tensor', 'block(R, C)' or 'mx')")
        scale_tensors = None
        if scaling is not None:
            scaling = _scaling_ir(scaling)
            if scale is not None:
                raise ValueError("scale= is a cast's fixed factor; scaling= computes the "
                                 "scales from the data: pass one of them")
            if scales is None:
                raise ValueError(f"scaling={scaling!r} writes a scale tensor per rank: pass "
                                 f"scales= (shapes from m2n.scale_shape)")
            scale_tensors = _per_rank(scales, comm, "scales")
        _check_writable_and_disjoint(sources, destinations + (scale_tensors or []))
        for mesh, name in ((src_mesh, "src_mesh"), (dst_mesh, "dst_mesh")):
            if not isinstance(mesh, Mesh):
                raise TypeError(f"{name} must be an m2n.Mesh, got {type(mesh).__name__}")
            if mesh.max_rank >= comm.size:
                raise ValueError(f"{name} uses rank {mesh.max_rank}, the communicator "
                                 f"has {comm.size} ranks")
        first = next((t for t in sources + destinations if t is not None), None)
        if first is None and (global_shape is None or dtype is None):
            raise ValueError("this process passed no tensor: pass global_shape= and dtype=")
        if first is not None and comm.backend != "cuda-processes" and \
                not any(t is not None and r in src_mesh for r, t in enumerate(sources)):
            raise ValueError("no rank of the source mesh passed a tensor")
        dtype = first.dtype if first is not None else str(dtype).replace("torch.", "")
        if dtype not in _IR_TYPES:
            raise TypeError(f"dtype {dtype} is not one m2n moves (supported: "
                            f"{', '.join(_IR_TYPES)})")
        # The sources' dtype and the destinations' (an in-flight cast when
        # they differ).
        first_src = next((t for t in sources if t is not None), None)
        first_dst = next((t for t in destinations if t is not None), None)
        if first_src is not None:
            dtype = first_src.dtype
        dst_dtype = first_dst.dtype if first_dst is not None else dtype
        if agreed is not None:  # One process per rank: what all of them passed.
            dtype, dst_dtype = agreed
        if dst_dtype != dtype and not (dtype in _CASTABLE and dst_dtype in _CASTABLE):
            raise TypeError(f"{first_dst.what} has dtype {dst_dtype}, the sources have "
                            f"{dtype}; a reshard casts only between "
                            f"{', '.join(sorted(_CASTABLE))}")
        if scale is not None:
            if isinstance(scale, bool) or not isinstance(scale, (int, float)):
                raise TypeError(f"scale must be a float, got {scale!r}")
            scale = float(scale)
            if dst_dtype == dtype:
                raise ValueError(f"scale= needs a cast: sources and destinations are both "
                                 f"{dtype}")
            try:
                finite = math.isfinite(struct.unpack("<f", struct.pack("<f", scale))[0])
            except OverflowError:
                finite = False
            if not finite:
                raise ValueError(f"scale {scale} is not a finite float32")
        if scaling is not None and (dst_dtype not in _QUANTIZED or
                                    dtype not in _QUANTIZED_FROM):
            raise TypeError(f"scaling= quantizes float32, float16 or bfloat16 sources into "
                            f"float8_e4m3fn or float8_e5m2 destinations; these are {dtype} "
                            f"and {dst_dtype}")
        tensor_rank = len(global_shape) if global_shape is not None else len(first.shape)
        layout_ir(src_mesh, src_placements, tensor_rank)  # Checks the placements.
        layout_ir(dst_mesh, dst_placements, tensor_rank)
        self.shape = tuple(int(d) for d in global_shape) if global_shape is not None else \
            _infer_global_shape([(src_mesh, src_placements), (dst_mesh, dst_placements)],
                                [sources, destinations])
        check_extents(src_mesh, src_placements, self.shape)
        check_extents(dst_mesh, dst_placements, self.shape)
        if alignment is None:
            alignment = _alignment(_pointer(t.value) for t in sources + destinations
                                   if t is not None)
        self.alignment = alignment
        self.sources, self.destinations = sources, destinations
        self.src_mesh, self.src_placements = src_mesh, src_placements
        self.dst_mesh, self.dst_placements = dst_mesh, dst_placements
        self.dtype, self.dst_dtype = dtype, dst_dtype
        self.scale = scale if dst_dtype != dtype else None
        self.scaling, self.scales = scaling, scale_tensors
        if scaling == "mx" and self.shape[-1] % 32:
            raise ValueError(f"scaling='mx' needs a last dimension that is a multiple of 32 "
                             f"(one scale per 32 elements); the tensor is "
                             f"{list(self.shape)}")
        if scaling is not None and scaling.startswith("block") and len(self.shape) < 2:
            raise ValueError(f"scaling={scaling!r} cuts the last two dimensions into blocks; "
                             f"the tensor is {list(self.shape)}")

    def layouts(self) -> tuple:
        return (self.src_mesh, self.src_placements, self.dst_mesh, self.dst_placements,
                self.shape, self.dtype, self.dst_dtype, self.scale, self.scaling)

    def bind(self, artifact: jit.Artifact, comm: Communicator, alignment: int,
             reshard: int = 0) -> _Prepared:
        """Checks the tensors against reshard `reshard` of `artifact`."""
        _check(self.sources, artifact, comm, True, self.dtype, "src", reshard)
        _check(self.destinations, artifact, comm, False, self.dst_dtype, "dst", reshard)
        if self.scaling is not None:
            _check_scales(self.scales, artifact, comm, self.scaling, reshard)
        return _Prepared(artifact, self.sources, self.destinations, comm, alignment, reshard,
                         self.scales)


def _aligned(options: str, alignment: int) -> str:
    return f"{options} buffer-align={alignment}".strip() if alignment < 16 else options


def _prepare(src, dst, comm, src_mesh, src_placements, dst_mesh, dst_placements,
             global_shape, options, dtype=None, alignment=None, scale=None,
             scaling=None, scales=None, agreed=None) -> _Prepared:
    """The first call of a signature: checks everything, compiles (or finds
    the cached artifact) for the alignment of the buffers (`alignment`, or
    that of the given tensors) and validates every tensor against it;
    `agreed`: the processes' (source, destination) dtypes."""
    call = _Call(src, dst, comm, src_mesh, src_placements, dst_mesh, dst_placements,
                 global_shape, dtype, alignment, scale, scaling, scales, agreed)
    artifact = compiled(comm, call.src_mesh, call.src_placements, call.dst_mesh,
                        call.dst_placements, call.shape, call.dtype,
                        _aligned(options, call.alignment), call.dst_dtype, call.scale,
                        call.scaling)
    return call.bind(artifact, comm, call.alignment)


_prepared_many = {}


def _check_options(options) -> None:
    """`options` is a string of --m2n-pipeline options."""
    if not isinstance(options, str):
        raise TypeError(f"options is a string of --m2n-pipeline options (e.g. "
                        f"'max-ctas=8'), got {type(options).__name__} {options!r}")


@_one_call_at_a_time(1)
def reshard_many(calls: Sequence[dict], comm: Communicator, stream=None, *,
                 options: str = "", group: bool = True) -> None:
    """Runs many reshards as one: one compilation (one artifact, one
    transfer kernel) and one launch per rank for all of them (a group: the
    work items of every tensor dealt over the CTAs, one completion), e.g.
    every weight of a model in a refit. Each call is a dict of reshard()'s
    arguments: src, dst, src_mesh, src_placements, dst_mesh, dst_placements
    and optionally global_shape. The calls run at the same time, so no
    destination may share memory with any tensor of another call
    (ValueError). group=False launches the calls one after the other
    instead (same artifact; a call may then read what an earlier one
    wrote). A process-group communicator runs them one reshard() at a
    time."""
    _check_options(options)
    calls = list(calls)
    for i, call in enumerate(calls):
        if not isinstance(call, dict):
            raise TypeError(f"calls[{i}] must be a dict of reshard() arguments, "
                            f"got {type(call).__name__}")
        unknown = set(call) - {"src", "dst", "src_mesh", "src_placements", "dst_mesh",
                               "dst_placements", "global_shape", "scale", "scaling",
                               "scales"}
        if unknown:
            raise TypeError(f"calls[{i}]: unknown argument(s) {', '.join(sorted(unknown))}")
        missing = {"src", "dst", "src_mesh", "src_placements", "dst_mesh",
                   "dst_placements"} - set(call)
        if missing:
            raise TypeError(f"calls[{i}]: missing {', '.join(sorted(missing))}")
    _check_comm(comm, "reshard_many")
    if comm.backend == "cuda-processes":
        for call in calls:
            reshard(comm=comm, stream=stream, options=options, **call)
        return
    if not calls:
        return
    try:
        key = (id(comm), options) + tuple(
            (c["src_mesh"], tuple(c["src_placements"]), c["dst_mesh"],
             tuple(c["dst_placements"]),
             None if c.get("global_shape") is None else tuple(c["global_shape"]),
             _signature(c["src"]), _signature(c["dst"]), c.get("scale"), c.get("scaling"),
             None if c.get("scales") is None else _signature(c["scales"])) for c in calls)
        prepared = _prepared_many.get(key)
    except (TypeError, AttributeError):  # Not tensors: the slow path says why.
        key, prepared = None, None
    if prepared is None or prepared.comm is not comm:
        prepared = _Group(_prepare_many(calls, comm, options), comm)
        if key is not None:
            _prepared_many[key] = prepared
    for p, call in zip(prepared.members, calls):
        p.fresh = False
        try:
            p.refresh(call["src"], p.last_src, p.src_pointers, "src")
            p.refresh(call["dst"], p.last_dst, p.dst_pointers, "dst")
            if p.quantizing:
                p.refresh(call["scales"], p.last_scales, p.scale_pointers, "scales",
                          aligned=False)
        except _Misaligned:  # Less aligned than the first call's: prepare again.
            if key is not None:  # The next call prepares it again.
                _prepared_many.pop(key, None)
            return reshard_many(calls, comm, stream, options=options, group=group)
    for p, call in zip(prepared.members, calls):  # Every check before any move.
        p.recheck(call["src"], call["dst"], call.get("scales") if p.quantizing else None)
    if not group:
        for p, call in zip(prepared.members, calls):
            _execute(p, call["src"], call["dst"], comm, stream, call.get("scales"))
        return
    prepared.check_disjoint(calls)
    prepared.run(calls, stream)


class _Group:
    """The calls of reshard_many bound to one artifact, launched as one
    group: member-major pointer arrays, the group's id in the runtime
    context, and the pointers it was last bound to."""

    def __init__(self, members: List[_Prepared], comm: Communicator):
        self.members = members
        self.comm = comm
        m, n = len(members), comm.size
        # The compiled group's members, in its order: launching exactly
        # that list runs the program the compiler merged.
        compiled = members[0].artifact.group("reshard_many")
        if compiled != [p.reshard for p in members]:
            raise RuntimeError(f"internal error: the artifact's group reshard_many has "
                                   f"members {compiled}, expected {[p.reshard for p in members]}")
        self.reshards = (ctypes.c_int * m)(*compiled)
        self.src_bytes = (ctypes.c_size_t * (m * n))(*[b for p in members for b in p.src_bytes])
        self.dst_bytes = (ctypes.c_size_t * (m * n))(*[b for p in members for b in p.dst_bytes])
        self.quantizing = any(p.quantizing for p in members)
        self.scale_bytes = (ctypes.c_size_t * (m * n))(*[b for p in members
                                                         for b in p.scale_bytes])
        self.checked = None  # Pointers the last cross-call check accepted.
        self.context = None
        self.group = ctypes.c_int(-1)
        self.bound = None

    def pointers(self):
        return (tuple(x for p in self.members for x in p.src_pointers),
                tuple(x for p in self.members for x in p.dst_pointers),
                tuple(x for p in self.members for x in p.scale_pointers))

    def check_disjoint(self, calls) -> None:
        """No destination of one call may share bytes with any tensor of
        another (each call checked its own already)."""
        pointers = self.pointers()
        if pointers == self.checked and not any(p.fresh for p in self.members):
            return
        sources, destinations = [], []
        for i, call in enumerate(calls):
            sources += [None if t is None else _Tensor(t, f"calls[{i}]['src'][{r}]")
                        for r, t in enumerate(call["src"])]
            for what in ("dst", "scales"):
                destinations += [None if t is None else _Tensor(t, f"calls[{i}]['{what}'][{r}]")
                                 for r, t in enumerate(call.get(what) or [])]
        _check_writable_and_disjoint(sources, destinations)
        self.checked = pointers

    def run(self, calls, stream) -> None:
        comm, n, m = self.comm, self.comm.size, len(self.members)
        lib = _native.runtime()
        artifact = self.members[0].artifact
        src, dst, scales = self.pointers()
        src_array = (ctypes.c_void_p * (m * n))(*src)
        dst_array = (ctypes.c_void_p * (m * n))(*dst)
        scale_array = (ctypes.c_void_p * (m * n))(*scales) if self.quantizing else None
        if comm.backend == "host":
            _native.check(lib.m2n_host_execute_scaled(
                artifact.handle, m, self.reshards, n, src_array, self.src_bytes, dst_array,
                self.dst_bytes, scale_array, self.scale_bytes if self.quantizing else None))
            return
        for i, call in enumerate(calls):  # A tensor may have moved to another device.
            for what in ("src", "dst", "scales"):
                for r, t in enumerate(call.get(what) or []):
                    if t is not None and t.device.index != comm.devices[r]:
                        raise ValueError(f"calls[{i}]['{what}'][{r}] is on {t.device}, rank {r} "
                                         f"runs on cuda:{comm.devices[r]}")
        streams = _streams(comm, stream)
        context = comm.cuda_context(artifact)
        if self.context is None or self.context.value != context.value:
            _native.check(lib.m2n_cuda_group_create(context, m, self.reshards,
                                                    ctypes.byref(self.group)))
            self.context, self.bound = context, None
        if self.bound != (src, dst, scales):
            if self.quantizing:
                _native.check(lib.m2n_cuda_group_bind_scaled(
                    context, self.group, src_array, self.src_bytes, dst_array, self.dst_bytes,
                    scale_array, self.scale_bytes))
            else:
                _native.check(lib.m2n_cuda_group_bind(context, self.group, src_array,
                                                      self.src_bytes, dst_array,
                                                      self.dst_bytes))
            self.bound = (src, dst, scales)
        _native.check(lib.m2n_cuda_group_launch(context, self.group,
                                                (ctypes.c_void_p * n)(*streams)))


def _streams(comm: Communicator, stream) -> list:
    """The CUDA stream handle of each rank: the given ones, or each device's
    current stream."""
    n = comm.size
    if stream is None:
        import torch
        return [torch.cuda.current_stream(d).cuda_stream for d in comm.devices]
    if len(stream) != n:
        raise ValueError(f"stream: expected {n} streams, one per rank")
    return [s.cuda_stream if hasattr(s, "cuda_stream") else int(s) for s in stream]


def _prepare_many(calls, comm: Communicator, options: str) -> List[_Prepared]:
    """One artifact for every call (compiled for the least aligned buffers
    of any of them), each call bound to its reshard in it."""
    checked = [_Call(c["src"], c["dst"], comm, c["src_mesh"], c["src_placements"],
                     c["dst_mesh"], c["dst_placements"], c.get("global_shape"),
                     scale=c.get("scale"), scaling=c.get("scaling"), scales=c.get("scales"))
               for c in calls]
    alignment = min(c.alignment for c in checked)
    key = ("many", comm.size, comm.backend, options, alignment) + tuple(
        c.layouts() for c in checked)

    def build_ir() -> str:
        return _group_ir("reshard_many", comm.size,
                         [(c.layouts(), {}) for c in checked])

    artifact = jit.get(key, build_ir, _aligned(options, alignment), comm.target)
    return [c.bind(artifact, comm, alignment, i) for i, c in enumerate(checked)]


def _dtype_codes(src_dtype: Optional[str], dst_dtype: Optional[str],
                 codes: Sequence[str]) -> List[int]:
    """What a process adds to the all-reduce (MAX) that agrees on the dtypes:
    each dtype's index in `codes` and its negation (for the minimum), -1 and
    -len(codes) where the process has no such tensor, len(codes) for a dtype
    m2n does not move (raised after the all-reduce, on every process)."""
    entries = []
    for dtype in (src_dtype, dst_dtype):
        if dtype is None:
            entries += [-1, -len(codes)]
        elif dtype not in codes:
            entries += [len(codes), -len(codes)]
        else:
            entries += [codes.index(dtype), -codes.index(dtype)]
    return entries


def _agreed_dtypes(reduced: Sequence[int], codes: Sequence[str]) -> Tuple[str, str]:
    """The sources' and destinations' dtypes from the all-reduced (MAX)
    _dtype_codes of every process."""
    src_max, src_min, dst_max, dst_min = (int(reduced[0]), -int(reduced[1]),
                                          int(reduced[2]), -int(reduced[3]))
    if max(src_max, dst_max) == len(codes):
        raise TypeError(f"a process passed a tensor of a dtype m2n does not move "
                        f"(supported: {', '.join(codes)})")
    if src_max < 0:
        raise ValueError("no process passed a source tensor (or dtype=)")
    if src_max != src_min:
        raise TypeError(f"the processes' sources have different dtypes ({codes[src_min]} "
                        f"and {codes[src_max]})")
    if dst_max >= 0 and dst_max != dst_min:
        raise TypeError(f"the processes' destinations have different dtypes "
                        f"({codes[dst_min]} and {codes[dst_max]})")
    return codes[src_max], codes[dst_max] if dst_max >= 0 else codes[src_max]


def _reshard_in_group(src, dst, comm, stream, src_mesh, src_placements, dst_mesh,
                      dst_placements, global_shape, options, dtype, stable_buffers,
                      scale=None, scaling=None, scales=None) -> None:
    """One rank per process: bind (collectively) when buffers change, then
    launch this rank's kernel. The processes agree on the dtypes (each sees
    its own tensors only: a cast's destination dtype is unknown where a rank
    only sends) and on the cast's scale or scaling in the all-reduce that
    finds new buffers."""
    import torch
    import torch.distributed as dist
    rank, n = comm.rank, comm.size
    for t, what in ((src, "src"), (dst, "dst"), (scales, "scales")):
        if isinstance(t, (list, tuple)):
            raise TypeError(f"{what}: a process-group communicator takes this rank's tensor "
                            f"(or None), not a list")
    sources = [None] * n
    destinations = [None] * n
    sources[rank], destinations[rank] = src, dst
    scale_tensors = None
    if scaling is not None or scales is not None:
        scale_tensors = [None] * n
        scale_tensors[rank] = scales
    key = ("group", id(comm), src_mesh, tuple(src_placements), dst_mesh, tuple(dst_placements),
           None if global_shape is None else tuple(global_shape), options, str(dtype),
           _signature([src]), _signature([dst]), scale, scaling, _signature([scales]))
    prepared = _prepared.get(key)
    if prepared is not None and prepared.comm is not comm:
        prepared = None
    pointers = tuple(0 if t is None else t.data_ptr() for t in (src, dst, scales))
    # A problem only this process sees is raised by every process, after the
    # collective they all enter (raising before it would leave the others
    # waiting in it forever).
    local_error = None
    for t, what in ((src, "src"), (dst, "dst"), (scales, "scales")):
        if t is not None and not t.is_contiguous():
            local_error = ValueError(f"{what} is not contiguous (m2n moves row-major buffers)")
        elif t is not None and t.device.index != comm.devices[0]:
            local_error = ValueError(f"{what} is on {t.device}, this rank runs on "
                                     f"cuda:{comm.devices[0]}")
    # Every process compiles the same program: for the least aligned
    # buffers of any rank, agreed in the all-reduce that finds new buffers.
    changed = prepared is None or prepared.bound != pointers
    # What this rank can run: its buffers' alignment (the scales' are their
    # elements' only), and no more than its cached program assumes (another
    # rank's cache may hold a different one).
    alignment = _alignment(pointers[:2])
    if prepared is not None:
        alignment = min(alignment, prepared.alignment)
    device = "cpu" if dist.get_backend(comm.group) == "gloo" else f"cuda:{comm.devices[0]}"

    def everyone_ok(error) -> None:
        """Raises on every process when one of them failed."""
        ok = torch.tensor([0 if error else 1], dtype=torch.int64, device=device)
        dist.all_reduce(ok, op=dist.ReduceOp.MIN, group=comm.group)
        if error is not None:
            raise error
        if not ok.item():
            raise RuntimeError("another process of the group failed in this reshard (its "
                               "exception says why)")

    agreed = None
    if not (stable_buffers and prepared is not None and prepared.bound is not None):
        codes = sorted(_IR_TYPES)
        src_dtype = (str(src.dtype) if src is not None else
                     None if dtype is None or dst is not None else str(dtype))
        src_dtype = None if src_dtype is None else src_dtype.replace("torch.", "")
        dst_dtype = None if dst is None else str(dst.dtype).replace("torch.", "")
        # The same cast on every process: a digest of scale= and scaling=,
        # spelled as the IR spells them.
        try:
            spelled = (None if scale is None else float(scale),
                       None if scaling is None else _scaling_ir(scaling))
        except (TypeError, ValueError) as error:
            local_error, spelled = local_error or error, (scale, scaling)
        cast = zlib.crc32(repr(spelled).encode())
        flag = torch.tensor([int(changed), 16 // alignment, cast, -cast,
                             int(local_error is not None)] +
                            _dtype_codes(src_dtype, dst_dtype, codes), dtype=torch.int64,
                            device=device)
        dist.all_reduce(flag, op=dist.ReduceOp.MAX, group=comm.group)
        flag = flag.tolist()
        if flag[4]:
            raise local_error or RuntimeError("another process of the group failed in this "
                                              "reshard (its exception says why)")
        changed, alignment = bool(flag[0]), 16 // int(flag[1])
        if flag[2] != -flag[3]:
            raise ValueError("the processes passed different scale= or scaling= (every rank "
                             "of the group passes the same)")
        agreed = _agreed_dtypes(flag[5:], codes)
    elif changed:
        raise ValueError("stable_buffers=True, but this rank's buffers changed since the "
                         "first call")
    elif local_error is not None:
        raise local_error
    # New buffers on any process: every process prepares again (its own
    # cache may hold a program for other dtypes or alignment than the
    # others agreed on) and checks its tensors, then all raise or none.
    if changed:
        error = None
        try:
            prepared = _prepare(sources, destinations, comm, src_mesh, src_placements,
                                dst_mesh, dst_placements, global_shape, options, dtype,
                                alignment, scale=scale, scaling=scaling, scales=scale_tensors,
                                agreed=agreed)
            _prepared[key] = prepared
        except (TypeError, ValueError, RuntimeError) as failure:
            error = failure
        everyone_ok(error)
    lib = _native.runtime()
    context = comm.cuda_context(prepared.artifact)
    if changed:
        one = lambda values: (ctypes.c_void_p * 1)(values)  # noqa: E731
        size = lambda values: (ctypes.c_size_t * 1)(values)  # noqa: E731
        buffers = (context, 0, one(pointers[0] or None), size(prepared.src_bytes[rank]),
                   one(pointers[1] or None), size(prepared.dst_bytes[rank]))
        if prepared.quantizing:
            _native.check(lib.m2n_cuda_bind_scaled(
                *buffers, one(pointers[2] or None), size(prepared.scale_bytes[rank])))
        else:
            _native.check(lib.m2n_cuda_bind(*buffers))
        prepared.bound = pointers
    s = torch.cuda.current_stream(comm.devices[0]) if stream is None else stream
    _native.check(lib.m2n_cuda_launch(context, 0, (ctypes.c_void_p * 1)(
        s.cuda_stream if hasattr(s, "cuda_stream") else int(s))))


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
