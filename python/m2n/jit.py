"""Just-in-time compilation with an in-memory and an on-disk cache.

The first call for a key (layouts, global shape, dtype, communicator size,
topology, options, compiler version, target) describes the program to the
compiler as a structured request (_request.py), runs the C++ pipeline
through the compiler's C API (m2n_compile_from_request) and keeps the
artifact in memory and on disk; later calls only look the key up.

The disk cache is bounded: after each write, the least recently used
artifacts (by modification time, which a hit refreshes) are deleted until
the folder holds at most the limit (default 1 GiB; $M2N_CACHE_MAX_BYTES or
set_cache_limit).
"""
from __future__ import annotations

import ctypes
import hashlib
import os
import re
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from . import _native

_DEFAULT = object()
_cache_dir = _DEFAULT  # A Path, None (no disk cache) or _DEFAULT.
_cache_limit = _DEFAULT  # Bytes, or _DEFAULT.
DEFAULT_CACHE_LIMIT = 1 << 30
_dump_dir: Optional[Path] = None
_memory: Dict[tuple, "Artifact"] = {}


@dataclass
class Stats:
    """What the JIT did in this process."""
    compiles: int = 0
    disk_hits: int = 0
    memory_hits: int = 0
    evictions: int = 0
    compile_seconds: List[float] = field(default_factory=list)


stats = Stats()


def set_cache_dir(path) -> None:
    """Where artifacts are kept on disk (default: $M2N_CACHE_DIR, else
    ~/.cache/m2n). None disables the disk cache."""
    global _cache_dir
    _cache_dir = Path(path) if path is not None else None
    _memory.clear()


def cache_dir() -> Optional[Path]:
    """The disk cache's folder, or None when it is disabled."""
    if _cache_dir is not _DEFAULT:
        return _cache_dir
    return Path(os.environ.get("M2N_CACHE_DIR") or Path.home() / ".cache" / "m2n")


def set_cache_limit(max_bytes) -> None:
    """The most bytes the disk cache keeps (least recently used artifacts go
    first); None restores the default ($M2N_CACHE_MAX_BYTES, else 1 GiB)."""
    global _cache_limit
    if max_bytes is None:
        _cache_limit = _DEFAULT
        return
    if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes < 0:
        raise ValueError(f"the cache limit must be a number of bytes >= 0, got {max_bytes!r}")
    _cache_limit = max_bytes


def cache_limit() -> int:
    """The disk cache's size limit in bytes."""
    if _cache_limit is not _DEFAULT:
        return _cache_limit
    text = os.environ.get("M2N_CACHE_MAX_BYTES")
    if not text:
        return DEFAULT_CACHE_LIMIT
    try:
        limit = int(text)
    except ValueError:
        limit = -1
    if limit < 0:
        raise ValueError(f"M2N_CACHE_MAX_BYTES must be a number of bytes >= 0, got {text!r}")
    return limit


def _evict(directory: Path, keep: Path) -> None:
    """Deletes the least recently used artifacts until `directory` holds at
    most cache_limit() bytes; `keep`, the artifact just written, stays (an
    artifact larger than the limit is kept until the next write)."""
    limit = cache_limit()
    entries = []
    for path in directory.glob("*.m2n"):
        try:
            status = path.stat()
        except OSError:
            continue  # Deleted by another process meanwhile.
        entries.append((status.st_mtime_ns, status.st_size, path))
    total = sum(size for _, size, _ in entries)
    for _, size, path in sorted(entries, key=lambda entry: entry[0]):
        if total <= limit:
            break
        if path == keep:
            continue
        try:
            path.unlink()
            stats.evictions += 1
        except OSError:
            pass  # Another process evicted it first.
        total -= size


def set_dump_dir(path) -> None:
    """Write the IR after every pass of each compilation into this folder
    (one file per key); None stops it."""
    global _dump_dir
    _dump_dir = Path(path) if path is not None else None


def clear_memory_cache() -> None:
    _memory.clear()


class Artifact:
    """A loaded artifact: its runtime handle and per-rank buffer shapes."""

    def __init__(self, data: bytes, key_hash: str):
        self.data = data
        self.key_hash = key_hash
        lib = _native.runtime()
        self._buffer = ctypes.create_string_buffer(data, len(data))
        handle = ctypes.c_void_p()
        _native.check(lib.m2n_artifact_load(self._buffer, len(data), ctypes.byref(handle)))
        self.handle = handle
        self._shapes: Dict[Tuple[int, int, bool], Optional[Tuple[int, ...]]] = {}

    def group(self, name: str) -> Optional[List[int]]:
        """The members (reshard indices, in order) of the compiled group
        `name` (an m2n.group of the IR), or None when there is none."""
        lib = _native.runtime()
        for g in range(lib.m2n_artifact_group_count(self.handle)):
            if lib.m2n_artifact_group_name(self.handle, g).decode() != name:
                continue
            count = ctypes.c_int()
            _native.check(lib.m2n_artifact_group_members(self.handle, g, 0, None,
                                                         ctypes.byref(count)))
            members = (ctypes.c_int * count.value)()
            _native.check(lib.m2n_artifact_group_members(self.handle, g, count.value, members,
                                                         ctypes.byref(count)))
            return list(members)
        return None

    def ranks(self, reshard: int = 0) -> int:
        n = ctypes.c_int()
        _native.check(_native.runtime().m2n_artifact_reshard_ranks(self.handle, reshard,
                                                                   ctypes.byref(n)))
        return n.value

    def local_shape(self, rank: int, source: bool, reshard: int = 0) -> Optional[Tuple[int, ...]]:
        """Rank `rank`'s local part, or None outside the mesh."""
        key = (reshard, rank, source)
        if key not in self._shapes:
            present, dims = ctypes.c_int(), ctypes.c_int()
            shape = (ctypes.c_int64 * 8)()
            _native.check(_native.runtime().m2n_artifact_local_shape(
                self.handle, reshard, rank, int(source), ctypes.byref(present),
                ctypes.byref(dims), shape))
            self._shapes[key] = tuple(shape[:dims.value]) if present.value else None
        return self._shapes[key]

    def scale_shape(self, rank: int, reshard: int = 0) -> Optional[Tuple[int, ...]]:
        """Rank `rank`'s scales of a quantizing reshard (the blocks its
        destination part touches), or None (no scales there)."""
        key = (reshard, rank, "scales")
        if key not in self._shapes:
            present, dims, element = ctypes.c_int(), ctypes.c_int(), ctypes.c_int()
            shape = (ctypes.c_int64 * 8)()
            _native.check(_native.runtime().m2n_artifact_scale_shape(
                self.handle, reshard, rank, ctypes.byref(present), ctypes.byref(dims), shape,
                ctypes.byref(element)))
            self._shapes[key] = tuple(shape[:dims.value]) if present.value else None
        return self._shapes[key]

    def __del__(self):
        handle = getattr(self, "handle", None)
        if handle:
            _native.runtime().m2n_artifact_destroy(handle)
            self.handle = None


def _write_atomically(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise


def _topology_contents(options: str) -> str:
    """The text of the topology file an option names: an edited file must
    not be served by an artifact routed for the old one."""
    for word in options.split():
        if word.startswith("topology="):
            path = Path(word[len("topology="):])
            try:
                return path.read_text()
            except OSError as error:
                raise _native.CompileError(f"cannot read the topology file {path}: {error}")
    return ""


def _target_of(options: str, target: str) -> Tuple[str, str]:
    """`options` without its chip= word and the chip to compile for: the
    word's (checked here: TMA needs sm_90 or newer), else `target`."""
    words, chip = [], target
    for word in options.split():
        if word.startswith("chip="):
            chip = word[len("chip="):]
            match = re.fullmatch(r"sm_(\d+)[af]?", chip)
            if not match or int(match.group(1)) < 90:
                raise ValueError(
                    f"options: chip={chip}: m2n's transfer kernel needs TMA "
                    f"(cp.async.bulk), sm_90 (Hopper) or newer, e.g. chip=sm_90a")
        else:
            words.append(word)
    return " ".join(words), chip


def get(key: tuple, make_request, options: str, target: str = "sm_90a") -> Artifact:
    """The artifact for `key`: from memory, from disk, or compiled from the
    structured request (_request.Request) that `make_request()` returns."""
    artifact = _memory.get(key)
    if artifact is not None:
        stats.memory_hits += 1
        return artifact
    options, target = _target_of(options, target)
    request = make_request()
    digest = hashlib.sha256("\0".join(
        [request.text, options, _topology_contents(options), target,
         _native.compiler_identity()]).encode()).hexdigest()
    directory = cache_dir()
    path = directory / f"{digest}.m2n" if directory is not None else None
    data = None
    if path is not None and path.exists():
        data = path.read_bytes()
        try:
            artifact = Artifact(data, digest)
            stats.disk_hits += 1
            try:
                os.utime(path)  # Recently used: evicted last.
            except OSError:
                pass
        except _native.M2NError:
            data = None  # Corrupted or from another version: compile again.
    if data is None:
        start = time.perf_counter()
        dump = str(_dump_dir / f"{digest}.mlir") if _dump_dir is not None else ""
        if _dump_dir is not None:
            _dump_dir.mkdir(parents=True, exist_ok=True)
        # The kernel's binary is the same for most reshards: kept beside the
        # artifacts (m2n-serialize-kernels), a cold compile skips LLVM's
        # NVPTX backend (~70 ms). It does not change the artifact.
        # (A directory whose name has white space would split the options.)
        kernels = (f"kernel-cache-dir={directory / 'kernels'}"
                   if directory is not None and "kernel-cache-dir=" not in options
                   and not re.search(r"\s", str(directory)) else "")
        full_options = " ".join(o for o in [options, f"chip={target}", kernels] if o)
        data = _native.compile_request(request.c, full_options, dump)
        stats.compile_seconds.append(time.perf_counter() - start)
        stats.compiles += 1
        artifact = Artifact(data, digest)
        if path is not None:
            _write_atomically(path, data)
            _evict(directory, path)
    _memory[key] = artifact
    return artifact
