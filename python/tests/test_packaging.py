"""The build backend's default CMake folder lies outside the checkout."""
import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _backend():
    spec = importlib.util.spec_from_file_location(
        "m2n_build_backend", ROOT / "python" / "packaging" / "m2n_build_backend.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_default_build_folder_is_in_the_users_cache(monkeypatch, tmp_path):
    # `pip install .` left build-pip/ in the checkout.
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    folder = _backend()._default_build_dir()
    assert folder.parent == tmp_path / "m2n"
    assert ROOT not in folder.parents
    assert folder == _backend()._default_build_dir()  # One per checkout.
