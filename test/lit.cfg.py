# -*- Python -*-
# lit configuration for the m2n test suite.

import os

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "M2N"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.excludes = ["CMakeLists.txt", "README.md", "lit.cfg.py", "lit.site.cfg.py", "Inputs"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.m2n_obj_root, "test")

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%m2n_src_root", config.m2n_src_root))
config.substitutions.append(("%m2n_obj_root", config.m2n_obj_root))
config.substitutions.append(("%python", config.python_executable))

llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

tool_dirs = [config.m2n_tools_dir, config.llvm_tools_dir]
tools = ["m2n-opt", "m2n-sim"]
llvm_config.add_tool_substitutions(tools, tool_dirs)
