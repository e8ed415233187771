"""The paper's examples as runnable scripts (examples/python), host backend."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("script", ["example_a.py", "example_b.py"])
def test_example_runs(script, fresh_cache):
    # The caller's environment (library paths on the GPU machine), own cache.
    env = dict(os.environ, M2N_CACHE_DIR=str(fresh_cache))
    result = subprocess.run([sys.executable, str(ROOT / "examples" / "python" / script)],
                            capture_output=True, text=True, env=env, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "PASS" in result.stdout
