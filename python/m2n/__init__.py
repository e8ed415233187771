"""m2n: layout-derived reshards and collectives, JIT-compiled by the m2n
compiler and run by its runtime (see docs/python.md)."""
from ._native import CompileError, M2NError, compiler_version
from ._many import reshard_many
from ._scales import scale_shape
from .api import local_shape, reshard
from .collectives import all_gather, all_reduce, all_to_all, reduce_scatter
from .comm import Communicator
from .dtensor import redistribute
from . import _many, _prepared, comm as _comm, jit as _jit
from .jit import set_cache_dir, set_cache_limit, set_dump_dir, stats
from .layout import Mesh, Partial, Replicate, Shard
from .refit import Sharded, refit

# m2n's version (CMakeLists.txt's M2N_VERSION; the build backend checks
# that they agree).
__version__ = "0.1"


def clear_memory_cache() -> None:
    """Forgets the artifacts and prepared calls of this process, and the
    runtime contexts of host communicators (the disk cache stays)."""
    _jit.clear_memory_cache()
    _comm.release_host_contexts()
    _prepared._prepared.clear()
    _many._prepared_many.clear()


__all__ = [
    "Mesh", "Shard", "Replicate", "Partial", "Communicator", "reshard", "reshard_many",
    "all_gather",
    "reduce_scatter", "all_reduce", "all_to_all", "local_shape", "scale_shape",
    "set_cache_dir",
    "set_cache_limit", "set_dump_dir",
    "clear_memory_cache", "stats", "compiler_version", "M2NError", "CompileError",
    "redistribute", "refit", "Sharded", "__version__",
]
