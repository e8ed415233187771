"""reshard_many: many reshards compiled into one artifact and launched as
one group per rank."""
from __future__ import annotations

import ctypes
from typing import List, Sequence

from . import _native, jit
from ._checks import _check_comm, _check_options, _check_writable_and_disjoint
from ._prepared import (_Call, _Misaligned, _Prepared, _aligned, _execute, _one_call_at_a_time,
                        _streams)
from ._request import Request, ReshardSpec
from ._tensors import _Tensor, _signature
from .api import reshard
from .comm import Communicator


_prepared_many = {}


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
    group: the member list and member-major byte counts (the runtime
    context keeps the group and the pointers it is bound to)."""

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
        self.reshards = tuple(compiled)
        self.src_bytes = (ctypes.c_size_t * (m * n))(*[b for p in members for b in p.src_bytes])
        self.dst_bytes = (ctypes.c_size_t * (m * n))(*[b for p in members for b in p.dst_bytes])
        self.quantizing = any(p.quantizing for p in members)
        self.scale_bytes = (ctypes.c_size_t * (m * n))(*[b for p in members
                                                         for b in p.scale_bytes])
        self.checked = None  # Pointers the last cross-call check accepted.

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
        src, dst, scales = self.pointers()
        streams = None
        if comm.backend != "host":
            for i, call in enumerate(calls):  # A tensor may have moved to another device.
                for what in ("src", "dst", "scales"):
                    for r, t in enumerate(call.get(what) or []):
                        if t is not None and t.device.index != comm.devices[r]:
                            raise ValueError(f"calls[{i}]['{what}'][{r}] is on {t.device}, "
                                             f"rank {r} runs on cuda:{comm.devices[r]}")
            streams = (ctypes.c_void_p * n)(*_streams(comm, stream))
        # The runtime binds again only where the pointers changed.
        buffers = _native.Buffers((ctypes.c_void_p * (m * n))(*src), self.src_bytes,
                                  (ctypes.c_void_p * (m * n))(*dst), self.dst_bytes)
        if self.quantizing:
            buffers.scales = (ctypes.c_void_p * (m * n))(*scales)
            buffers.scale_bytes = self.scale_bytes
        comm.context(self.members[0].artifact).execute(self.reshards, buffers, streams)


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

    def request() -> Request:
        return Request("reshard_many", comm.size,
                       [ReshardSpec(*c.layouts()) for c in checked], group=True)

    artifact = jit.get(key, request, _aligned(options, alignment), comm.target)
    return [c.bind(artifact, comm, alignment, i) for i, c in enumerate(checked)]
