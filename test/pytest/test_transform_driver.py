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


def apply_shipped(name, payload=PAYLOAD, entry="__transform_main", params=None):
    with Context():
        module = Module.parse(payload)
        report = transform.apply(module, transform.load(name), entry=entry, params=params)
        return str(module), report


def test_shipped_scripts_declare_their_parameters():
    assert transform.parameters(transform.load("matmul_cpu")) == {
        "TM": 64, "TN": 256, "TK": 256, "RM": 4, "RN": 64, "TNP": 4, "TKP": 768,
        "TNP_MID": 2, "TM_MID": 128, "TM_TALL": 96, "RM_TALL": 6}
    assert transform.parameters(transform.load("batch_matmul_cpu")) == {"TM": 64, "RM": 4, "RN": 64}
    assert transform.parameters(transform.load("elementwise_cpu"), "cuvil_elementwise") == {
        "EW_ROWS": 8, "EW_VEC": 64, "RED_ROWS": 8, "PAR_MIN_COLS": 768}
    assert transform.parameters(transform.load("matmul_bias_relu_fusion")) == {
        "TM": 64, "TN": 256, "TK": 256, "RM": 4, "RN": 64}
    assert transform.parameters(transform.load("conv_cpu"), "cuvil_conv_cpu") == {}
    assert transform.parameters(TEXT_SCRIPT, "fuse_matmul_epilogue") == {}


def test_params_bind_the_schedule_arguments_not_the_text():
    """params= gives the IR of the script whose default is that value; the
    script text is the same before and after."""
    script = transform.load("matmul_cpu")
    by_param, report = apply_shipped("matmul_cpu", params={"TM": 32})
    assert report.params == {**transform.parameters(script), "TM": 32}
    assert transform.load("matmul_cpu") == script
    edited = script.replace("%tm = transform.param.constant 64", "%tm = transform.param.constant 32")
    assert edited != script
    with Context():
        module = Module.parse(PAYLOAD)
        transform.apply(module, edited)
        assert str(module) == by_param
    by_default, report = apply_shipped("matmul_cpu")
    assert by_default != by_param and report.params["TM"] == 64
    assert "scf.forall" in by_param and "linalg.matmul" not in by_param


def test_unknown_or_invalid_params_are_refused():
    with pytest.raises(TransformError, match=r"no parameters named \['TILE'\]; @__transform_main has \['RM', "):
        apply_shipped("matmul_cpu", params={"TILE": 3})
    with pytest.raises(TransformError, match="parameter TM must be an integer, got 3.5"):
        apply_shipped("matmul_cpu", params={"TM": 3.5})
    with pytest.raises(TransformError, match=r"no parameters named \['TM'\]"):
        apply_to_payload(TEXT_SCRIPT, params={"TM": 32})
    with pytest.raises(TransformError, match="no named sequence @nope"):
        apply_shipped("matmul_cpu", entry="nope", params={"TM": 32})


SOFTMAX_PAYLOAD = (INPUTS / "softmax_13x100.mlir").read_text()


@pytest.mark.parametrize("name,entry,payload", [
    ("matmul_cpu", "__transform_main", PAYLOAD),
    ("batch_matmul_cpu", "__transform_main", PAYLOAD),
    ("elementwise_cpu", "cuvil_elementwise", SOFTMAX_PAYLOAD),
    ("matmul_bias_relu_fusion", "__transform_main", PAYLOAD)])
def test_cuvil_opt_runs_shipped_scripts_with_their_defaults(tmp_path, name, entry, payload):
    """The entry points run from cuvil-opt (their default parameters) as from
    the driver without params, and as from the driver binding the defaults."""
    by_driver, _ = apply_shipped(name, payload, entry)
    defaults = transform.parameters(transform.load(name), entry)
    by_binding, _ = apply_shipped(name, payload, entry, params=defaults)
    src = tmp_path / "payload.mlir"
    src.write_text(payload)
    out = subprocess.run(
        ["cuvil-opt", str(src),
         f"--transform-preload-library=transform-library-paths={transform.script_path(name)}",
         f"--transform-interpreter=entry-point={entry}"],
        capture_output=True, text=True, check=True).stdout
    with Context():
        assert str(Module.parse(out)) == by_driver == by_binding
