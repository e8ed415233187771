"""A call checked, compiled (or found in the cache) and bound: what a warm
call reuses; and running it on the host backend or this process's GPUs."""
from __future__ import annotations

import ctypes
import functools
import math
import struct
import weakref
from typing import Optional

from . import _native, jit
from ._checks import (_check, _check_scales, _check_writable_and_disjoint, _global_shape,
                      _infer_global_shape, _per_rank, _placements)
from ._request import Request, ReshardSpec
from ._scales import _scaling_ir
from ._tensors import (_CASTABLE, _IR_TYPES, _QUANTIZED, _QUANTIZED_FROM, _Tensor, _alignment,
                       _contiguous, _itemsize, _pointer)
from .comm import Communicator
from .layout import Mesh, check_extents, check_placements


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
        # The arrays above as the runtime's m2n_buffers (refilled in place).
        self.buffers = _native.Buffers(self.src_pointers, self.src_bytes, self.dst_pointers,
                                       self.dst_bytes)
        if self.quantizing:
            self.buffers.scales, self.buffers.scale_bytes = self.scale_pointers, self.scale_bytes
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


class _Misaligned(Exception):
    """A warm call's buffer lacks the alignment its artifact assumes."""


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
        check_placements(src_mesh, src_placements, tensor_rank)
        check_placements(dst_mesh, dst_placements, tensor_rank)
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

    def request() -> Request:
        return Request("reshard", comm.size, [ReshardSpec(
            src_mesh, src_placements, dst_mesh, dst_placements, shape, dtype, dst_dtype,
            scale, scaling)], group=False)

    return jit.get(key, request, options, comm.target)


def _execute(prepared: _Prepared, src, dst, comm: Communicator, stream,
             scales=None) -> None:
    """Runs a prepared reshard on the host backend or this process's GPUs:
    its group of one, bound again where the buffers changed (a quantizing
    one computes its scales from its data at every launch)."""
    n = comm.size
    streams = None
    if comm.backend != "host":
        for r in range(n):  # A tensor may have moved to another device.
            for t, what in ((src[r], "src"), (dst[r], "dst"),
                            (scales[r] if scales is not None else None, "scales")):
                if t is not None and t.device.index != comm.devices[r]:
                    raise ValueError(f"{what}[{r}] is on {t.device}, rank {r} runs on "
                                     f"cuda:{comm.devices[r]}")
        streams = (ctypes.c_void_p * n)(*_streams(comm, stream))
    comm.context(prepared.artifact).execute((prepared.reshard,), prepared.buffers, streams)


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
