"""Groups the crash inputs a cuvil-fuzz campaign wrote, by where they crash.

Each input is rerun alone; the first frames of its stack below the
assertion/abort machinery name the crash. Prints one line per group (count,
whether Cuvil's code is on the stack, the frames, the smallest input) and
exits 1 when a group has Cuvil's code (lib/, include/, the generated
build-fuzz/include/) anywhere on its stack: a crash inside upstream MLIR that a
Cuvil pass led to is Cuvil's to guard. 0 when every crash is upstream MLIR's
alone (listed in fuzz/README.md).

    python scripts/fuzz_triage.py build-fuzz/bin/cuvil-fuzz build-fuzz/crashes [--json OUT]
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path

FRAME = re.compile(r"^\s+#\d+ 0x[0-9a-f]+ in (.+?)(?: (/\S+|\S+\.(?:cpp|h|c|inc))(?::\d+)*| \(/.*\))?$")
# Frames of the crash machinery, not of the crash: by function-name prefix
# (or the whole name), or by the library they are in.
NOISE_PREFIXES = ("__sanitizer", "fuzzer::", "__pthread_kill", "__assert", "llvm::sys::",
                  "llvm::report_fatal_error", "llvm::llvm_unreachable", "__libc_start", "__interceptor",
                  "__asan", "__ubsan", "std::__", "SignalHandler")
NOISE_NAMES = {"raise", "abort", "_start", "main", "LLVMFuzzerTestOneInput"}
ROOT = Path(__file__).resolve().parent.parent
CUVIL_SOURCES = tuple(str(ROOT / d) + "/" for d in ("lib", "include", "build-fuzz/include"))
ENV = dict(os.environ, ASAN_OPTIONS="detect_container_overflow=0:detect_leaks=0:symbolize=1")


def frames_of(binary: str, path: Path) -> tuple[list[str], bool, str]:
    """(the first frames naming the crash, whether Cuvil's code is on the
    stack, the crash kind) of rerunning `path`."""
    proc = subprocess.run([binary, str(path)], capture_output=True, text=True, timeout=120, env=ENV)
    out = proc.stderr
    kind = next((line.strip() for line in out.splitlines()
                 if "Assertion" in line or "ERROR: AddressSanitizer" in line
                 or "LLVM ERROR" in line or "deadly signal" in line), "no crash on rerun")
    frames, in_cuvil = [], False
    for line in out.splitlines():
        m = FRAME.match(line)
        if not m:
            continue
        function, location = m.group(1), m.group(2) or ""
        # Any frame in Cuvil's code counts, even one the grouping skips.
        in_cuvil |= location.startswith(CUVIL_SOURCES) or "cuvil::" in function
        name = function.split("(")[0]
        if name in NOISE_NAMES or function.startswith(NOISE_PREFIXES) or "libc.so" in line:
            continue
        frames.append(function[:160])
    return frames[:4], in_cuvil, kind[:200]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("binary")
    parser.add_argument("crash_dir")
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    groups: dict[tuple[str, ...], list[Path]] = {}
    kinds: dict[tuple[str, ...], str] = {}
    cuvil_groups: dict[tuple[str, ...], bool] = {}
    for path in sorted(Path(args.crash_dir).iterdir()):
        if not path.is_file():
            continue
        frames, in_cuvil, kind = frames_of(args.binary, path)
        key = tuple(frames) or (kind,)
        groups.setdefault(key, []).append(path)
        kinds[key] = kind
        cuvil_groups[key] = cuvil_groups.get(key, False) or in_cuvil
    ours = 0
    report = []
    for key, paths in sorted(groups.items(), key=lambda kv: -len(kv[1])):
        in_cuvil = cuvil_groups[key]
        ours += in_cuvil
        smallest = min(paths, key=lambda p: p.stat().st_size)
        report.append({"count": len(paths), "cuvil": in_cuvil, "kind": kinds[key],
                       "frames": list(key), "smallest": str(smallest)})
        print(f"{len(paths):4d}  {'CUVIL' if in_cuvil else 'mlir '}  {kinds[key]}\n"
              + "".join(f"        {f}\n" for f in key) + f"        e.g. {smallest}")
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1))
    print(f"{sum(len(p) for p in groups.values())} crash inputs, {len(groups)} groups, "
          f"{ours} in Cuvil's code")
    return 1 if ours else 0


if __name__ == "__main__":
    sys.exit(main())
