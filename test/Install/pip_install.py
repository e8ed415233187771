"""`pip install` of the checkout into a fresh virtual environment, then the
package used from there (issue 15): ctest pip-install.

The venv sees the system's site-packages for numpy (python3-numpy: CI has
no package index); pip runs with --no-index so nothing is downloaded. The
build backend (python/packaging) configures and builds the libraries with
CMake in WORK/cmake-build.
Usage: pip_install.py SOURCE_DIR WORK_DIR"""
import os
import shutil
import subprocess
import sys
from pathlib import Path

CHECK = r"""
import sys
from pathlib import Path
import numpy as np
import m2n
where = Path(m2n.__file__).resolve()
assert where.is_relative_to(Path(sys.prefix).resolve()), where
comm = m2n.Communicator.host(2)
parts = [np.arange(5, dtype=np.float32) + 5 * r for r in range(2)]
out = [np.full(10, np.nan, np.float32) for _ in range(2)]
m2n.all_gather(parts, out, comm)
for o in out:
    assert (o == np.arange(10, dtype=np.float32)).all(), o
print("m2n", m2n.__version__, "from", where.parent)
print("PASS")
"""


def main(source, work):
    work = Path(work)
    venv = work / "venv"
    shutil.rmtree(venv, ignore_errors=True)
    (work / "cache").mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages",
                    str(venv)], check=True)
    env = {k: v for k, v in os.environ.items()
           if k not in ("M2N_LIB_DIR", "PYTHONPATH")}
    env["M2N_CMAKE_BUILD_DIR"] = str(work / "cmake-build")
    env["M2N_CACHE_DIR"] = str(work / "cache")
    python = str(venv / "bin" / "python")
    subprocess.run([python, "-m", "pip", "install", "--no-index",
                    "--disable-pip-version-check", source], check=True,
                   env=env)
    # From elsewhere than the checkout: only the installed package is found.
    subprocess.run([python, "-c", CHECK], check=True, env=env, cwd=work)
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
