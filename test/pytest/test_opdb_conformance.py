"""A fixed sample of PyTorch's op database cases, rerun in CI against the
outcomes the full run recorded (scripts/opdb_conformance.py -> conformance/opdb/).

Cases that passed must still pass. Cases that failed must still fail the
way they did (never a crash): a case that now passes means the record is
stale, rerun the script."""
import importlib.util
import json

import pytest

from conftest import ROOT

pytest.importorskip("expecttest")   # torch's op database imports it
RECORD = ROOT / "conformance" / "opdb" / "results.json"
SAMPLE_PASSING, SAMPLE_FAILING = 40, 12


def _script():
    spec = importlib.util.spec_from_file_location("opdb_conformance", ROOT / "scripts" / "opdb_conformance.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _sample(passing, count):
    cases = json.loads(RECORD.read_text())["cases"]
    names = sorted(n for n, c in cases.items() if (c["status"] == "pass") == passing
                   and c["status"] not in ("crash", "eager-error"))
    step = max(1, len(names) // count)
    return [(n, cases[n]["status"]) for n in names[::step][:count]]


@pytest.fixture(scope="module")
def conformance():
    # Each test has its own cache (conftest): the cases' modules, all of one
    # class, cannot find each other's builds.
    return _script()


@pytest.mark.parametrize("name,recorded", _sample(True, SAMPLE_PASSING))
def test_recorded_pass_still_passes(conformance, name, recorded):
    result = conformance.run_case(conformance.all_cases()[name])
    assert result["status"] == "pass", result


@pytest.mark.parametrize("name,recorded", _sample(False, SAMPLE_FAILING))
def test_recorded_failure_still_fails_the_same_way(conformance, name, recorded):
    result = conformance.run_case(conformance.all_cases()[name])
    assert result["status"] == recorded, (result, "rerun scripts/opdb_conformance.py if this is an improvement")
