"""A fixed sample of ONNX's node test cases, rerun in CI against the outcomes
the full run recorded (scripts/onnx_conformance.py -> conformance/onnx/).

Cases that passed must still pass. Cases that failed must still fail the
way they did, by a named error (never a crash or a raw traceback from deep
inside): a case that now passes means the record is stale, rerun the script."""
import pytest

from conftest import ROOT, load_script, recorded_sample

pytest.importorskip("onnx")
RECORD = ROOT / "conformance" / "onnx" / "results.json"
SAMPLE_PASSING, SAMPLE_FAILING = 40, 12


@pytest.fixture(scope="module")
def conformance():
    script = load_script("onnx_conformance")
    return script, script.all_cases()


@pytest.mark.parametrize("name,recorded", recorded_sample(RECORD, True, SAMPLE_PASSING))
def test_recorded_pass_still_passes(conformance, name, recorded):
    script, cases = conformance
    result = script.run_case(cases[name])
    assert result["status"] == "pass", result


@pytest.mark.parametrize("name,recorded", recorded_sample(RECORD, False, SAMPLE_FAILING))
def test_recorded_failure_still_fails_by_name(conformance, name, recorded):
    script, cases = conformance
    result = script.run_case(cases[name])
    assert result["status"] == recorded, (result, "rerun scripts/onnx_conformance.py if this is an improvement")
