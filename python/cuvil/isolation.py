"""Runs a step that may crash the process (torch-mlir's passes are C++ that
can segfault or trap on IR they do not expect) in a forked child, so that a
crash becomes an error the caller can name instead of the end of the user's
Python process.

The child is a fork: it sees the parent's objects as they are (the module
to lower included), runs the function, and sends back its result or the
exception it raised, pickled. A child killed by a signal raises Crashed.
Where there is no fork, or it fails (no memory for the page tables), the
function runs in this process.
"""
import os
import pickle
import signal
import struct
import traceback
from typing import Any, Callable


class Crashed(Exception):
    """The child died (`signal_name`, e.g. SIGSEGV) or exited without a result."""

    def __init__(self, signal_name: str):
        self.signal_name = signal_name
        super().__init__(f"the process running it died ({signal_name})")

    @property
    def killed(self) -> bool:
        """SIGKILL: most often the kernel's out-of-memory killer, not a bug."""
        return self.signal_name == "SIGKILL"


class ChildError(Exception):
    """An exception of the child that does not cross as itself: its type,
    message and traceback as text."""


def available() -> bool:
    return hasattr(os, "fork")


def _payload(function) -> bytes:
    try:
        return pickle.dumps((True, function()))
    except BaseException as err:   # noqa: BLE001 - every failure goes back to the parent
        try:
            payload = pickle.dumps((False, err))
            pickle.loads(payload)   # one that pickles but does not unpickle (a custom __init__)
            return payload
        except Exception:   # noqa: BLE001
            return pickle.dumps((False, ChildError(f"{type(err).__name__}: {err}\n{traceback.format_exc()}")))


def _die_with(parent: int) -> None:
    """The child is killed when its parent dies (Linux's PR_SET_PDEATHSIG):
    a parent killed for taking too long (a timeout around a compile whose
    torch-mlir pass does not terminate) leaves no child spinning."""
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL, 0, 0, 0)   # PR_SET_PDEATHSIG
    except (OSError, AttributeError):   # not Linux: the parent's own cleanup only
        return
    if os.getppid() != parent:   # it died before prctl took effect
        os._exit(1)


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:   # a real-time signal
        return f"signal {number}"


def run(function: Callable[[], Any]) -> Any:
    """function() in a forked child: its return value, or the exception it
    raised, re-raised here."""
    if not available():
        return function()
    read_end, write_end = os.pipe()
    parent = os.getpid()
    try:
        pid = os.fork()
    except OSError:   # ENOMEM / EAGAIN: then in this process, unprotected
        os.close(read_end)
        os.close(write_end)
        return function()
    if pid == 0:   # the child: never returns into the caller's code
        status = 1
        try:
            import faulthandler
            faulthandler.disable()   # a crash here is reported by the parent, not as a dump
            _die_with(parent)
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            os.close(read_end)
            payload = _payload(function)
            with os.fdopen(write_end, "wb") as out:
                out.write(struct.pack("<Q", len(payload)))
                out.write(payload)
            status = 0
        finally:
            os._exit(status)   # no atexit handlers, no flushing of the parent's buffers
    os.close(write_end)
    done = False
    try:
        with os.fdopen(read_end, "rb") as inp:
            header = inp.read(8)
            size = struct.unpack("<Q", header)[0] if len(header) == 8 else 0
            payload = inp.read(size) if size else b""
        _, status = os.waitpid(pid, 0)
        done = True
    finally:
        if not done:   # interrupted (Ctrl-C) or failed here: the child goes too
            try:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
            except OSError:
                pass
    if os.WIFSIGNALED(status):
        raise Crashed(_signal_name(os.WTERMSIG(status)))
    if not payload or len(payload) != size or os.WEXITSTATUS(status) != 0:
        raise Crashed(f"exit status {os.WEXITSTATUS(status)}")
    ok, value = pickle.loads(payload)
    if ok:
        return value
    raise value
