# -*- Python -*-
# lit configuration for the m2n test suite.

import os

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "M2N"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.excludes = ["CMakeLists.txt", "README.md", "lit.cfg.py", "lit.site.cfg.py", "Inputs", "Utils", "GPU"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.m2n_obj_root, "test")

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%m2n_src_root", config.m2n_src_root))
config.substitutions.append(("%m2n_obj_root", config.m2n_obj_root))
config.substitutions.append(("%python", config.python_executable))

llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

tool_dirs = [config.m2n_tools_dir, config.llvm_tools_dir]
tools = ["m2n-opt", "m2n-sim", "m2n-artifact-dump", "m2n-run", "m2n-refit", "mlir-opt"]
llvm_config.add_tool_substitutions(tools, tool_dirs)

config.substitutions.append(
    ("%extract_ptx", config.python_executable + " " +
     os.path.join(config.m2n_src_root, "test", "Utils", "extract_ptx.py")))

# A sanitizer build (test/Sanitizers/run.sh): tests that load m2n's
# libraries into Python are UNSUPPORTED there (an uninstrumented interpreter
# cannot load instrumented libraries); the main build runs them.
if getattr(config, "m2n_sanitize", ""):
    config.available_features.add("sanitizers")
    for name in ("ASAN_OPTIONS", "UBSAN_OPTIONS", "ASAN_SYMBOLIZER_PATH"):
        if name in os.environ:
            config.environment[name] = os.environ[name]

# ptxas (CUDA toolkit) assembles every generated kernel for sm_90a; the GPU
# itself is only needed by the tests under test/GPU (run on the GPU machine).
ptxas = os.environ.get("M2N_PTXAS", "/usr/local/cuda/bin/ptxas")
if os.path.exists(ptxas):
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", ptxas))

# A GPU (nvidia-smi lists one): tests that run kernels REQUIRE `cuda`, the
# no-GPU behaviour is UNSUPPORTED there.
import shutil
import subprocess
if shutil.which("nvidia-smi"):
    try:
        listed = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=30)
        if listed.returncode == 0 and "GPU" in listed.stdout:
            config.available_features.add("cuda")
    except (OSError, subprocess.SubprocessError):
        pass
