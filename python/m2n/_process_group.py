"""One rank per process (a process-group communicator): the processes
agree on dtypes, cast and alignment in one small all-reduce, bind new
buffers collectively and launch their own rank's kernel."""
from __future__ import annotations

import ctypes
import zlib
from typing import List, Optional, Sequence, Tuple

from . import _native
from ._prepared import _prepare, _prepared
from ._scales import _scaling_ir
from ._tensors import _IR_TYPES, _alignment, _signature


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
    context = comm.context(prepared.artifact)
    group = context.group((0,))
    if changed:
        def one(values, kind=ctypes.c_void_p):
            return (kind * 1)(values)
        buffers = _native.Buffers(one(pointers[0] or None), one(prepared.src_bytes[rank], ctypes.c_size_t),
                                  one(pointers[1] or None), one(prepared.dst_bytes[rank], ctypes.c_size_t))
        if prepared.quantizing:
            buffers.scales = one(pointers[2] or None)
            buffers.scale_bytes = one(prepared.scale_bytes[rank], ctypes.c_size_t)
        _native.check(lib.m2n_group_bind(context.handle, group, ctypes.byref(buffers)))
        prepared.bound = pointers
    s = torch.cuda.current_stream(comm.devices[0]) if stream is None else stream
    _native.check(lib.m2n_group_launch(context.handle, group, (ctypes.c_void_p * 1)(
        s.cuda_stream if hasattr(s, "cuda_stream") else int(s))))
