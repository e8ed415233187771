"""Communicators: which ranks this process runs, and on what.

* Communicator.host(size): every rank in this process on host memory (numpy
  arrays), executed by the runtime's host backend (no GPU needed);
* Communicator.from_devices([0, 1, ...]): every rank in this process, rank r
  on CUDA device devices[r] (torch CUDA tensors; several ranks may share a
  GPU: virtual ranks);
* Communicator.from_process_group(group): one rank per process, the
  processes of a torch.distributed group; buffer handles are exchanged with
  the group's all-gather (the runtime's contexts of several processes).

Each communicator keeps one runtime context (m2n_context) per artifact it
ran, with its groups (a reshard is a group of one).
"""
from __future__ import annotations

import ctypes
import threading
import weakref
from typing import Dict, Optional, Sequence, Tuple

from . import _native

#: The most ranks a communicator (and a mesh) may have: m2n.comm<N>'s bound.
MAX_RANKS = 1 << 31

#: Every live communicator, for release_host_contexts.
_communicators: "weakref.WeakSet[Communicator]" = weakref.WeakSet()


def release_host_contexts() -> None:
    """Destroys the runtime contexts of host communicators, which keep the
    artifacts they ran alive (m2n.clear_memory_cache); the next call makes
    a new one. CUDA contexts stay: with several processes, making one is
    collective."""
    for comm in list(_communicators):
        if comm.backend == "host":
            with comm._lock:
                comm.close()


class _Context:
    """A runtime context of one artifact on a communicator (the artifact
    kept alive with it), and its groups by member list."""

    def __init__(self, handle: ctypes.c_void_p, artifact):
        self.handle = handle
        self.artifact = artifact
        self._groups: Dict[Tuple[int, ...], int] = {}

    def group(self, reshards: Sequence[int]) -> int:
        """The group of these reshard indices, created on first use."""
        key = tuple(reshards)
        group = self._groups.get(key)
        if group is None:
            created = ctypes.c_int(-1)
            _native.check(_native.runtime().m2n_group_create(
                self.handle, len(key), (ctypes.c_int * len(key))(*key), ctypes.byref(created)))
            group = self._groups[key] = created.value
        return group

    def execute(self, reshards: Sequence[int], buffers, streams=None) -> None:
        """Runs the group of `reshards` on `buffers` (an m2n_buffers), bound
        again where its pointers changed; `streams`: one per local rank
        (CUDA), or None."""
        _native.check(_native.runtime().m2n_group_execute(
            self.handle, self.group(reshards), ctypes.byref(buffers), streams))


class Communicator:
    def __init__(self, size: int, backend: str, devices: Sequence[int] = (),
                 timeout_ms: float = 10000.0):
        if not isinstance(size, int) or isinstance(size, bool):
            raise TypeError(f"a communicator's size is an int, got "
                            f"{type(size).__name__} {size!r}")
        if size <= 0:
            raise ValueError(f"a communicator needs at least one rank, got {size}")
        if size > MAX_RANKS:
            raise ValueError(f"a communicator has at most 2^31 ranks (m2n's rank "
                             f"numbers are 31-bit), got {size}")
        self.size = size
        self.backend = backend
        self.devices = tuple(devices)
        self.timeout_ms = timeout_ms
        self.local_ranks = range(size)
        self.group = None
        # By artifact key: the runtime context of the artifact.
        self._contexts: Dict[str, _Context] = {}
        self._allgather = None
        # Threads may share a communicator: its calls (binding buffers into
        # a prepared call's pointer arrays, then the launch) run one at a
        # time, as a torch ProcessGroup's do (a runtime context is used by
        # one thread at a time).
        self._lock = threading.RLock()
        _communicators.add(self)

    @classmethod
    def host(cls, size: int) -> "Communicator":
        """`size` ranks on host memory in this process."""
        return cls(size, "host")

    @classmethod
    def from_devices(cls, devices: Sequence[int], timeout_ms: float = 10000.0) -> "Communicator":
        """Rank r on CUDA device devices[r], all driven by this process."""
        if isinstance(devices, (str, bytes)) or not all(
                isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in devices):
            raise TypeError(f"from_devices takes a list of CUDA device numbers, got {devices!r}")
        devices = list(devices)
        if not devices:
            raise ValueError("from_devices needs at least one device")
        count = ctypes.c_int(0)
        _native.check(_native.runtime().m2n_cuda_device_count(ctypes.byref(count)))
        if max(devices) >= count.value:
            raise ValueError(f"from_devices: device {max(devices)} does not exist "
                             f"({count.value} CUDA devices)")
        return cls(len(devices), "cuda", devices, timeout_ms)

    @classmethod
    def from_process_group(cls, group=None, device: Optional[int] = None,
                           timeout_ms: float = 10000.0) -> "Communicator":
        """This process is rank dist.get_rank(group) of the group, on CUDA
        device `device` (default: the current one). Every call that binds
        buffers is collective over the group."""
        import torch
        import torch.distributed as dist
        if not dist.is_initialized():
            raise RuntimeError("torch.distributed is not initialized")
        size = dist.get_world_size(group)
        comm = cls(size, "cuda-processes",
                   [torch.cuda.current_device() if device is None else int(device)],
                   timeout_ms)
        comm.local_ranks = (dist.get_rank(group),)
        comm.group = group

        def allgather(send, recv, nbytes, _user):
            try:
                data = torch.frombuffer(bytearray(ctypes.string_at(send, nbytes)),
                                        dtype=torch.uint8)
                if dist.get_backend(group) == "nccl":
                    data = data.to(f"cuda:{comm.devices[0]}")
                gathered = torch.empty(size * nbytes, dtype=torch.uint8, device=data.device)
                dist.all_gather_into_tensor(gathered, data, group=group)
                ctypes.memmove(recv, bytes(gathered.cpu().numpy()), size * nbytes)
                return 0
            except Exception:  # The runtime reports the failure.
                return 1

        comm._allgather = _native.ALLGATHER(allgather)  # Kept alive here.
        return comm

    def device_of(self, rank: int) -> int:
        """The CUDA device of `rank`, one of this process's ranks."""
        return self.devices[self.local_ranks.index(rank)]

    @property
    def rank(self) -> int:
        """This process's rank when it runs one (process-group mode)."""
        return self.local_ranks[0]

    @property
    def target(self) -> str:
        return "sm_90a"

    def context(self, artifact) -> _Context:
        """The runtime context of `artifact` on this communicator's backend
        (created on first use; collective in process-group mode)."""
        context = self._contexts.get(artifact.key_hash)
        if context is None:
            options = _native.ContextOptions()
            options.version = _native.RUNTIME_API_VERSION
            options.backend = (_native.BACKEND_HOST if self.backend == "host"
                               else _native.BACKEND_CUDA)
            options.ranks = self.size
            options.timeout_ms = self.timeout_ms
            if self.backend == "cuda-processes":
                options.processes = self.size
                options.local_count = 1
                options.local_ranks = (ctypes.c_int * 1)(self.rank)
                options.devices = (ctypes.c_int * 1)(self.devices[0])
                options.allgather = self._allgather
            elif self.backend == "cuda":
                options.devices = (ctypes.c_int * self.size)(*self.devices)
            handle = ctypes.c_void_p()
            _native.check(_native.runtime().m2n_context_create(
                artifact.handle, ctypes.byref(options), ctypes.byref(handle)))
            # The context uses the artifact's handle: keep that artifact alive
            # as long as the context (the JIT's caches may drop it).
            context = self._contexts[artifact.key_hash] = _Context(handle, artifact)
        return context

    def synchronize(self) -> None:
        """Waits for the CUDA work this communicator enqueued; a peer that
        never signalled raises M2NError (M2N_TIMEOUT)."""
        lib = _native.runtime()
        for context in self._contexts.values():
            _native.check(lib.m2n_context_synchronize(context.handle))

    def close(self) -> None:
        lib = _native.runtime() if self._contexts else None
        for context in self._contexts.values():
            lib.m2n_context_destroy(context.handle)
        self._contexts.clear()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def __repr__(self) -> str:
        where = f"devices={list(self.devices)}" if self.devices else "host"
        return f"m2n.Communicator(size={self.size}, {where})"
