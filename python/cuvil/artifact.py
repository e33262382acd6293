"""Stage 5, artifact: LLVM IR -> a native shared library, cached on disk.

Entries are content-addressed (hash of the IR, options and tool versions)
under $CUVIL_CACHE_DIR (default ~/.cache/cuvil). Each entry is written to a
temporary file and renamed into place, so a reader never sees half a file;
a small manifest records size and SHA-256, and an entry that does not match
it (truncated, corrupted) or that is not owned by this user / is writable by
others is refused and rebuilt.
"""
import functools
import hashlib
import json
import os
import stat
import subprocess
import tempfile
from pathlib import Path

from . import tools
from ._version import LLVM_VERSION, __version__
from .errors import CompileError


def cache_dir() -> Path:
    from .options import environment
    path = environment().cache_dir
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    return path


def cache_key(*parts: str) -> str:
    h = hashlib.sha256()
    for part in (__version__, LLVM_VERSION, *parts):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()[:32]


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _atomic_write(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def _trusted(path: Path) -> bool:
    st = path.stat()
    return st.st_uid == os.getuid() and not (st.st_mode & (stat.S_IWGRP | stat.S_IWOTH))


def lookup(key: str):
    """Path of a valid cached library for `key`, or None."""
    lib, manifest = cache_dir() / f"{key}.so", cache_dir() / f"{key}.json"
    try:
        if not (_trusted(lib) and _trusted(manifest)):
            return None
        meta = json.loads(manifest.read_text())
        if lib.stat().st_size != meta["size"] or _sha256(lib) != meta["sha256"]:
            return None
        return lib
    except (OSError, ValueError, KeyError):
        return None


def run_tool(cmd, stage, **kw):
    """Runs a native tool (llc, cc, ...) with libLLVM on the library path;
    CompileError naming `stage`, with the command as reproducer, on failure."""
    proc = subprocess.run([str(c) for c in cmd], capture_output=True, env=tools.tool_env(), **kw)
    if proc.returncode != 0:
        raise CompileError(stage, proc.stderr.decode(errors="replace").strip(),
                           reproducer=" ".join(str(c) for c in cmd))
    return proc


RUNTIME_SUPPORT = Path(__file__).absolute().parent / "runtime_support.c"
# The MLIR async runtime ABI with a spinning worker pool (multi-threaded builds).
PARALLEL_RUNTIME = Path(__file__).absolute().parent / "parallel_runtime.c"


@functools.lru_cache(maxsize=None)
def compiler_build() -> str:
    """Which build of Cuvil's passes (libCuvilPythonCAPI) this is: a rebuilt
    compiler (same version, changed C++) must not reuse libraries its
    predecessor made. Name, size and mtime, not a hash of the ~100 MB file."""
    libs = sorted((Path(__file__).absolute().parent / "_mlir_libs").glob("libCuvilPythonCAPI.so*"))
    if not libs:  # not an installed package (e.g. imported from the source tree)
        raise CompileError("cache", "the Cuvil passes library (_mlir_libs/libCuvilPythonCAPI.so) "
                           "is missing: install the package (bash scripts/install.sh)")
    return ";".join(f"{p.name}:{p.stat().st_size}:{p.stat().st_mtime_ns}" for p in libs)


@functools.lru_cache(maxsize=None)
def host_cpu() -> str:
    """The CPU libraries are built for (llc -mcpu=native): its model name and
    feature flags, so that a cache shared between machines (a network home,
    a copied container) never hands an AVX-512 library to an AVX2 host."""
    import platform
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return platform.machine() + ":" + platform.processor()
    first = text.split("\n\n", 1)[0]
    keep = [line for line in first.splitlines()
            if line.split(":")[0].strip() in ("vendor_id", "cpu family", "model", "model name", "flags",
                                               "Features", "CPU implementer", "CPU part")]
    return platform.machine() + ";" + ";".join(keep)


@functools.lru_cache(maxsize=None)
def runtime_sources() -> str:
    """The C linked into every library: part of what decides its code."""
    return RUNTIME_SUPPORT.read_text() + PARALLEL_RUNTIME.read_text()


def build_shared_library(llvm_ir: str, key: str, num_threads: int = 1, codegen=None) -> Path:
    """Runs `codegen` (a cuvil.pipeline.Codegen: llc, cc -shared; default:
    for `num_threads`, host CPU) on LLVM IR and stores the library in the
    cache under `key`; returns its path."""
    from .pipeline import EXPORTS_MAP, Codegen, Tools
    codegen = codegen or Codegen(num_threads=num_threads)
    with tempfile.TemporaryDirectory(prefix="cuvil-build-") as tmp:
        tmp = Path(tmp)
        ll, obj, so, exports = tmp / "module.ll", tmp / "module.o", tmp / "module.so", tmp / "exports.map"
        ll.write_text(llvm_ir)
        exports.write_text(EXPORTS_MAP)
        for cmd in codegen.commands(str(ll), str(obj), str(so), str(exports), Tools.installed()):
            run_tool(cmd, "link" if cmd[0] == Tools.installed().cc else "codegen")
        data = so.read_bytes()
    lib = cache_dir() / f"{key}.so"
    _atomic_write(lib, data)
    meta = {"size": len(data), "sha256": hashlib.sha256(data).hexdigest(), "cuvil": __version__}
    _atomic_write(cache_dir() / f"{key}.json", json.dumps(meta).encode())
    return lib


# -- index: structural fingerprint -> library key + how to call it ------------

def load_index(index_key: str):
    """The index entry for a structural key, or None (absent, unreadable,
    untrusted)."""
    path = cache_dir() / f"{index_key}.index.json"
    try:
        if not _trusted(path):
            return None
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def store_index(index_key: str, entry: dict) -> None:
    _atomic_write(cache_dir() / f"{index_key}.index.json", json.dumps(entry).encode())
