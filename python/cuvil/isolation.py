"""Runs a step that may crash the process (torch-mlir's passes are C++ that
can segfault or trap on IR they do not expect) in a forked child, so that a
crash becomes an error the caller can name instead of the end of the user's
Python process.

The child is a fork: it sees the parent's objects as they are (the module
to lower included), runs the function, and sends back its result or the
CuvilError it raised, pickled. A child killed by a signal raises Crashed.
"""
import os
import pickle
import signal
import struct
from typing import Any, Callable


class Crashed(Exception):
    """The child died (`signal_name`, e.g. SIGSEGV) or exited without a result."""

    def __init__(self, signal_name: str):
        self.signal_name = signal_name
        super().__init__(f"the process running it died ({signal_name})")


def available() -> bool:
    return hasattr(os, "fork")


def run(function: Callable[[], Any]) -> Any:
    """function() in a forked child: its return value, or the exception it
    raised (which must pickle), re-raised here."""
    if not available():
        return function()
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:   # the child: never returns into the caller's code
        status = 0
        try:
            import faulthandler
            faulthandler.disable()   # a crash here is reported by the parent, not as a dump
            os.close(read_end)
            try:
                payload = pickle.dumps((True, function()))
            except BaseException as err:   # noqa: BLE001 - every failure goes back to the parent
                try:
                    payload = pickle.dumps((False, err))
                except Exception:   # an exception that does not pickle: its text
                    payload = pickle.dumps((False, RuntimeError(f"{type(err).__name__}: {err}")))
            with os.fdopen(write_end, "wb") as out:
                out.write(struct.pack("<Q", len(payload)))
                out.write(payload)
        except BaseException:   # noqa: BLE001
            status = 1
        finally:
            os._exit(status)   # no atexit handlers, no flushing of the parent's buffers
    os.close(write_end)
    with os.fdopen(read_end, "rb") as inp:
        header = inp.read(8)
        payload = inp.read(struct.unpack("<Q", header)[0]) if len(header) == 8 else b""
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        raise Crashed(signal.Signals(os.WTERMSIG(status)).name)
    if not payload:
        raise Crashed(f"exit status {os.WEXITSTATUS(status)}")
    ok, value = pickle.loads(payload)
    if ok:
        return value
    raise value
