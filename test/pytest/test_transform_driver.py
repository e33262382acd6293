"""cuvil.transform (apply scripts, report, errors), the Python schedule
builder (same IR as the text script), and cuvil-opt giving the same result."""
import subprocess
from pathlib import Path

import pytest

from cuvil import transform
from cuvil.errors import TransformError
from cuvil.ir import Context, Module
from cuvil.transform_builder import ScheduleBuilder

INPUTS = Path(__file__).resolve().parents[1] / "transform" / "Inputs"
PAYLOAD = (INPUTS / "matmul_bias_relu.mlir").read_text()
TEXT_SCRIPT = (INPUTS / "fuse_matmul_epilogue.mlir").read_text()


def python_script() -> str:
    with ScheduleBuilder("fuse_matmul_epilogue") as s:
        epilogue = s.match(s.root, "linalg.generic")
        matmul = s.producer_of_operand(epilogue, 0)
        _, loop = s.tile_using_forall(epilogue, [8, 32])
        s.fuse_into(matmul, loop)
        s.vectorize_children(s.match(s.root, "func.func"))
    return s.text


def apply_to_payload(script: str, entry="fuse_matmul_epilogue", params=None):
    with Context():
        module = Module.parse(PAYLOAD)
        report = transform.apply(module, script, entry=entry, params=params)
        return str(module), report


def test_python_and_text_scripts_are_the_same_schedule():
    with Context():
        from_python = str(Module.parse(python_script()))
        from_text = str(Module.parse(TEXT_SCRIPT))
    assert from_python == from_text


def test_python_and_text_scripts_give_identical_payload_ir():
    by_python, _ = apply_to_payload(python_script())
    by_text, report = apply_to_payload(TEXT_SCRIPT)
    assert by_python == by_text
    assert "scf.forall" in by_text and "linalg.matmul" not in by_text
    assert report.matched == {"linalg.fill": 1, "linalg.matmul": 1, "linalg.generic": 1}
    assert report.remaining == {}


def test_cuvil_opt_gives_the_same_result_as_the_driver(tmp_path):
    by_driver, _ = apply_to_payload(TEXT_SCRIPT)
    out = subprocess.run(
        ["cuvil-opt", str(INPUTS / "matmul_bias_relu.mlir"),
         f"--transform-preload-library=transform-library-paths={INPUTS / 'fuse_matmul_epilogue.mlir'}",
         "--transform-interpreter=entry-point=fuse_matmul_epilogue"],
        capture_output=True, text=True, check=True).stdout
    with Context():
        assert str(Module.parse(out)) == by_driver


def test_shipped_scripts_load_by_name():
    assert "@__transform_main" in transform.load("matmul_cpu")
    with pytest.raises(TransformError, match="no transform script named 'nope'"):
        transform.load("nope")


def test_script_that_does_not_parse_reports_location():
    with pytest.raises(TransformError, match=r"does not parse:\n.*loc"):
        apply_to_payload("module attributes {transform.with_named_sequence} {\n"
                         "  transform.named_sequence @x(%r: !transform.any_op) {\n"
                         "    transform.not_an_op %r\n  }\n}")


def test_missing_entry_is_named():
    with pytest.raises(TransformError, match="no named sequence @other"):
        apply_to_payload(TEXT_SCRIPT, entry="other")


def test_failing_transform_reports_the_diagnostic():
    failing = TEXT_SCRIPT.replace("%epilogue[0]", "%epilogue[7]")
    with pytest.raises(TransformError, match="fuse_matmul_epilogue failed"):
        apply_to_payload(failing)


def test_params_override_tile_sizes():
    script = transform.load("matmul_cpu")
    assert "// param: TM" in script
    overridden = transform.substitute_params(script, {"TM": 32})
    assert "transform.param.constant 32 : i64 -> !transform.param<i64>   // param: TM" in overridden
    with pytest.raises(TransformError, match="no parameters named"):
        transform.substitute_params(script, {"TILE": 3})
