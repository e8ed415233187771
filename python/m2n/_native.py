"""ctypes bindings to the compiler (libm2n_compiler.so) and the runtime
(libm2n_runtime.so): C APIs, so the same package works on any Python 3."""
from __future__ import annotations

import ctypes
import hashlib
import os
from pathlib import Path

c_int_p = ctypes.POINTER(ctypes.c_int)
c_size_p = ctypes.POINTER(ctypes.c_size_t)
c_void_pp = ctypes.POINTER(ctypes.c_void_p)

ALLGATHER = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p,
                             ctypes.c_size_t, ctypes.c_void_p)


class M2NError(RuntimeError):
    """A failure reported by the m2n runtime: its status and message."""

    def __init__(self, status: str, message: str):
        super().__init__(f"{status}: {message}")
        self.status = status
        self.message = message


class CompileError(RuntimeError):
    """The compiler rejected a program; the message holds its diagnostics."""


def _library_dirs():
    here = Path(__file__).resolve().parent
    yield here / "lib"                       # an installed package
    yield here.parent.parent / "build" / "lib"  # a source checkout


def _load(name: str) -> ctypes.CDLL:
    chosen = os.environ.get("M2N_LIB_DIR")
    if chosen:
        # A directory the user named is the only one: falling back to another
        # build would run code they did not ask for.
        path = Path(chosen) / name
        if not path.exists():
            raise ImportError(f"M2N_LIB_DIR={chosen}: no {name} there (unset "
                              f"M2N_LIB_DIR to use the package's own)")
        library = ctypes.CDLL(str(path))
        library.m2n_path = path
        return library
    tried = []
    for directory in _library_dirs():
        path = directory / name
        tried.append(str(path))
        if path.exists():
            library = ctypes.CDLL(str(path))
            library.m2n_path = path
            return library
    raise ImportError(f"cannot find {name} (looked in {', '.join(tried)}); "
                      f"build m2n or set M2N_LIB_DIR")


_compiler = None
_runtime = None


def compiler() -> ctypes.CDLL:
    global _compiler
    if _compiler is None:
        lib = _load("libm2n_compiler.so")
        lib.m2n_compiler_version.restype = ctypes.c_char_p
        lib.m2n_compile.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p,
                                    c_void_pp, c_size_p, ctypes.POINTER(ctypes.c_char_p)]
        lib.m2n_compile.restype = ctypes.c_int
        lib.m2n_compiler_free.argtypes = [ctypes.c_void_p]
        request = ctypes.POINTER(CompileRequest)
        lib.m2n_compile_from_request.argtypes = [request, ctypes.c_char_p, ctypes.c_char_p,
                                                 c_void_pp, c_size_p,
                                                 ctypes.POINTER(ctypes.c_char_p)]
        lib.m2n_compile_from_request.restype = ctypes.c_int
        lib.m2n_request_ir.argtypes = [request, ctypes.POINTER(ctypes.c_void_p),
                                       ctypes.POINTER(ctypes.c_char_p)]
        lib.m2n_request_ir.restype = ctypes.c_int
        _compiler = lib
    return _compiler


def runtime() -> ctypes.CDLL:
    global _runtime
    if _runtime is None:
        lib = _load("libm2n_runtime.so")
        lib.m2n_status_name.restype = ctypes.c_char_p
        lib.m2n_status_name.argtypes = [ctypes.c_int]
        lib.m2n_last_error.restype = ctypes.c_char_p
        lib.m2n_artifact_load.argtypes = [ctypes.c_void_p, ctypes.c_size_t, c_void_pp]
        lib.m2n_artifact_destroy.argtypes = [ctypes.c_void_p]
        lib.m2n_artifact_reshard_count.argtypes = [ctypes.c_void_p]
        lib.m2n_artifact_group_count.argtypes = [ctypes.c_void_p]
        lib.m2n_artifact_group_name.restype = ctypes.c_char_p
        lib.m2n_artifact_group_name.argtypes = [ctypes.c_void_p, ctypes.c_int]
        lib.m2n_artifact_group_members.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int,
                                                   c_int_p, c_int_p]
        lib.m2n_artifact_reshard_ranks.argtypes = [ctypes.c_void_p, ctypes.c_int, c_int_p]
        lib.m2n_artifact_buffer_bytes.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int,
                                                  c_size_p, c_size_p]
        lib.m2n_artifact_local_shape.argtypes = [
            ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.c_int, c_int_p, c_int_p,
            ctypes.POINTER(ctypes.c_int64)]
        i64_p = ctypes.POINTER(ctypes.c_int64)
        lib.m2n_layout_local_box.argtypes = [
            i64_p, ctypes.c_int, i64_p, ctypes.c_int64, ctypes.POINTER(Placement), i64_p,
            ctypes.c_int, ctypes.c_int64, c_int_p, i64_p, i64_p]
        lib.m2n_artifact_reshard_scaling.restype = ctypes.c_char_p
        lib.m2n_artifact_reshard_scaling.argtypes = [ctypes.c_void_p, ctypes.c_int]
        lib.m2n_artifact_scale_shape.argtypes = [
            ctypes.c_void_p, ctypes.c_int, ctypes.c_int, c_int_p, c_int_p,
            ctypes.POINTER(ctypes.c_int64), c_int_p]
        lib.m2n_cuda_device_count.argtypes = [c_int_p]
        lib.m2n_context_create.argtypes = [ctypes.c_void_p, ctypes.POINTER(ContextOptions),
                                           c_void_pp]
        lib.m2n_context_destroy.argtypes = [ctypes.c_void_p]
        lib.m2n_context_destroy.restype = None
        lib.m2n_group_create.argtypes = [ctypes.c_void_p, ctypes.c_int, c_int_p, c_int_p]
        lib.m2n_group_bind.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.POINTER(Buffers)]
        lib.m2n_group_launch.argtypes = [ctypes.c_void_p, ctypes.c_int, c_void_pp]
        lib.m2n_group_execute.argtypes = [ctypes.c_void_p, ctypes.c_int,
                                          ctypes.POINTER(Buffers), c_void_pp]
        lib.m2n_context_synchronize.argtypes = [ctypes.c_void_p]
        _runtime = lib
    return _runtime


#: M2N_RUNTIME_API_VERSION of the runtime.h these bindings follow.
RUNTIME_API_VERSION = 7
#: m2n_backend.
BACKEND_HOST, BACKEND_CUDA = 1, 2


class ContextOptions(ctypes.Structure):
    """m2n_context_options (runtime.h)."""
    _fields_ = [("version", ctypes.c_int), ("backend", ctypes.c_int), ("ranks", ctypes.c_int),
                ("processes", ctypes.c_int), ("local_count", ctypes.c_int),
                ("local_ranks", c_int_p), ("devices", c_int_p), ("allgather", ALLGATHER),
                ("allgather_user", ctypes.c_void_p), ("timeout_ms", ctypes.c_double)]


class Buffers(ctypes.Structure):
    """m2n_buffers (runtime.h): member-major pointer and size arrays."""
    _fields_ = [("src", c_void_pp), ("src_bytes", c_size_p), ("dst", c_void_pp),
                ("dst_bytes", c_size_p), ("scales", c_void_pp), ("scale_bytes", c_size_p)]


def buffers(src, src_bytes, dst, dst_bytes, scales=None, scale_bytes=None) -> Buffers:
    """m2n_buffers of pointer sequences (None for a missing buffer) and
    their byte counts; the struct keeps its arrays alive."""
    def pointers(values):
        return (ctypes.c_void_p * len(values))(*values)

    def sizes(values):
        return (ctypes.c_size_t * len(values))(*values)

    result = Buffers(pointers(src), sizes(src_bytes), pointers(dst), sizes(dst_bytes))
    if scales is not None:
        result.scales, result.scale_bytes = pointers(scales), sizes(scale_bytes)
    return result


class Placement(ctypes.Structure):
    """m2n_placement (runtime.h)."""
    _fields_ = [("kind", ctypes.c_int), ("dim", ctypes.c_int64), ("reduction", ctypes.c_int),
                ("boundaries", ctypes.POINTER(ctypes.c_int64)), ("boundary_count", ctypes.c_int)]


class LayoutDesc(ctypes.Structure):
    """m2n_layout_desc (m2n-c/Compiler.h)."""
    _fields_ = [("mesh_shape", ctypes.POINTER(ctypes.c_int64)), ("mesh_axes", ctypes.c_int),
                ("ranks", ctypes.POINTER(ctypes.c_int64)), ("base", ctypes.c_int64),
                ("placements", ctypes.POINTER(Placement))]


class ReshardDesc(ctypes.Structure):
    """m2n_reshard_desc (m2n-c/Compiler.h)."""
    _fields_ = [("shape", ctypes.POINTER(ctypes.c_int64)), ("tensor_rank", ctypes.c_int),
                ("src_type", ctypes.c_char_p), ("dst_type", ctypes.c_char_p),
                ("src", LayoutDesc), ("dst", LayoutDesc), ("has_scale", ctypes.c_int),
                ("scale", ctypes.c_float), ("scaling", ctypes.c_int),
                ("block_rows", ctypes.c_int64), ("block_cols", ctypes.c_int64)]


COMPILE_REQUEST_VERSION = 1


class CompileRequest(ctypes.Structure):
    """m2n_compile_request (m2n-c/Compiler.h)."""
    _fields_ = [("version", ctypes.c_int), ("name", ctypes.c_char_p),
                ("comm_size", ctypes.c_int), ("reshards", ctypes.POINTER(ReshardDesc)),
                ("reshard_count", ctypes.c_int), ("group", ctypes.c_int)]


def placement_array(placements, keep: list):
    """m2n_placement values of (kind, dim, reduction, boundaries) tuples;
    the arrays they point into are appended to `keep` (alive while the
    caller holds it)."""
    i64 = ctypes.c_int64
    entries = (Placement * len(placements))()
    for entry, (kind, dim, reduction, boundaries) in zip(entries, placements):
        entry.kind, entry.dim, entry.reduction = kind, dim, reduction
        if boundaries is not None:
            array = (i64 * len(boundaries))(*boundaries)
            keep.append(array)
            entry.boundaries = ctypes.cast(array, ctypes.POINTER(i64))
            entry.boundary_count = len(boundaries)
    return entries


def local_box(mesh_shape, ranks, base, placements, shape, rank):
    """The C library's split rule (m2n_layout_local_box): rank `rank`'s
    (offsets, sizes) or None outside the mesh. `placements` are (kind, dim,
    reduction, boundaries) tuples; a layout that does not fit raises
    ValueError naming the problem."""
    i64 = ctypes.c_int64
    axes = len(mesh_shape)
    keep = []  # The boundary arrays live until the call returns.
    c_placements = placement_array(placements, keep)
    present = ctypes.c_int()
    offsets, sizes = (i64 * max(len(shape), 1))(), (i64 * max(len(shape), 1))()
    lib = runtime()
    status = lib.m2n_layout_local_box(
        (i64 * axes)(*mesh_shape), axes, None if ranks is None else (i64 * len(ranks))(*ranks),
        base, c_placements, (i64 * max(len(shape), 1))(*shape), len(shape), rank,
        ctypes.byref(present), offsets, sizes)
    if status == 1:  # M2N_INVALID_ARGUMENT: the layout does not fit.
        raise ValueError(lib.m2n_last_error().decode())
    check(status)
    if not present.value:
        return None
    return tuple(offsets[:len(shape)]), tuple(sizes[:len(shape)])


def check(status: int) -> None:
    """Raises M2NError for a failing runtime status."""
    if status != 0:
        lib = runtime()
        raise M2NError(lib.m2n_status_name(status).decode(), lib.m2n_last_error().decode())


_identity = None


def compiler_version() -> str:
    return compiler().m2n_compiler_version().decode()


def compiler_identity() -> str:
    """The compiler's version and a hash of its library: the whole m2n
    compiler (passes, kernel source) is linked into it, so any change to the
    compiler changes the identity, and with it every JIT cache key."""
    global _identity
    if _identity is None:
        lib = compiler()
        digest = hashlib.sha256(Path(lib.m2n_path).read_bytes()).hexdigest()[:16]
        _identity = f"{compiler_version()} build {digest}"
    return _identity


def compile_ir(ir: str, options: str = "", dump_path: str = "") -> bytes:
    """The artifact of `ir` compiled with `--m2n-pipeline{options}`."""
    return _compiled(lambda lib, *out: lib.m2n_compile(
        ir.encode(), options.encode(), dump_path.encode() if dump_path else None, *out))


def compile_request(request: "CompileRequest", options: str = "", dump_path: str = "") -> bytes:
    """The artifact of a structured request compiled with
    `--m2n-pipeline{options}`."""
    return _compiled(lambda lib, *out: lib.m2n_compile_from_request(
        ctypes.byref(request), options.encode(), dump_path.encode() if dump_path else None,
        *out))


def request_ir(request: "CompileRequest") -> str:
    """The module the compiler builds from `request`, as text."""
    lib = compiler()
    text = ctypes.c_void_p()
    error = ctypes.c_char_p()
    if lib.m2n_request_ir(ctypes.byref(request), ctypes.byref(text), ctypes.byref(error)):
        message = error.value.decode() if error.value else "invalid request"
        lib.m2n_compiler_free(ctypes.cast(error, ctypes.c_void_p))
        raise CompileError(message)
    try:
        return ctypes.string_at(text).decode()
    finally:
        lib.m2n_compiler_free(text)


def _compiled(call) -> bytes:
    """Runs a compile entry point `call(lib, &data, &size, &error)`."""
    lib = compiler()
    data = ctypes.c_void_p()
    size = ctypes.c_size_t()
    error = ctypes.c_char_p()
    status = call(lib, ctypes.byref(data), ctypes.byref(size), ctypes.byref(error))
    if status != 0:
        message = error.value.decode() if error.value else "compilation failed"
        lib.m2n_compiler_free(ctypes.cast(error, ctypes.c_void_p))
        raise CompileError(message.strip())
    try:
        return ctypes.string_at(data, size.value)
    finally:
        lib.m2n_compiler_free(data)
