"""Seeds and a token dictionary for the in-tree fuzzers, from the IR tests.

Every `.mlir` file under test/ and transform_scripts/ is split at `// -----`
(as --split-input-file does); each piece, without its comment lines (RUN,
CHECK, expected-error), is one seed. The dictionary holds the op names,
attribute and type keywords those seeds use, so that mutations insert whole
tokens (libFuzzer's -dict=).

    python scripts/fuzz_seeds.py OUT_DIR      # writes OUT_DIR/seeds/*, OUT_DIR/mlir.dict
"""
from __future__ import annotations

import hashlib
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ("test", "transform_scripts")
TOKEN = re.compile(r"#?[a-z_][a-z0-9_]*(?:\.[a-z_][a-z0-9_]*)+|\b(?:tensor|memref|vector)<|"
                   r"\b(?:[fiu]\d+|bf16|index)\b|\b[a-z_]{3,}(?= =)")


def test_files() -> list[Path]:
    files = []
    for source in SOURCES:
        files += [p for p in sorted((ROOT / source).rglob("*.mlir")) if "Output" not in p.parts]
    return files


def pieces(path: Path) -> list[str]:
    out = []
    for chunk in path.read_text().split("// -----"):
        body = "\n".join(line for line in chunk.splitlines()
                         if not line.lstrip().startswith("//")).strip()
        if body:
            out.append(body + "\n")
    return out


def main(out_dir: str) -> int:
    out = Path(out_dir)
    seeds = out / "seeds"
    seeds.mkdir(parents=True, exist_ok=True)
    tokens: set[str] = set()
    count = 0
    for path in test_files():
        for text in pieces(path):
            name = hashlib.sha1(text.encode()).hexdigest()[:16]
            (seeds / name).write_text(text)
            tokens.update(TOKEN.findall(text))
            count += 1
    escaped = (t.replace("\\", "\\\\").replace('"', '\\"') for t in sorted(tokens))
    (out / "mlir.dict").write_text("".join(f'"{t}"\n' for t in escaped))
    print(f"fuzz seeds: {count} pieces of {len(test_files())} files, {len(tokens)} dictionary tokens")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "build-fuzz"))
