"""A progress line on stderr for long compiles: `cuvil: compiling BertModel:
schedule (6.2 s)`, rewritten in place while a compile runs, only on a
terminal and only once the compile has taken longer than SHOW_AFTER_S
(short compiles and logs redirected to files print nothing). The line is
erased when the compile ends."""
import sys
import threading
import time

SHOW_AFTER_S = 2.0
REFRESH_S = 0.25


class Progress:
    """`with Progress("BertModel") as p: p.stage("raise"); ...`"""

    def __init__(self, what: str, stream=None):
        self.what = what
        self.stream = stream if stream is not None else sys.stderr
        self._stage = "import"
        self._start = time.monotonic()
        self._done = threading.Event()
        self._shown = False
        self._thread: "threading.Thread | None" = None

    def stage(self, name: str) -> None:
        self._stage = name

    def __enter__(self) -> "Progress":
        isatty = getattr(self.stream, "isatty", None)
        if isatty is not None and isatty():
            thread = threading.Thread(target=self._run, name="cuvil-progress", daemon=True)
            thread.start()
            self._thread = thread
        return self

    def __exit__(self, *exc) -> None:
        self._done.set()
        if self._thread is not None:
            self._thread.join()
        if self._shown:
            self._write("\r\033[K")

    def _run(self) -> None:
        if self._done.wait(SHOW_AFTER_S):
            return
        while not self._done.is_set():
            self._shown = True
            self._write(f"\r\033[Kcuvil: compiling {self.what}: {self._stage} "
                        f"({time.monotonic() - self._start:.1f} s)")
            self._done.wait(REFRESH_S)

    def _write(self, text: str) -> None:
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):   # a closed stream: no progress, no error
            pass
