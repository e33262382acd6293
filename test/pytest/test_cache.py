"""The artifact cache: reuse across processes, atomic writes, refusing
corrupt or foreign-writable entries, concurrent compiles of one model."""
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
import torch

import cuvil
from cuvil import artifact

from models import MLP, SMALL_MLP

# Prints the cache hit, whether the result matches eager, and whether the
# model was imported (torch.export + torch-mlir: the importer module loaded,
# an "import" stage timed) in this process.
COMPILE_SCRIPT = textwrap.dedent("""
    import sys, torch, cuvil
    sys.path.insert(0, {models!r})
    from models import MLP, SMALL_MLP
    torch.manual_seed(0)
    model = MLP(SMALL_MLP).eval()
    x = torch.randn(8, 64)
    fast = cuvil.compile(model, example_inputs=(x,))
    ok = torch.allclose(fast(x), model(x), atol=1e-5, rtol=1e-4)
    imported = "import" in fast.stats or "cuvil.importer" in sys.modules
    print(int(fast.stats["cache_hit"]), int(ok), int(imported))
""").format(models=str(Path(__file__).resolve().parents[2] / "examples"))


def _compile_in_subprocess(**env):
    return subprocess.Popen([sys.executable, "-c", COMPILE_SCRIPT], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=dict(os.environ, **env))


def _result(proc):
    """(cache hit, matches eager, imported the model) of a compiling process."""
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    hit, ok, imported = out.split()
    return int(hit), int(ok), int(imported)


def _entries():
    return sorted(artifact.cache_dir().glob("*.so"))


def test_second_process_starts_warm_without_importing_the_model():
    assert _result(_compile_in_subprocess()) == (0, 1, 1)
    # The structural fingerprint finds the library: no torch.export, no torch-mlir.
    assert _result(_compile_in_subprocess()) == (1, 1, 0)
    assert len(_entries()) == 1


def test_without_the_structural_index_a_second_process_imports_and_hits():
    assert _result(_compile_in_subprocess(CUVIL_CACHE_STRUCTURAL="0")) == (0, 1, 1)
    # Keyed on the imported IR: the model is imported again, the library reused.
    assert _result(_compile_in_subprocess(CUVIL_CACHE_STRUCTURAL="0")) == (1, 1, 1)
    assert len(_entries()) == 1


def test_concurrent_processes_compile_one_model():
    procs = [_compile_in_subprocess() for _ in range(2)]
    results = [_result(p) for p in procs]
    assert all(ok == 1 for _, ok, _ in results)
    assert len(_entries()) == 1
    assert not list(artifact.cache_dir().glob("*.tmp")), "a temporary file was left behind"
    assert _result(_compile_in_subprocess()) == (1, 1, 0)


def _replace_file(path, data):
    """Rewrites `path` as a new inode: this process has the old library mapped
    and rewriting it in place would pull pages out from under it."""
    tmp = path.with_suffix(".corrupt")
    tmp.write_bytes(data)
    os.chmod(tmp, 0o600)
    os.replace(tmp, path)


def _fresh_compile():
    torch.manual_seed(0)
    model, x = MLP(SMALL_MLP).eval(), torch.randn(8, 64)
    fast = cuvil.compile(model, example_inputs=(x,))
    torch.testing.assert_close(fast(x), model(x), atol=1e-5, rtol=1e-4)
    return fast


def test_truncated_entry_is_rebuilt():
    _fresh_compile()
    (lib,) = _entries()
    _replace_file(lib, lib.read_bytes()[:1000])
    assert _fresh_compile().stats["cache_hit"] == 0.0
    assert _fresh_compile().stats["cache_hit"] == 1.0


def test_corrupted_entry_is_rebuilt():
    _fresh_compile()
    (lib,) = _entries()
    data = bytearray(lib.read_bytes())
    data[len(data) // 2] ^= 0xFF
    _replace_file(lib, bytes(data))
    assert _fresh_compile().stats["cache_hit"] == 0.0


def test_entry_writable_by_others_is_refused():
    _fresh_compile()
    (lib,) = _entries()
    os.chmod(lib, 0o666)
    assert artifact.lookup(lib.stem) is None
    assert _fresh_compile().stats["cache_hit"] == 0.0
    assert os.stat(_entries()[0]).st_mode & 0o077 == 0


def _damage(path, how):
    if how == "garbage":
        _replace_file(path, b"{not json")
    elif how == "wrong-shape":      # valid JSON, not what Cuvil wrote
        _replace_file(path, b'{"library": 7, "weights": "x"}')
    elif how == "writable":
        os.chmod(path, 0o666)


@pytest.mark.parametrize("how", ["garbage", "wrong-shape", "writable"])
def test_damaged_warm_start_index_is_ignored(how):
    _fresh_compile()
    (index,) = artifact.cache_dir().glob("*.index.json")
    _damage(index, how)
    again = _fresh_compile()   # compares with eager
    # Not trusted: the model is imported again (its library is still valid).
    assert "import" in again.stats and again.stats["cache_hit"] == 1.0


@pytest.mark.parametrize("how", ["garbage", "wrong-shape", "writable"])
def test_damaged_library_manifest_is_refused(how):
    _fresh_compile()
    (lib,) = _entries()
    _damage(lib.with_suffix(".json"), how)
    assert artifact.lookup(lib.stem) is None
    assert _fresh_compile().stats["cache_hit"] == 0.0   # rebuilt, and right
    assert _fresh_compile().stats["cache_hit"] == 1.0   # the rebuilt entry is trusted


def test_rebuilt_compiler_does_not_reuse_old_libraries(monkeypatch):
    """Same Cuvil version, rebuilt passes (e.g. a developer's C++ change):
    the libraries and warm-start index entries of the old build are not used."""
    torch.manual_seed(0)
    model, x = MLP(SMALL_MLP).eval(), torch.randn(8, 64)
    cuvil.compile(model, example_inputs=(x,))
    again = cuvil.compile(model, example_inputs=(x,))
    assert again.stats["cache_hit"] == 1.0
    assert "libCuvilPythonCAPI" in artifact.compiler_build()
    monkeypatch.setattr(artifact, "compiler_build", lambda: "libCuvilPythonCAPI.so:rebuilt")
    rebuilt = cuvil.compile(model, example_inputs=(x,))
    assert rebuilt.stats["cache_hit"] == 0.0
    torch.testing.assert_close(rebuilt(x), model(x), atol=1e-5, rtol=1e-4)
    assert len(_entries()) == 2


def test_four_processes_on_a_cold_cache_build_once():
    # All four import the model at once; the build lock lets one build while
    # the others wait and then load what it built.
    procs = [_compile_in_subprocess() for _ in range(4)]
    results = [_result(p) for p in procs]
    assert all(ok == 1 for _, ok, _ in results)
    assert sorted(hit for hit, _, _ in results) == [0, 1, 1, 1], results
    assert len(_entries()) == 1


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "cuvil.cli", *args], capture_output=True, text=True,
                          timeout=120, env=dict(os.environ))


def test_cache_info_and_clear():
    _fresh_compile()
    info = json.loads(_cli("cache", "info", "--json").stdout)
    assert info["location"] == str(artifact.cache_dir()) and info["libraries"] == 1
    assert info["kinds"]["library"]["files"] == 2 and info["kinds"]["index"]["files"] == 1
    assert info["bytes"] >= info["kinds"]["library"]["bytes"] > 10_000
    assert "libraries: 1" in _cli("cache", "info").stdout
    # Last used just now: an age limit keeps it.
    assert _cli("cache", "clear", "--older-than", "1").returncode == 0
    assert len(_entries()) == 1
    proc = _cli("cache", "clear")
    assert proc.returncode == 0 and "freed" in proc.stdout
    assert not _entries() and not list(artifact.cache_dir().glob("*.index.json"))
    assert _fresh_compile().stats["cache_hit"] == 0.0   # rebuilt


def test_clear_older_than_removes_only_old_entries():
    _fresh_compile()
    (old,) = _entries()
    torch.manual_seed(0)
    cuvil.compile(MLP((64, 32)).eval(), example_inputs=(torch.randn(2, 64),))
    ten_days_ago = time.time() - 10 * 86400
    os.utime(old.with_suffix(".json"), (ten_days_ago, ten_days_ago))
    artifact.clear(older_than_days=5)
    assert old not in _entries() and len(_entries()) == 1


def test_size_cap_evicts_the_least_recently_used(monkeypatch):
    torch.manual_seed(0)
    models = [MLP((64, n)).eval() for n in (16, 24, 40)]
    libs = []
    for i, m in enumerate(models):
        cuvil.compile(m, example_inputs=(torch.randn(2, 64),))
        (new,) = set(_entries()) - set(libs)
        libs.append(new)
        stamp = time.time() - 100 + i   # distinct last uses, oldest first
        os.utime(new.with_suffix(".json"), (stamp, stamp))
    cuvil.compile(models[0], example_inputs=(torch.randn(2, 64),))   # hit: used again
    assert set(_entries()) == set(libs)
    one = max(p.stat().st_size + p.with_suffix(".json").stat().st_size for p in libs)
    monkeypatch.setenv("CUVIL_CACHE_MAX_BYTES", str(3 * one))
    cuvil.compile(MLP((64, 8)).eval(), example_inputs=(torch.randn(2, 64),))   # a 4th library
    # The least recently used (models[1]) went; models[0], used again, stayed.
    assert libs[1] not in _entries() and libs[0] in _entries() and libs[2] in _entries()
    assert len(_entries()) == 3


def test_first_touch_zeroes_every_output_on_several_threads():
    # The warm start's prepack outputs are first-touched on all cores; the
    # packing then overwrites them, so every byte must be written.
    import numpy as np
    from cuvil import execution
    arrays = [execution.aligned_empty(shape, np.float32) for shape in ((3, 5), (1 << 20,), (7, 64, 64))]
    for a in arrays:
        a.fill(np.nan)
    execution.first_touch(arrays, threads=2)
    assert all(not a.any() for a in arrays)


def _killed_at(pattern: str, how: signal.Signals) -> int:
    """Starts a cold compile and sends it `how` as soon as a cache file matching
    `pattern` appears (the build lock: it is building; a .tmp: it is writing).
    Returns the process's exit status (0 if it finished first)."""
    proc = _compile_in_subprocess()
    cache = artifact.cache_dir()
    deadline = time.monotonic() + 240
    while proc.poll() is None and time.monotonic() < deadline:
        if cache.is_dir() and any(cache.glob(pattern)):
            proc.send_signal(how)
            break
        time.sleep(0.0002)
    proc.communicate(timeout=120)
    return proc.returncode


@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGINT], ids=["kill", "ctrl-c"])
@pytest.mark.parametrize("pattern", ["*.lock", "*.tmp"], ids=["building", "writing"])
def test_interrupted_compile_leaves_no_entry_to_trust(pattern, how):
    status = _killed_at(pattern, how)
    if how == signal.SIGINT:
        # Ctrl-C waits for a cache write under way: no half-written file, no
        # library without its manifest; interrupted while writing, the entry
        # is complete.
        assert not list(artifact.cache_dir().glob("*.tmp"))
        for so in _entries():
            assert artifact.lookup(so.stem) is not None, f"{so.name} left without a valid manifest"
        assert status == 0 or bool(_entries()) == (pattern == "*.tmp")
    # Whatever the interrupted process left, the next one compiles the model
    # correctly, and afterwards the entry verifies (used, or rebuilt).
    hit, ok, _ = _result(_compile_in_subprocess())
    assert ok == 1
    assert _entries() and all(artifact.lookup(so.stem) is not None for so in _entries())
    assert status != 0 or hit == 1  # finished before the signal: its entry is used
