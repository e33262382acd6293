"""What the conformance scripts (onnx_conformance.py, opdb_conformance.py)
share: worker processes that compile and run one case at a time (a crash or
a hang costs one case, not the run), and the reading of their outcomes.

A script provides `all_cases()` (name -> case) and `run_case(case)` (-> dict
with `status` and `detail`), and calls `serve(all_cases, run_case)` when
started with `--worker`."""
import argparse
import collections
import json
import os
import queue
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor


def serve(all_cases, run_case) -> int:
    """A worker: reads case names on stdin; for each prints 'start NAME', then
    its result as JSON."""
    # The protocol goes out on a private copy of stdout; fd 1 itself goes to
    # stderr, so that whatever a case prints (Python or C++) cannot break it.
    protocol = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    cases = all_cases()
    for line in sys.stdin:
        name = line.strip()
        print(f"start {name}", file=protocol, flush=True)
        result = run_case(cases[name])
        print(json.dumps(dict(result, name=name)), file=protocol, flush=True)
    return 0


class Worker:
    """A worker process (`script --worker`); restarted after a crash or a
    timeout. Its lines are read by a thread into a queue (select() on a
    buffered pipe misses lines already read into the buffer)."""

    def __init__(self, script: str, env):
        self.script = script
        self.env = env
        self.proc = None
        self.lines = None

    def _start(self):
        self.proc = subprocess.Popen([sys.executable, self.script, "--worker"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                                     env=self.env, bufsize=1)
        self.lines = queue.Queue()

        def pump(stream, lines):
            for line in stream:
                lines.put(line)
            lines.put(None)   # the worker exited
        threading.Thread(target=pump, args=(self.proc.stdout, self.lines), daemon=True).start()

    def run(self, name: str, timeout: float) -> dict:
        if self.proc is None or self.proc.poll() is not None:
            self._start()
        self.proc.stdin.write(name + "\n")
        self.proc.stdin.flush()
        wait = timeout + 60   # a fresh worker first imports torch (and the cases)
        while True:
            try:
                line = self.lines.get(timeout=wait)
            except queue.Empty:
                self.proc.kill()
                self.proc.wait()
                return dict(status="crash", detail=f"timed out after {timeout:.0f} s")
            if line is None:
                code = self.proc.wait()
                return dict(status="crash", detail=f"worker died (exit status {code})")
            if line.startswith("start "):
                wait = timeout
                continue
            result = json.loads(line)
            result.pop("name", None)
            return result

    def close(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.stdin.close()
            self.proc.wait()


def run_all(script: str, names, jobs: int, timeout: float) -> dict:
    """name -> result, `jobs` workers of `script` at a time, builds in a fresh
    cache keyed on their IR (each case is built once: the structural warm-start
    index would only add entries no later case reads),
    one thread per compiled call."""
    cache = tempfile.mkdtemp(prefix="cuvil-conformance-")
    env = dict(os.environ, CUVIL_CACHE_DIR=cache, CUVIL_CACHE_STRUCTURAL="0", CUVIL_NUM_THREADS="1",
               PYTHONWARNINGS="ignore")
    workers = [Worker(script, env) for _ in range(jobs)]
    free = list(workers)
    results: dict = {}
    lock = threading.Lock()
    t0 = time.time()

    def one(name):
        with lock:
            w = free.pop()
        try:
            r = w.run(name, timeout)
        finally:
            with lock:
                free.append(w)
        with lock:
            results[name] = r
            if len(results) % 50 == 0 or len(results) == len(names):
                counts = collections.Counter(v["status"] for v in results.values())
                print(f"{len(results)}/{len(names)} in {time.time() - t0:.0f} s: {dict(counts)}", flush=True)
        return r

    with ThreadPoolExecutor(jobs) as pool:
        list(pool.map(one, names))
    for w in workers:
        w.close()
    shutil.rmtree(cache, ignore_errors=True)
    return results


def first_line(text: str) -> str:
    return text.strip().splitlines()[0][:300] if text.strip() else ""


def reason(detail: str) -> str:
    """A failure's message with its case-specific parts (names, numbers) blurred."""
    text = re.sub(r"'[^']*'|\"[^\"]*\"", "'…'", detail)
    text = re.sub(r"\d+(\.\d+)?(e[-+]?\d+)?", "N", text)
    return text[:160]


def failures_by_reason(results: dict) -> list:
    """Markdown lines: the failures grouped by (status, blurred reason), most first."""
    reasons = collections.defaultdict(list)
    for n, r in sorted(results.items()):
        if r["status"] != "pass":
            reasons[(r["status"], reason(r["detail"]))].append(n)
    lines = []
    for (status, why), names in sorted(reasons.items(), key=lambda kv: -len(kv[1])):
        shown = ", ".join(f"`{n}`" for n in names[:6]) + (f" and {len(names) - 6} more" if len(names) > 6 else "")
        lines.append(f"- **{status}** ({len(names)}): {why or '(no message)'} — {shown}")
    return lines


def host() -> str:
    import platform
    return next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")),
                platform.processor())


def per_op_table(by_op: dict, columns) -> list:
    """Markdown lines: a table of each op's case count and outcomes."""
    lines = ["", "## Per op", "", "| op | cases | " + " | ".join(columns) + " |", "|---" * (len(columns) + 2) + "|"]
    for op, c in by_op.items():
        lines.append(f"| {op} | {sum(c.values())} | " + " | ".join(str(c.get(k, 0)) for k in columns) + " |")
    return lines


def arguments(doc: str, argv, timeout: float) -> argparse.Namespace:
    """A conformance script's command line (--worker, -k, --jobs, --timeout)."""
    p = argparse.ArgumentParser(description=doc.splitlines()[0])
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("-k", default="", help="only cases whose name contains this (nothing is written)")
    p.add_argument("--jobs", type=int, default=1)
    p.add_argument("--timeout", type=float, default=timeout, help="seconds per case")
    return p.parse_args(argv)


def print_selected(names, results: dict, summary: dict) -> None:
    """A -k run's outcomes (nothing is written)."""
    for n in names:
        print(f"{results[n]['status']:<12} {n}  {results[n]['detail']}")
    print(json.dumps({k: v for k, v in summary.items() if k != "by_op"}, indent=1))
