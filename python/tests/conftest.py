"""pytest set-up: the package from this checkout, a fresh disk cache per
test, and the `cuda` marker for tests that need GPUs and torch."""
import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import m2n  # noqa: E402


def pytest_configure(config):
    config.addinivalue_line("markers", "cuda: needs CUDA GPUs and torch (run on the GPU machine)")


def _gpus() -> int:
    try:
        import torch
        return torch.cuda.device_count()
    except ImportError:
        return 0


def pytest_collection_modifyitems(config, items):
    if _gpus() >= 1:
        return
    skip = pytest.mark.skip(reason="no CUDA GPU with torch here")
    for item in items:
        if "cuda" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def fresh_cache(tmp_path):
    m2n.set_cache_dir(tmp_path / "cache")
    yield tmp_path / "cache"
    m2n.set_cache_limit(None)
    m2n.clear_memory_cache()
