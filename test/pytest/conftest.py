"""Shared pytest setup: every test gets its own Cuvil cache directory, and
compiled code uses one thread unless a test says otherwise (CI machines are
small and timing-free tests should not depend on core counts)."""
import pytest


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CUVIL_CACHE_DIR", str(tmp_path / "cuvil-cache"))
    monkeypatch.setenv("CUVIL_NUM_THREADS", "1")
    monkeypatch.setenv("CUVIL_REPRO_DIR", str(tmp_path / "repro"))
