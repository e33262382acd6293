"""Mutation campaign over `cuvil-opt`, with the passes of each test's RUN lines.

For every IR test under test/, each `// RUN: cuvil-opt ...` line gives a pass
pipeline. The campaign takes a piece of that test's input (split at `// -----`),
mutates it (token-aware: numbers, types, dims, lines, dictionary tokens), and
runs cuvil-opt on it with that RUN line's arguments. A bad input must end in a
diagnostic (exit 1); a signal, or LLVM's crash banner, is a finding. Findings
are written, deduplicated by the crashing frames, to OUT/crashes/<signature>/
(input.mlir, command, stderr). The libFuzzer target (scripts/fuzz.sh) covers
parsing and every pass in-process; this one reaches the pipelines and options
the tests actually use, on the normal build.

    python scripts/fuzz_cuvil_opt.py --seconds 600 [--cuvil-opt build/bin/cuvil-opt] [--out build-fuzz/cuvil-opt]
"""
from __future__ import annotations

import argparse
import hashlib
import random
import re
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fuzz_seeds import ROOT, TOKEN, pieces  # noqa: E402

NUMBER = re.compile(r"(?<![\w.])-?\d+(?![\w.])")
TYPE = re.compile(r"\b(?:f16|bf16|f32|f64|i1|i8|i16|i32|i64|index)\b")
DIM = re.compile(r"(?<=[<x])(?:\d+|\?)(?=x)")
INTERESTING_NUMBERS = ["0", "1", "-1", "2", "3", "7", "64", "-2147483648", "2147483647",
                       "9223372036854775807", "4294967296", "100000000"]
TYPES = ["f16", "bf16", "f32", "f64", "i1", "i8", "i32", "i64", "index"]
# Pieces run one at a time; diagnostics are not checked, only crashes.
DROPPED_WORDS = {"-split-input-file", "--split-input-file", "-verify-diagnostics",
                 "--verify-diagnostics", "2>&1"}
CRASH_MARKERS = ("PLEASE submit a bug report", "Stack dump:", "Assertion `", "LLVM ERROR:")
FRAME = re.compile(r"#\d+ 0x[0-9a-f]+ (?:in )?(\S+)")


def run_lines(path: Path) -> list[list[str]]:
    """cuvil-opt argument lists of the file's RUN lines (with %s where the input goes)."""
    text = path.read_text()
    joined = re.sub(r"\\\n//\s*RUN:", " ", text)  # continued RUN lines
    commands = []
    for line in re.findall(r"//\s*RUN:(.*)", joined):
        for stage in line.split("|"):
            stage = (stage.replace("%s", "@INPUT@").replace("%S", str(path.parent))
                     .replace("%transform_scripts", str(ROOT / "transform_scripts")))
            words = shlex.split(stage.strip())
            # Only the stages that read the test's own input: that is what gets mutated.
            if "cuvil-opt" in words and "@INPUT@" in words:
                words = words[words.index("cuvil-opt") + 1:]
                commands.append([w for w in words if w not in DROPPED_WORDS])
    return commands


def mutate(text: str, rng: random.Random, dictionary: list[str]) -> str:
    for _ in range(rng.randint(1, 3)):
        choice = rng.randrange(8)
        lines = text.splitlines()
        if choice == 0 and (spans := list(NUMBER.finditer(text))):
            m = rng.choice(spans)
            text = text[:m.start()] + rng.choice(INTERESTING_NUMBERS) + text[m.end():]
        elif choice == 1 and (spans := list(TYPE.finditer(text))):
            m = rng.choice(spans)
            text = text[:m.start()] + rng.choice(TYPES) + text[m.end():]
        elif choice == 2 and (spans := list(DIM.finditer(text))):
            m = rng.choice(spans)
            text = text[:m.start()] + rng.choice(["?", "0", "1", "3", "16"]) + text[m.end():]
        elif choice == 3 and len(lines) > 1:
            del lines[rng.randrange(len(lines))]
            text = "\n".join(lines)
        elif choice == 4 and lines:
            i = rng.randrange(len(lines))
            lines.insert(rng.randrange(len(lines) + 1), lines[i])
            text = "\n".join(lines)
        elif choice == 5 and len(lines) > 1:
            i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
            lines[i], lines[j] = lines[j], lines[i]
            text = "\n".join(lines)
        elif choice == 6 and (spans := list(TOKEN.finditer(text))):
            m = rng.choice(spans)
            text = text[:m.start()] + rng.choice(dictionary) + text[m.end():]
        elif text:
            i = rng.randrange(len(text))
            text = text[:i] + text[i + rng.randint(1, 8):]
    return text


def signature(stderr: str) -> str:
    frames = [f for f in FRAME.findall(stderr) if "llvm::sys::" not in f and "Signal" not in f]
    last_line = stderr.strip().splitlines()[-1] if stderr.strip() else "?"
    key = "\n".join(frames[:6]) or last_line
    return hashlib.sha1(key.encode()).hexdigest()[:12]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--cuvil-opt", default=str(ROOT / "build" / "bin" / "cuvil-opt"))
    parser.add_argument("--out", default=str(ROOT / "build-fuzz" / "cuvil-opt"))
    parser.add_argument("--seed", type=int, default=None)
    args = parser.parse_args()

    targets = []  # (piece, argument list)
    dictionary: set[str] = set()
    for path in sorted((ROOT / "test").rglob("*.mlir")):
        if "Output" in path.parts:
            continue
        commands = run_lines(path)
        for text in pieces(path):
            dictionary.update(TOKEN.findall(text))
            targets += [(text, command) for command in commands]
    if not targets:
        sys.exit("fuzz_cuvil_opt: no RUN lines with cuvil-opt found under test/")
    rng = random.Random(args.seed)
    words = sorted(dictionary)
    crashes = Path(args.out) / "crashes"
    seen: set[str] = {p.name for p in crashes.glob("*")} if crashes.exists() else set()
    runs = new = 0
    deadline = time.monotonic() + args.seconds
    with tempfile.TemporaryDirectory() as tmp:
        input_path = Path(tmp) / "input.mlir"
        while time.monotonic() < deadline:
            text, command = rng.choice(targets)
            mutant = mutate(text, rng, words)
            input_path.write_text(mutant)
            argv = [args.cuvil_opt] + [str(input_path) if w == "@INPUT@" else w for w in command]
            try:
                proc = subprocess.run(argv, capture_output=True, text=True, timeout=20)
            except subprocess.TimeoutExpired:
                proc = subprocess.CompletedProcess(argv, -999, "", "timeout (20 s)")
            except OSError:  # cuvil-opt being relinked: wait for it
                time.sleep(1)
                continue
            runs += 1
            crashed = proc.returncode < 0 or any(m in proc.stderr for m in CRASH_MARKERS)
            if not crashed:
                continue
            sig = signature(proc.stderr)
            if sig in seen:
                continue
            seen.add(sig)
            new += 1
            folder = crashes / sig
            folder.mkdir(parents=True, exist_ok=True)
            (folder / "input.mlir").write_text(mutant)
            (folder / "command").write_text(shlex.join(["cuvil-opt", "input.mlir"] + [
                w for w in command if w != "@INPUT@"]) + "\n")
            (folder / "stderr").write_text(proc.stderr[-20000:])
            print(f"crash {sig}: rc {proc.returncode}: {proc.stderr.strip().splitlines()[0][:160]}",
                  flush=True)
    print(f"fuzz_cuvil_opt: {runs} runs over {len(targets)} (input, RUN line) pairs, "
          f"{new} new crash signatures, {len(seen)} in {crashes}")
    return 1 if new else 0


if __name__ == "__main__":
    sys.exit(main())
