"""A fixed sample of ONNX's node test cases, rerun in CI against the outcomes
the full run recorded (scripts/onnx_conformance.py -> conformance/onnx/).

Cases that passed must still pass. Cases that failed must still fail the
way they did, by a named error (never a crash or a raw traceback from deep
inside): a case that now passes means the record is stale, rerun the script."""
import importlib.util
import json

import pytest

from conftest import ROOT

pytest.importorskip("onnx")
RECORD = ROOT / "conformance" / "onnx" / "results.json"
SAMPLE_PASSING, SAMPLE_FAILING = 40, 12


def _script():
    spec = importlib.util.spec_from_file_location("onnx_conformance", ROOT / "scripts" / "onnx_conformance.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _sample(status_wanted, count):
    cases = json.loads(RECORD.read_text())["cases"]
    names = sorted(n for n, c in cases.items() if (c["status"] == "pass") == status_wanted
                   and c["status"] != "crash")
    step = max(1, len(names) // count)
    return [(n, cases[n]["status"]) for n in names[::step][:count]]


@pytest.fixture(scope="module")
def conformance():
    script = _script()
    return script, script.all_cases()


@pytest.mark.parametrize("name,recorded", _sample(True, SAMPLE_PASSING))
def test_recorded_pass_still_passes(conformance, name, recorded):
    script, cases = conformance
    result = script.run_case(cases[name])
    assert result["status"] == "pass", result


@pytest.mark.parametrize("name,recorded", _sample(False, SAMPLE_FAILING))
def test_recorded_failure_still_fails_by_name(conformance, name, recorded):
    script, cases = conformance
    result = script.run_case(cases[name])
    assert result["status"] == recorded, (result, "rerun scripts/onnx_conformance.py if this is an improvement")
