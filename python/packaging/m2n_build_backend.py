"""The PEP 517 build backend of the m2n Python package (pyproject.toml).

`pip install .` runs it: CMake configures the checkout and builds the two
shared libraries the package loads with ctypes (libm2n_compiler.so,
libm2n_runtime.so); the wheel holds python/m2n and those libraries under
m2n/lib. No build requirement is downloaded: it needs only the standard
library, CMake and the compiler toolchain the README's apt line installs.

Settings (environment):
  M2N_CMAKE_BUILD_DIR  the CMake build directory (default: one per checkout
                       under $XDG_CACHE_HOME/m2n, ~/.cache/m2n, so the
                       checkout stays clean; an existing one is built
                       incrementally)
  M2N_CMAKE_ARGS       extra arguments for the CMake configure step
"""
from __future__ import annotations

import base64
import hashlib
import io
import os
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import zipfile
from pathlib import Path

NAME = "m2n"
ROOT = Path(__file__).resolve().parents[2]
LIBRARIES = ("libm2n_compiler.so", "libm2n_runtime.so")


def _version() -> str:
    for line in (ROOT / "CMakeLists.txt").read_text().splitlines():
        if line.startswith("set(M2N_VERSION "):
            return line.split()[1].rstrip(")")
    raise RuntimeError("CMakeLists.txt does not set M2N_VERSION")


def _metadata() -> str:
    readme = (ROOT / "python" / "README.md").read_text()
    return "\n".join([
        "Metadata-Version: 2.1",
        f"Name: {NAME}",
        f"Version: {_version()}",
        "Summary: m2n: an MLIR-based communication compiler (reshard, "
        "collectives) for NVIDIA Hopper GPUs",
        "Requires-Python: >=3.9",
        "Requires-Dist: numpy",
        "Description-Content-Type: text/markdown",
        "",
        readme,
    ])


def _tag() -> str:
    platform = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    return f"py3-none-{platform}"


def _default_build_dir() -> Path:
    """A build folder of this checkout in the user's cache, not in the tree."""
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    checkout = hashlib.sha256(str(ROOT).encode()).hexdigest()[:12]
    return cache / "m2n" / f"cmake-build-{checkout}"


def _build_libraries() -> Path:
    """Configures and builds the libraries; returns the build's lib dir."""
    build = Path(os.environ.get("M2N_CMAKE_BUILD_DIR") or _default_build_dir())
    # Where the minutes go (pip prints a backend's output with -v and when
    # the build fails; docs/python.md points users at -v).
    print(f"m2n: building libm2n_compiler.so and libm2n_runtime.so with CMake in "
          f"{build} (several minutes the first time; pip install -v shows the "
          f"build)", file=sys.stderr)
    if not (build / "CMakeCache.txt").exists():
        generator = ["-G", "Ninja"] if shutil.which("ninja") else []
        subprocess.run(
            ["cmake", *generator, "-S", str(ROOT), "-B", str(build),
             "-DCMAKE_BUILD_TYPE=Release", "-DM2N_BUILD_UNITTESTS=OFF",
             *shlex.split(os.environ.get("M2N_CMAKE_ARGS", ""))],
            check=True, stdout=sys.stderr)
    subprocess.run(["cmake", "--build", str(build), "--target",
                    "m2n_compiler", "m2n_runtime"], check=True,
                   stdout=sys.stderr)
    return build / "lib"


def _record_line(path: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest())
    return f"{path},sha256={digest.rstrip(b'=').decode()},{len(data)}"


def _write_wheel(wheel_directory: str, files: dict[str, bytes]) -> str:
    version = _version()
    dist_info = f"{NAME}-{version}.dist-info"
    files[f"{dist_info}/METADATA"] = _metadata().encode()
    files[f"{dist_info}/WHEEL"] = "\n".join([
        "Wheel-Version: 1.0",
        "Generator: m2n_build_backend",
        "Root-Is-Purelib: false",
        f"Tag: {_tag()}",
        "",
    ]).encode()
    record = [_record_line(path, data) for path, data in files.items()]
    record.append(f"{dist_info}/RECORD,,")
    files[f"{dist_info}/RECORD"] = ("\n".join(record) + "\n").encode()
    name = f"{NAME}-{version}-{_tag()}.whl"
    with zipfile.ZipFile(Path(wheel_directory) / name, "w",
                         zipfile.ZIP_DEFLATED) as wheel:
        for path, data in files.items():
            info = zipfile.ZipInfo(path, date_time=(2026, 1, 1, 0, 0, 0))
            # Shared libraries keep their executable bits.
            mode = 0o755 if path.endswith(".so") else 0o644
            info.external_attr = (0o100000 | mode) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            wheel.writestr(info, data)
    return name


# PEP 517 hooks.

def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    init = (ROOT / "python" / NAME / "__init__.py").read_text()
    if f'__version__ = "{_version()}"' not in init:
        raise RuntimeError(f"python/m2n/__init__.py's __version__ is not "
                           f"CMakeLists.txt's M2N_VERSION {_version()}")
    lib = _build_libraries()
    files: dict[str, bytes] = {}
    for source in sorted((ROOT / "python" / NAME).glob("*.py")):
        files[f"{NAME}/{source.name}"] = source.read_bytes()
    for library in LIBRARIES:
        # The unversioned name is a link to the SONAME'd file: store its
        # content under the name the package loads.
        files[f"{NAME}/lib/{library}"] = (lib / library).resolve().read_bytes()
    return _write_wheel(wheel_directory, files)


def build_sdist(sdist_directory, config_settings=None):
    """The checkout's tracked files (git ls-files) as NAME-VERSION.tar.gz."""
    version = _version()
    base = f"{NAME}-{version}"
    tracked = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z"],
                             check=True, capture_output=True).stdout
    name = f"{base}.tar.gz"
    with tarfile.open(Path(sdist_directory) / name, "w:gz") as sdist:
        for path in filter(None, tracked.decode().split("\0")):
            sdist.add(ROOT / path, arcname=f"{base}/{path}", recursive=False)
        info = tarfile.TarInfo(f"{base}/PKG-INFO")
        data = _metadata().encode()
        info.size = len(data)
        sdist.addfile(info, io.BytesIO(data))
    return name
