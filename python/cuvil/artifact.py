"""Stage 5, artifact: LLVM IR -> a native shared library, cached on disk.

Entries are content-addressed (hash of the IR, options and tool versions)
under $CUVIL_CACHE_DIR (default ~/.cache/cuvil). Each entry is written to a
temporary file and renamed into place, so a reader never sees half a file;
a small manifest records size and SHA-256, and an entry that does not match
it (truncated, corrupted) or that is not owned by this user / is writable by
others is refused and rebuilt. Processes building the same library take turns
(build_lock): one builds, the others find it. Libraries beyond
$CUVIL_CACHE_MAX_BYTES (default 5 GB) are evicted least recently used first;
`cuvil cache info` / `cuvil cache clear [--older-than DAYS]` manage it.
"""
import contextlib
import fcntl
import functools
import hashlib
import json
import os
import signal
import stat
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Optional

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


@contextlib.contextmanager
def _interrupts_deferred():
    """Holds Ctrl-C (SIGINT) and SIGTERM until the block is done, then delivers
    them: a cache write takes milliseconds, and an interrupt between creating a
    temporary file and renaming it (or between a library and its manifest)
    would leave a file that nobody removes. Python runs signal handlers in the
    main thread only, so elsewhere there is nothing to hold."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    received: list = []
    held = (signal.SIGINT, signal.SIGTERM)
    previous = {s: signal.signal(s, lambda signum, frame: received.append(signum)) for s in held}
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
        if received:
            signal.raise_signal(received[0])


def _atomic_write(path: Path, data: bytes) -> None:
    with _interrupts_deferred():
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
        os.utime(manifest)   # last use, for least-recently-used eviction
        return lib
    except (OSError, ValueError, KeyError, TypeError):
        return None


# -- cache management: build locks, size cap, info, clear ------------------------

@contextlib.contextmanager
def build_lock(key: str):
    """Held while one process looks up and builds the library for `key`:
    processes compiling the same model at once build it once, the others
    wait and then find it. An flock, so a process that dies releases it."""
    path = cache_dir() / f"{key}.lock"
    with open(path, "a") as f:
        os.chmod(path, 0o600)
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def _kind(path: Path) -> str:
    name = path.name
    if name.endswith(".index.json"):
        return "index"
    if name.endswith(".so") or name.endswith(".json"):
        return "library"
    if name.endswith(".lock"):
        return "lock"
    return "temporary" if ".tmp" in name or name.endswith(".corrupt") else "other"


def _libraries() -> list:
    """(last use, bytes, key) of every library entry (library + manifest)."""
    out = []
    for manifest in cache_dir().glob("*.json"):
        if manifest.name.endswith(".index.json"):
            continue
        lib = manifest.with_suffix(".so")
        try:
            out.append((manifest.stat().st_mtime, manifest.stat().st_size + lib.stat().st_size, manifest.stem))
        except OSError:
            continue
    return out


def info() -> dict:
    """Where the cache is, and its entries and bytes per kind."""
    kinds: dict = {}
    for path in cache_dir().iterdir():
        try:
            size = path.stat().st_size
        except OSError:
            continue
        k = kinds.setdefault(_kind(path), {"files": 0, "bytes": 0})
        k["files"] += 1
        k["bytes"] += size
    from .options import environment
    return {"location": str(cache_dir()), "libraries": len(_libraries()),
            "bytes": sum(k["bytes"] for k in kinds.values()), "max_bytes": environment().cache_max_bytes,
            "kinds": kinds}


def _remove(key: str) -> int:
    freed = 0
    for suffix in (".json", ".so"):   # manifest first: a library without one is never used
        path = cache_dir() / f"{key}{suffix}"
        try:
            freed += path.stat().st_size
            path.unlink()
        except OSError:
            pass
    return freed


def clear(older_than_days: Optional[float] = None) -> int:
    """Removes every entry (or those last used more than `older_than_days`
    ago); returns the bytes freed. Safe while other processes run: a library
    already loaded stays mapped, one being looked up is rebuilt."""
    cutoff = None if older_than_days is None else time.time() - older_than_days * 86400
    freed = 0
    for last_use, _, key in _libraries():
        if cutoff is None or last_use < cutoff:
            freed += _remove(key)
    # Another process may be writing a temporary file right now (it renames it
    # into place when done): only temporaries an hour old are left-overs.
    # Lock files are empty and may be held: they stay.
    stale_tmp = time.time() - 3600
    for path in cache_dir().iterdir():
        kind = _kind(path)
        if kind in ("index", "temporary", "other"):
            try:
                mtime = path.stat().st_mtime
                if (cutoff is None or mtime < cutoff) and (kind != "temporary" or mtime < stale_tmp):
                    size = path.stat().st_size
                    path.unlink()
                    freed += size
            except OSError:
                pass
    return freed


def evict(max_bytes: int, keep: str = "") -> int:
    """Least-recently-used libraries removed until the cache's libraries take
    at most `max_bytes` (never `keep`, the one just built); returns bytes freed."""
    entries = sorted(_libraries())
    total, freed = sum(size for _, size, _ in entries), 0
    for _, size, key in entries:
        if total - freed <= max_bytes:
            break
        if key != keep:
            freed += _remove(key)
    return freed


def run_tool(cmd, stage, **kw):
    """Runs a native tool (llc, cc, ...) with libLLVM on the library path;
    CompileError naming `stage`, with the command as reproducer, on failure."""
    proc = subprocess.run([str(c) for c in cmd], capture_output=True, env=tools.tool_env(), **kw)
    if proc.returncode != 0:
        raise CompileError(stage, proc.stderr.decode(errors="replace").strip(),
                           reproducer=" ".join(_kept_inputs([str(c) for c in cmd])))
    return proc


def _kept_inputs(cmd: list) -> list:
    """`cmd` with its input files (in a build folder that is deleted next)
    copied to the reproducer folder: the reproducer command must still run."""
    import shutil
    from .options import environment
    folder = environment().repro_dir
    kept = []
    for word in cmd:
        path = Path(word)
        if path.parent.name.startswith("cuvil-build-"):
            folder.mkdir(parents=True, exist_ok=True)
            fd, copy = tempfile.mkstemp(prefix=f"codegen-{path.stem}-", suffix=path.suffix, dir=folder)
            os.close(fd)
            if path.is_file():   # an input; an output is written where the copy is
                shutil.copyfile(path, copy)
            word = copy
        kept.append(word)
    return kept


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
def front_end_sources() -> str:
    """A digest of the package's Python (the importers and their
    decompositions decide the IR the passes get): a fixed decomposition must
    not warm-start from a library built before the fix. ~40 small files,
    read once per process."""
    h = hashlib.sha256()
    for path in sorted(Path(__file__).absolute().parent.glob("*.py")):
        h.update(path.name.encode() + b"\0" + path.read_bytes())
    return h.hexdigest()[:16]


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
    with tempfile.TemporaryDirectory(prefix="cuvil-build-") as tmp_dir:
        tmp = Path(tmp_dir)
        ll, obj, so, exports = tmp / "module.ll", tmp / "module.o", tmp / "module.so", tmp / "exports.map"
        ll.write_text(llvm_ir)
        exports.write_text(EXPORTS_MAP)
        tools_ = Tools.installed()
        for cmd in codegen.commands(str(ll), str(obj), str(so), str(exports), tools_):
            run_tool(cmd, "link" if cmd[0] == tools_.cc else "codegen")
        data = so.read_bytes()
    lib = cache_dir() / f"{key}.so"
    meta = {"size": len(data), "sha256": hashlib.sha256(data).hexdigest(), "cuvil": __version__}
    # The library and its manifest land together for Ctrl-C; a kill between
    # the two leaves a library without a manifest, which lookup() refuses.
    with _interrupts_deferred():
        _atomic_write(lib, data)
        _atomic_write(cache_dir() / f"{key}.json", json.dumps(meta).encode())
    from .options import environment
    evict(environment().cache_max_bytes, keep=key)
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
