"""Text that crashes upstream MLIR 22.1.8's parser (the fuzzer's findings,
test/upstream-crashes/) is refused with a location before it is parsed, in
the import path and in transform scripts; well-formed IR never trips a guard."""
import re
import subprocess
import sys
from pathlib import Path

import pytest

from cuvil import transform
from cuvil.errors import CompileError, TransformError
from cuvil.parser_guards import find_parser_crash

ROOT = Path(__file__).resolve().parents[2]
REPRODUCERS = sorted((ROOT / "test" / "upstream-crashes").glob("*.mlir"))


def _body(path: Path) -> str:
    return "".join(line + "\n" for line in path.read_text().splitlines()
                   if not line.startswith("//"))


@pytest.mark.parametrize("path", REPRODUCERS, ids=lambda p: p.stem)
def test_each_reproducer_is_refused(path):
    assert find_parser_crash(_body(path)) is not None


def test_reproducers_exist():
    assert len(REPRODUCERS) >= 5


def test_well_formed_ir_passes_every_guard():
    files = [p for p in list((ROOT / "test").rglob("*.mlir")) + list((ROOT / "transform_scripts").glob("*.mlir"))
             if "upstream-crashes" not in p.parts and "Output" not in p.parts]
    assert len(files) > 30
    # Each `// -----` piece is parsed on its own (--split-input-file).
    tripped = {f"{p}#{i}": find_parser_crash(piece) for p in files
               for i, piece in enumerate(p.read_text().split("// -----"))}
    assert not {k: v for k, v in tripped.items() if v}


def test_the_fuzzers_original_input_is_refused_where_it_crashed():
    text = ("func.func @f(%y: tensor<4x8xf32>, %e: tensor<8x4xf32>) -> tensor<8x4xf32> {\n"
            "  %t = linalg.transpose ins(%y : tensor<4x8xf32>) outs(%e : tensor<8x4xf32>) "
            "permutation = [0, func.func\n}\n")
    line, column, what = find_parser_crash(text)
    assert (line, column) == (2, 78) and "permutation" in what


def test_duplicate_symbols_in_a_transform_module_are_refused():
    text = (ROOT / "test" / "upstream-crashes" / "transform-duplicate-symbol.mlir").read_text()
    line, _, what = find_parser_crash(text)
    assert "@a defined twice" in what and line == 13
    assert find_parser_crash("func.func private @a()\nfunc.func private @a()\n") is None  # the verifier's


def test_transform_script_is_refused_not_aborted():
    script = ("module attributes {transform.with_named_sequence} {\n"
              "  transform.named_sequence @__transform_main(%r: !transform.any_op) {\n"
              "    transform.yield\n  }\n"
              "  func.func @g() { linalg.generic{iterator_types=[3]} }\n}\n")
    with pytest.raises(TransformError, match=r"5:\d+: an `iterator_types` list"):
        transform.parameters(script)


def test_import_path_refuses_with_a_reproducer(tmp_path, monkeypatch):
    from cuvil import raising
    from cuvil.ir import Context
    monkeypatch.setenv("CUVIL_REPRO_DIR", str(tmp_path))
    with Context() as ctx, pytest.raises(CompileError) as info:
        raising.parse("func.func @f() {\n  linalg.sub<1>\n}\n", ctx)
    assert "2:3: linalg op properties" in str(info.value)
    assert re.search(r"cuvil-opt \S+\.mlir", str(info.value))


def test_unguarded_parse_really_aborts():
    # The reason for the guards: the same text through the bindings, in a
    # child process, takes the process down.
    code = "from cuvil.ir import Context, Module\nwith Context():\n    Module.parse('linalg.sub<1>')\n"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode < 0, (proc.returncode, proc.stderr[-500:])


def test_nesting_deep_enough_to_overflow_the_parser_is_refused():
    deep = "func.func @f() attributes {a = " + "[" * 5000 + "]" * 5000 + "} {\n  return\n}\n"
    line, _, what = find_parser_crash(deep)
    assert line == 1 and "nested more than" in what
    # Real IR nests a few levels; brackets in strings do not count.
    assert find_parser_crash('func.func @g() attributes {s = "' + "[" * 5000 + '"} {\n  return\n}\n') is None


def test_generic_form_passes_the_guards():
    # Modules with tm_tensor ops cross from torch-mlir in the generic form:
    # properties are dictionaries of `array<...>` values.
    text = ('%1 = "linalg.transpose"(%0, %e) <{permutation = array<i64: 1, 0>}> ({\n'
            '%2 = "linalg.broadcast"(%0, %f) <{dimensions = array<i64: 0>}> ({\n')
    assert find_parser_crash(text) is None
